package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/eval"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
)

func runEvalCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// `vigil eval --reference` (what make test runs, through this test): every
// reference trajectory passes, every wrong one fails, and the scorecard
// reports every scenario.
func TestEvalReferenceCLI(t *testing.T) {
	all, err := eval.LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	wrong := 0
	for _, s := range all {
		wrong += len(s.Wrong)
	}
	out, errOut, err := runEvalCmd(t, "eval", "--reference")
	if err != nil {
		t.Fatalf("eval --reference: %v\n%s", err, errOut)
	}
	for _, want := range []string{"| host-disk-full-log | host | fix granted | 1.00 | true |", "| k8s-hpa-max |",
		fmt.Sprintf("Wrong trajectories failing as they must: %d/%d", wrong, wrong), "**Total: pass@1 1.00, pass@k 1.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("scorecard lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "] host-disk-full-log run 1/1: pass") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	list, _, err := runEvalCmd(t, "eval", "--list")
	if err != nil || strings.Count(list, "\n") < 30 || !strings.Contains(list, "herring-backup-load") {
		t.Errorf("eval --list: %v\n%s", err, list)
	}
	if _, _, err := runEvalCmd(t, "eval", "--reference", "--only", "no-such-scenario"); err == nil || !strings.Contains(err.Error(), "no scenario named") {
		t.Errorf("unknown scenario: %v", err)
	}
}

// A configured model is driven through the real go-openai client (here a
// scripted OpenAI-compatible server replaying the reference turns); the
// judge scores beside the grade; prices give a cost; --compare finds a
// regression between two scorecards.
func TestEvalModelJudgeAndCompare(t *testing.T) {
	all, err := eval.LoadBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	scs, err := eval.Select(all, []string{"host-disk-full-log"})
	if err != nil {
		t.Fatal(err)
	}
	model := modeltest.New(t)
	for _, turn := range scs[0].Reference {
		if turn.Answer != "" {
			model.Script(modeltest.Text(turn.Answer))
			continue
		}
		var calls []modeltest.ToolCall
		for _, c := range turn.Calls {
			calls = append(calls, modeltest.Call(c.Tool, c.JSON()))
		}
		model.Script(modeltest.Calls(calls...))
	}
	judge := modeltest.New(t)
	judge.Default(modeltest.Text(`Score: {"root_cause": 3, "evidence": 2, "explanation": 3, "notes": "precise"}`))

	dir := t.TempDir()
	cfg := filepath.Join(dir, "vigil.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `llm: {base_url: %q, model: gpt-4o-mini, max_retries: 1}
eval:
  judge: {base_url: %q, model: judge-1}
  prices: [{model: gpt-4o-mini, prompt_per_million: 1000, completion_per_million: 2000}]
`, model.URL(), judge.URL()), 0o600); err != nil {
		t.Fatal(err)
	}
	newJSON := filepath.Join(dir, "new.json")
	_, errOut, err := runEvalCmd(t, "eval", "--config", cfg, "--only", "host-disk-full-log", "--json", newJSON)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, errOut)
	}
	sc, err := eval.ReadJSON(newJSON)
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Scenarios[0]
	if !s.PassK || s.PromptTokens == 0 || s.Cost <= 0 || sc.Model != "gpt-4o-mini" {
		t.Fatalf("scorecard: %+v", s)
	}
	if j := s.Results[0].Judge; j == nil || j.RootCause != 3 || j.Evidence != 2 || j.Explanation != 3 {
		t.Fatalf("judge: %+v", j)
	}
	if model.Remaining() != 0 {
		t.Errorf("%d scripted model turns unused", model.Remaining())
	}
	// A scorecard where it failed: comparing old (pass) to new (fail) is a
	// regression and exits 1 when the runs are enough to tell (10 of 10
	// against 0 of 10); one run against one is noise.
	write := func(path string, sc eval.Scorecard) {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.WriteJSON(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	failed := sc
	failed.Scenarios = append([]eval.ScenarioScore(nil), sc.Scenarios...)
	failed.Scenarios[0].Pass1, failed.Scenarios[0].PassK, failed.Scenarios[0].Reason = 0, false, "root_cause: missing"
	failed.Scenarios[0].Passes = 0
	oneRun := filepath.Join(dir, "one.json")
	write(oneRun, failed)
	if out, _, err := runEvalCmd(t, "eval", "--compare", newJSON, oneRun); err != nil || !strings.Contains(out, "noise     host-disk-full-log") {
		t.Fatalf("one run against one: err %v, out:\n%s", err, out)
	}
	failed.Scenarios[0].Runs = 10
	passed := sc
	passed.Scenarios = append([]eval.ScenarioScore(nil), sc.Scenarios...)
	passed.Scenarios[0].Runs, passed.Scenarios[0].Passes = 10, 10
	write(newJSON, passed)
	oldJSON := filepath.Join(dir, "old.json")
	write(oldJSON, failed)
	out, _, err := runEvalCmd(t, "eval", "--compare", newJSON, oldJSON)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(out, "REGRESSED host-disk-full-log") {
		t.Fatalf("compare: err %v, out:\n%s", err, out)
	}
	out, _, err = runEvalCmd(t, "eval", "--compare", oldJSON, newJSON)
	if err != nil || !strings.Contains(out, "improved  host-disk-full-log") {
		t.Fatalf("compare the other way: err %v, out:\n%s", err, out)
	}
}

// A model endpoint that fails makes the run an error, not a failure: the
// scorecard counts it apart and vigil eval exits 2. --min-pass exits 1
// when pass@1 is below it.
func TestEvalEndpointErrorAndMinPass(t *testing.T) {
	dir := t.TempDir()
	broken := modeltest.New(t)
	broken.Default(modeltest.Status(503))
	cfg := filepath.Join(dir, "vigil.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "llm: {base_url: %q, model: gpt-4o-mini, max_retries: -1}\n", broken.URL()), 0o600); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(dir, "s.json")
	_, errOut, err := runEvalCmd(t, "eval", "--config", cfg, "--only", "host-disk-full-log", "--json", js)
	var ee exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(errOut, "system failure") {
		t.Fatalf("endpoint down: err %v\n%s", err, errOut)
	}
	sc, err := eval.ReadJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Errors != 1 || sc.Scenarios[0].Errors != 1 || sc.Scenarios[0].Results[0].Error == "" {
		t.Fatalf("errors not reported apart: %+v", sc.Scenarios[0])
	}
	// A model that answers without investigating scores 0 and fails
	// --min-pass.
	lazy := modeltest.New(t)
	lazy.Default(modeltest.Text("All good.\nroot_cause: {entity: none, cause: nothing}"))
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "llm: {base_url: %q, model: gpt-4o-mini, max_retries: -1}\n", lazy.URL()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = runEvalCmd(t, "eval", "--config", cfg, "--only", "host-disk-full-log", "--min-pass", "0.5")
	if !errors.As(err, &ee) || ee.code != 1 || !strings.Contains(errOut, "below --min-pass") {
		t.Fatalf("min-pass: err %v\n%s", err, errOut)
	}
	if _, _, err := runEvalCmd(t, "eval", "--config", cfg, "--min-pass", "2"); err == nil || !strings.Contains(err.Error(), "--min-pass") {
		t.Fatalf("bad --min-pass: %v", err)
	}
}
