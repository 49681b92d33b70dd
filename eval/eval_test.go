package eval

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadAll(t *testing.T) []*Scenario {
	t.Helper()
	all, err := LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestReferenceTrajectories runs every shipped scenario's reference
// trajectory (it must pass) and every wrong one (it must fail, on the check
// it names) through the real agent, policy and tools.
func TestReferenceTrajectories(t *testing.T) {
	all := loadAll(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			r := Run(ctx, sc, NewScript(sc.Reference, "gpt-4o"), Options{}, 1)
			if !r.Grade.Pass {
				t.Errorf("reference failed: %s\nanswer: %s\ncalls: %+v", r.Grade.Reason(), r.Answer, r.Calls)
			}
			for _, w := range sc.Wrong {
				r := Run(ctx, sc, NewScript(w.Turns, "gpt-4o"), Options{}, 1)
				if r.Grade.Pass {
					t.Errorf("wrong trajectory %s passed", w.Name)
				} else if !slices.Contains(r.Grade.Failed, w.Fails) {
					t.Errorf("wrong trajectory %s failed %v, want %s: %s", w.Name, r.Grade.Failed, w.Fails, r.Grade.Reason())
				}
			}
		})
	}
}

// TestReferenceReportUpToDate regenerates eval/REFERENCE.md in memory and
// compares it with the file; VIGIL_UPDATE_REFERENCE=1 (make eval-reference)
// writes it instead.
func TestReferenceReportUpToDate(t *testing.T) {
	var b strings.Builder
	sc, err := WriteReferenceReport(context.Background(), &b, loadAll(t))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Failed() {
		t.Errorf("the reference suite fails: wrong trajectories that passed %v", sc.WrongPassed)
	}
	if os.Getenv("VIGIL_UPDATE_REFERENCE") == "1" {
		if err := os.WriteFile("REFERENCE.md", []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("REFERENCE.md")
	if err != nil {
		t.Fatalf("%v; run make eval-reference", err)
	}
	if string(have) != b.String() {
		t.Errorf("eval/REFERENCE.md is out of date; run make eval-reference (diff the file to see what changed)")
	}
}
