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

// The basis a change was shown against is the card's last line, bound by
// ChangeHash; a record whose basis and shown line disagree binds nothing,
// whichever of the two was altered.
func TestApprovalBindsTheBasis(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	basis := "the file as read at 2026-03-01 12:00:00 UTC, sha256 " + strings.Repeat("ab", 32)
	req := ApprovalRequest{
		Tool: "file_edit", Args: []byte(`{"action":"append","path":"/srv/x","target":"web-1","content":"y\n"}`),
		Command: "append 2 bytes to /srv/x", Requester: "U1", Channel: "slack:C1",
		Details: []ChangeDetail{{Label: "change", Value: "@@ -1 +1,2 @@\n x\n+y\n"}},
		Basis:   basis,
	}
	fresh := func() *Approval {
		t.Helper()
		a, err := NewApproval(req, now)
		if err != nil {
			t.Fatal(err)
		}
		a.Status = ApprovalApproved
		return a
	}
	a := fresh()
	if a.Basis != basis || len(a.Details) != 2 || a.Details[1] != (ChangeDetail{Label: BasisLabel, Value: basis}) {
		t.Fatalf("basis %q, details %q: want the basis shown as the last line", a.Basis, a.Details)
	}
	if !strings.HasSuffix(ChangeText(a.Command, a.Details), BasisLabel+":\n"+basis) {
		t.Fatal("the change text, which ChangeHash covers, does not end with the basis")
	}
	if err := CheckExecution(a, a.Tool, a.Args, LevelControlled, now); err != nil {
		t.Fatalf("untouched record: %v", err)
	}
	for name, alter := range map[string]func(*Approval){
		"basis field":            func(a *Approval) { a.Basis = strings.Replace(a.Basis, "ab", "cd", 1) },
		"basis cleared":          func(a *Approval) { a.Basis = "" },
		"basis line and hash":    func(a *Approval) { a.Details[1].Value = "other"; a.ChangeHash = ChangeHash(a.Command, a.Details) },
		"basis line dropped":     func(a *Approval) { a.Details = a.Details[:1]; a.ChangeHash = ChangeHash(a.Command, a.Details) },
		"change hash blanked":    func(a *Approval) { a.ChangeHash = "" },
		"basis moved to the top": func(a *Approval) { a.Details[0], a.Details[1] = a.Details[1], a.Details[0] },
	} {
		a := fresh()
		alter(a)
		if err := CheckExecution(a, a.Tool, a.Args, LevelControlled, now); !errors.Is(err, ErrBindingMismatch) {
			t.Errorf("%s: got %v, want ErrBindingMismatch", name, err)
		}
	}

	// Only the basis may carry its label, and a basis is one line shown
	// as written.
	bad := req
	bad.Details = append([]ChangeDetail{{Label: BasisLabel, Value: "forged"}}, req.Details...)
	if _, err := NewApproval(bad, now); !errors.Is(err, ErrInvalidApproval) {
		t.Errorf("a tool's line labelled as the basis: %v, want ErrInvalidApproval", err)
	}
	for _, b := range []string{"two\nlines", "password=hunter2hunter2"} {
		bad := req
		bad.Basis = b
		if _, err := NewApproval(bad, now); !errors.Is(err, ErrInvalidApproval) {
			t.Errorf("basis %q: %v, want ErrInvalidApproval", b, err)
		}
	}
}
