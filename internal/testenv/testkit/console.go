package testkit

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/adapters/console"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writers and readers.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Console drives the real console adapter through a pipe, as a person at a
// terminal (or other tooling) would.
type Console struct {
	*console.Adapter
	in  *io.PipeWriter
	out *SyncBuffer
}

// NewConsole returns a console adapter whose input the test writes and
// whose output the test reads. Start sets the stack's bot as its idler, so
// end of input waits for the bot as in `vigil chat`.
func NewConsole(user string) *Console {
	r, w := io.Pipe()
	out := &SyncBuffer{}
	c := &Console{in: w, out: out}
	c.Adapter = console.New(console.Config{In: r, Out: out, User: user})
	return c
}

// Send types one line.
func (c *Console) Send(t testing.TB, line string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := io.WriteString(c.in, line+"\n"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("console: send %q: %v", line, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("console: send %q: nobody read input for 10s", line)
	}
}

// Flush returns once the console has finished handling every line sent
// before it (handed it to the bot, or waited as "stop" and "approve" do).
// The console reads on while it handles a line and hands lines over one
// at a time, so of two empty lines (which it ignores), written one after
// the other, the second is read only after the line before them was
// handled.
func (c *Console) Flush(t testing.TB) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.in, "\n")
		if err == nil {
			_, err = io.WriteString(c.in, "\n")
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("console: flush: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("console: flush: the console did not finish its input for 30s")
	}
}

// Close ends the input (Ctrl-D).
func (c *Console) Close() { _ = c.in.Close() }

// Output is everything printed so far.
func (c *Console) Output() string { return c.out.String() }

// WaitFor waits until the output contains want, and returns the output.
func (c *Console) WaitFor(t testing.TB, want string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out := c.out.String()
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("console: %q did not appear within %s; output so far:\n%s", want, timeout, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var approveRe = regexp.MustCompile(`approve ([a-z0-9]+)`)

// ApprovalID waits for an approval prompt and returns its ID (the n-th
// prompt, counting from 1).
func (c *Console) ApprovalID(t testing.TB, n int, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m := approveRe.FindAllStringSubmatch(c.out.String(), -1)
		seen := map[string]bool{}
		var ids []string
		for _, g := range m {
			if !seen[g[1]] {
				seen[g[1]] = true
				ids = append(ids, g[1])
			}
		}
		if len(ids) >= n {
			return ids[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("console: approval prompt #%d did not appear within %s; output so far:\n%s", n, timeout, c.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
