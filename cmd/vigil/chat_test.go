package main

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// With no model configured, `vigil chat` (what `make run` starts) explains
// how to configure one and how to try the demo, and exits non-zero.
func TestChatWithoutModelExplains(t *testing.T) {
	root := newRootCmd()
	var stderr testkit.SyncBuffer
	root.SetArgs([]string{"chat", "--config", "../../configs/vigil.example.yaml"})
	root.SetIn(strings.NewReader(""))
	root.SetOut(io.Discard)
	root.SetErr(&stderr)
	err := root.ExecuteContext(context.Background())
	var ee exitError
	if !errors.As(err, &ee) || ee.code != exitNotConfigured {
		t.Fatalf("err = %v, want exit status %d (not configured)", err, exitNotConfigured)
	}
	for _, want := range []string{"VIGIL_LLM_BASE_URL", "llm.model", "--demo"} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("explanation lacks %q:\n%s", want, stderr.String())
		}
	}
}

var approvePrompt = regexp.MustCompile(`approve ([a-z0-9]+)`)

// The demo: a scripted model drives the real loop, policy and tools on this
// machine, ending in an approval the user answers.
func TestChatDemo(t *testing.T) {
	t.Setenv("VIGIL_LOG_LEVEL", "warn")
	inR, inW := io.Pipe()
	var out, stderr testkit.SyncBuffer
	root := newRootCmd()
	root.SetArgs([]string{"chat", "--config", "../../configs/vigil.example.yaml", "--demo"})
	root.SetIn(inR)
	root.SetOut(&out)
	root.SetErr(&stderr)
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(context.Background()) }()

	waitFor := func(what func(string) bool, desc string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if s := out.String(); what(s) {
				return s
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("demo: %s did not appear; output:\n%s\nstderr:\n%s", desc, out.String(), stderr.String())
		return ""
	}
	waitFor(func(s string) bool { return strings.Contains(s, "DEMO MODE") }, "the demo label")
	if _, err := io.WriteString(inW, "how is @localhost doing?\n"); err != nil {
		t.Fatal(err)
	}
	s := waitFor(func(s string) bool { return approvePrompt.MatchString(s) }, "an approval prompt")
	id := approvePrompt.FindStringSubmatch(s)[1]
	for _, want := range []string{"[ok] read exec on localhost: uptime", "change:    touch ",
		"metrics range", "no Prometheus datasource is configured"} {
		if !strings.Contains(s, want) {
			t.Fatalf("demo output lacks %q:\n%s", want, s)
		}
	}
	if _, err := io.WriteString(inW, "approve "+id+"\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(func(s string) bool { return strings.Contains(s, "vigil> Here is what I found") }, "the final answer")
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("vigil chat --demo exited with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("vigil chat --demo did not exit at end of input")
	}
	if !strings.Contains(out.String(), "[ok] control command on localhost: touch") {
		t.Fatalf("the approved change did not run:\n%s", out.String())
	}
}

// chatScript pipes a whole script into `vigil chat --demo` at once, as a
// shell pipe does, and returns what vigil printed once input ended.
func chatScript(t *testing.T, script string) string {
	t.Helper()
	t.Setenv("VIGIL_LOG_LEVEL", "warn")
	out, stderr, err := runCLI(t, script, "chat", "--config", "../../configs/vigil.example.yaml", "--demo")
	if err != nil {
		t.Fatalf("vigil chat --demo: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	return out
}

// "question\nstop\n" piped at once: the stop applies to that question's
// run, which therefore started; the question is never dropped unseen.
func TestChatScriptStopsTheQuestionBeforeIt(t *testing.T) {
	out := chatScript(t, "how is @localhost doing?\nstop\n")
	if strings.Contains(out, "Nothing is running here") {
		t.Fatalf("the stop found nothing to stop: the question was dropped or never ran:\n%s", out)
	}
	if !strings.Contains(out, "[ok] query get on localhost") && !strings.Contains(out, "Stopped") {
		t.Fatalf("the question did not run:\n%s", out)
	}
	if !strings.Contains(out, "Stopped") {
		t.Fatalf("the stop was not applied to the question's run:\n%s", out)
	}
}

// The demo driven by a script: a bare "approve" answers the only pending
// approval and says which one it answered.
func TestChatScriptApprovesTheOnlyPending(t *testing.T) {
	out := chatScript(t, "how is @localhost doing?\napprove\n")
	m := regexp.MustCompile(`note: approving ([a-z0-9]+), the only approval waiting: touch `).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("a bare approve did not say which approval it answered:\n%s", out)
	}
	for _, want := range []string{"approve " + m[1], "[ok] control command on localhost: touch", "vigil> Here is what I found"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
}

// With nothing pending, a bare "approve" says so and changes nothing.
func TestChatScriptApproveWithNothingPending(t *testing.T) {
	out := chatScript(t, "approve\ndeny\n")
	for _, verb := range []string{"approve", "deny"} {
		if !strings.Contains(out, "error: no approval is waiting, so there is nothing to "+verb+".") {
			t.Fatalf("a bare %s with nothing pending did not say so:\n%s", verb, out)
		}
	}
}
