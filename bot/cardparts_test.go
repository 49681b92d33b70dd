package bot

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
)

func TestCommandParts(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a && b; c | d", []string{"a", "&& b", "; c", "| d"}},
		{"systemctl restart nginx", nil},
		{"rm -rf /tmp/x || true & echo done", []string{"rm -rf /tmp/x", "|| true", "& echo done"}},
		{"export DB_PASSWORD=[REDACTED:password]$(touch$IFS/tmp/pwned)", []string{
			"export DB_PASSWORD=[REDACTED:password]$(touch$IFS/tmp/pwned)", "inside $(…): touch$IFS/tmp/pwned"}},
		{"echo `id` > /etc/motd", []string{"echo `id` > /etc/motd", "inside `…`: id"}},
		{"diff <(sort a) b", []string{"diff <(sort a) b", "inside <(…): sort a"}},
		{"write 77 bytes to /etc/cron.d/x", nil},
		{"if true; then", nil}, // does not parse
	}
	for _, c := range cases {
		if got := commandParts(c.in); !slices.Equal(got, c.want) {
			t.Errorf("commandParts(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The card's full change is the text the approval record hashed, so the
// hash a card prints beside an attachment is the record's.
func TestCardFullChangeIsTheBoundText(t *testing.T) {
	a, err := policy.NewApproval(policy.ApprovalRequest{
		Tool: "file_edit", Requester: "U1", Channel: "slack:C1", Command: "write 30 bytes to /etc/cron.d/x",
		Details: []policy.ChangeDetail{{Label: "new content", Value: "* * * * * root /tmp/x\n"}},
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	c := cardOf(a)
	sum := sha256.Sum256([]byte(c.FullChange()))
	if c.ChangeHash == "" || hex.EncodeToString(sum[:]) != c.ChangeHash {
		t.Fatalf("card hash %q is not the SHA-256 of its full change %q", c.ChangeHash, c.FullChange())
	}
}
