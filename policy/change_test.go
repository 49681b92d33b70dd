package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// An approval keeps a write's change lines for its card, redacted like the
// command, and they survive the store's JSON round trip.
func TestApprovalKeepsRedactedChangeDetails(t *testing.T) {
	a, err := NewApproval(ApprovalRequest{
		Tool: "alerts", Requester: "U1", Channel: "slack:C1", Args: json.RawMessage(`{"action":"silence"}`),
		Details: []ChangeDetail{
			{Label: "matchers", Value: `alertname="HighLatency"`},
			{Label: "comment", Value: "rotate password=hunter2secret after the deploy"},
		},
	}, aT0)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Details) != 2 || a.Details[0].Value != `alertname="HighLatency"` {
		t.Fatalf("details = %+v", a.Details)
	}
	if strings.Contains(a.Details[1].Value, "hunter2secret") {
		t.Fatalf("a secret in a detail was kept: %q", a.Details[1].Value)
	}
	raw, _ := json.Marshal(a)
	var back Approval
	if err := json.Unmarshal(raw, &back); err != nil || len(back.Details) != 2 || back.Details[1] != a.Details[1] {
		t.Fatalf("round trip = %+v, %v", back.Details, err)
	}
	if BindingHash(a.Tool, a.Args) != a.Hash {
		t.Fatal("details changed the binding")
	}
}
