package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

// The card shows ChangeText and its hash; the record binds both, so the
// text an approver read cannot be swapped under the approval.
func TestApprovalBindsTheShownChange(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a, err := NewApproval(ApprovalRequest{
		Tool: "file_edit", Args: []byte(`{"action":"write","path":"/etc/cron.d/x","target":"web-1","content":"* * * * * root /tmp/x\n"}`),
		Command: "write 22 bytes to /etc/cron.d/x", Requester: "U1", Channel: "slack:C1",
		Details: []ChangeDetail{{Label: "new content", Value: "* * * * * root /tmp/x\n"}},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	text := ChangeText(a.Command, a.Details)
	if !strings.Contains(text, "* * * * * root /tmp/x") || !strings.HasPrefix(text, a.Command) {
		t.Fatalf("change text %q", text)
	}
	sum := sha256.Sum256([]byte(text))
	if a.ChangeHash != hex.EncodeToString(sum[:]) {
		t.Fatalf("ChangeHash %s is not the SHA-256 of the change text", a.ChangeHash)
	}
	a.Status = ApprovalApproved
	if err := CheckExecution(a, a.Tool, a.Args, LevelControlled, now); err != nil {
		t.Fatalf("untouched record: %v", err)
	}
	a.Details[0].Value = "harmless\n"
	if err := CheckExecution(a, a.Tool, a.Args, LevelControlled, now); !errors.Is(err, ErrBindingMismatch) {
		t.Fatalf("altered display: got %v, want ErrBindingMismatch", err)
	}
}

// A command is redacted as a command on the record: the secret literal is
// masked, the substitution that runs is not.
func TestApprovalCommandRedactionKeepsWhatRuns(t *testing.T) {
	a, err := NewApproval(ApprovalRequest{
		Tool: "control", Requester: "U1", Channel: "slack:C1",
		Command: "export DB_PASSWORD=hunter2hunter2$(touch$IFS/tmp/pwned) && systemctl restart app",
	}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Command, "$(touch$IFS/tmp/pwned)") || strings.Contains(a.Command, "hunter2hunter2") {
		t.Fatalf("command on the record: %q", a.Command)
	}
}
