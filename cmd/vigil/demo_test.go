package main

import (
	"os"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/demo"
)

// `make demo` (vigil chat --demo --play) needs no input: it plays the
// question, the reads, the approval and the verification of the change by
// itself, in that order, and exits 0.
func TestChatDemoPlaysByItself(t *testing.T) {
	t.Setenv("VIGIL_LOG_LEVEL", "warn")
	marker := demo.New().MarkerFile
	os.Remove(marker)
	t.Cleanup(func() { os.Remove(marker) })
	out, stderr, err := runCLI(t, "", "chat", "--config", "../../configs/vigil.example.yaml", "--demo", "--play")
	if err != nil {
		t.Fatalf("vigil chat --demo --play: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	steps := []string{
		"DEMO MODE",
		"> how is @localhost doing?",
		"[ok] read exec on localhost: uptime", // a read, run at once
		"approval needed",                     // the change waits for a person
		"note: approving ",                    // the played "approve"
		"[ok] control command on localhost: touch " + marker, // the approved change
		"[ok] read exec on localhost: ls -l " + marker,       // its verification
		"vigil> Here is what I found",
	}
	rest := out
	for _, step := range steps {
		i := strings.Index(rest, step)
		if i < 0 {
			t.Fatalf("the played demo lacks %q after the steps before it:\n%s", step, out)
		}
		rest = rest[i+len(step):]
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved change did not happen: %v", err)
	}
}

// --play without --demo would play a script at a real model: refused.
func TestPlayNeedsDemo(t *testing.T) {
	_, _, err := runCLI(t, "", "chat", "--config", "../../configs/vigil.example.yaml", "--play")
	if err == nil || !strings.Contains(err.Error(), "--demo") {
		t.Fatalf("err = %v, want one naming --demo", err)
	}
}
