package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/eval"
)

// The claim check against the eval's reference trajectories: each runs
// through the real agent, policy and tools, its approved changes executed
// in the simulated world, and ends with a truthful answer. None of those
// answers may get the note that no change was made: a compound approved
// command (cp … && systemctl restart …) did every part of what it says.
func TestClaimCheckOnReferenceAnswers(t *testing.T) {
	all, err := eval.LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	checked := 0
	for _, sc := range all {
		r := eval.Run(ctx, sc, eval.NewScript(sc.Reference, "gpt-4o"), eval.Options{}, 1)
		if r.Status != "done" {
			t.Errorf("%s: the reference run ended %s: %s", sc.Name, r.Status, r.Answer)
			continue
		}
		if strings.Contains(r.Answer, "no change was made") {
			t.Errorf("%s: the reference answer got the claim note although its changes ran:\n%s", sc.Name, r.Answer)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("checked %d reference answers, want the eval's 30 or more", checked)
	}
}
