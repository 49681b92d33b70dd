package audit

import (
	"testing"
	"time"
)

// TestSandboxFieldInTheChain: a record's sandbox is covered by its hash, so
// editing it breaks the chain.
func TestSandboxFieldInTheChain(t *testing.T) {
	r := Record{Seq: 1, Time: time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC), Actor: "alice", Action: Executed, Tool: "read"}
	before := r.ComputeHash()
	r.Sandbox = "landlock (ABI 7, no network), bash"
	with := r.ComputeHash()
	if with == before {
		t.Fatal("the sandbox field is not covered by the hash")
	}
	chained := Chain(nil, r)
	chained.Sandbox = "none (policy.read_sandbox is off), bash"
	if err := VerifyChain([]Record{chained}); err == nil {
		t.Error("editing a record's sandbox does not break the chain")
	}
}
