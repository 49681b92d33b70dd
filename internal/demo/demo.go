// Package demo is the scripted model behind `vigil chat --demo`: it plays
// the model's side of one investigation so a newcomer sees the real loop,
// policy, tools and an approval on their own machine without any model
// configured. Everything but the model is real.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/vigilops/vigil/agent"
)

// Banner labels the demo on screen.
const Banner = `*** DEMO MODE ***
The model is scripted (no language model is configured). The loop, policy,
tools and approval are real and run on this machine against "localhost";
the metrics step asks the Prometheus in observability.prometheus, if any.
Type a question, e.g. "how is @localhost doing?", then answer the approval.`

// Script is the operator's side of the conversation `vigil chat --demo
// --play` (and `make demo`) plays: a question, which the model answers with
// reads and then a change that needs approval, and the approval, after
// which the model verifies the change. The console answers a bare
// "approve" with the only approval waiting, and handles it only once the
// run has stopped there, so the lines can be given at once.
var Script = []string{"how is @localhost doing?", "approve"}

// PlayBanner replaces Banner when the demo plays Script by itself.
const PlayBanner = `*** DEMO MODE ***
The model is scripted (no language model is configured) and so is the
operator: vigil plays a short conversation by itself. The loop, policy,
tools and approval are real and run on this machine against "localhost";
the metrics step asks the Prometheus in observability.prometheus, if any.
To type your own questions instead: vigil chat --demo`

// Play returns the input of a played demo: Script's lines. The question is
// shown on out as the operator's line ("> ...") when the console reads it,
// which is after the banner and before anything else; the console itself
// says which approval "approve" answers.
func Play(out io.Writer) io.Reader {
	return &player{out: out, lines: Script}
}

type player struct {
	out   io.Writer
	lines []string
	shown bool
}

// Read hands out the script, one line per call, so the first line is
// shown before the console acts on it.
func (p *player) Read(b []byte) (int, error) {
	if len(p.lines) == 0 {
		return 0, io.EOF
	}
	line := p.lines[0] + "\n"
	if len(b) < len(line) {
		return 0, io.ErrShortBuffer
	}
	if !p.shown {
		p.shown = true
		fmt.Fprintf(p.out, "> %s", line)
	}
	p.lines = p.lines[1:]
	return copy(b, line), nil
}

// Model is a scripted agent.Model. It decides each step from the run's
// history, so it follows whatever actually happened (a denial, a failure).
type Model struct {
	// MarkerFile is the harmless file the demo proposes to create.
	MarkerFile string
	seq        atomic.Int64
}

var _ agent.Model = (*Model)(nil)

// New returns the demo model; its change touches a file in the temp dir.
func New() *Model {
	return &Model{MarkerFile: filepath.Join(os.TempDir(), "vigil-demo-checked")}
}

// Complete implements agent.Model.
func (m *Model) Complete(_ context.Context, req agent.ModelRequest, onDelta func(string)) (agent.ModelResponse, error) {
	resp := m.next(req.Messages, len(req.Tools) > 0)
	if onDelta != nil && resp.Content != "" {
		onDelta(resp.Content)
	}
	resp.Usage = agent.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120}
	return resp, nil
}

// next picks the step after the last user message.
func (m *Model) next(msgs []agent.Message, toolsOffered bool) agent.ModelResponse {
	step := 0
	var results []agent.Message
	for _, msg := range msgs {
		switch msg.Role {
		case agent.RoleUser:
			if !strings.HasPrefix(msg.Content, "verification required") && !strings.HasPrefix(msg.Content, "You have made") &&
				!strings.HasPrefix(msg.Content, "No tools are available") {
				step, results = 0, nil
			}
		case agent.RoleAssistant:
			if len(msg.ToolCalls) > 0 {
				step++
			}
		case agent.RoleTool:
			results = append(results, msg)
		}
	}
	if !toolsOffered {
		return text(m.summary(results))
	}
	switch step {
	case 0:
		return calls(m.call("query", map[string]any{"action": "get", "resource": "localhost"}))
	case 1:
		return calls(
			m.call("read", map[string]any{"action": "exec", "target": "localhost", "command": "uptime"}),
			m.call("read", map[string]any{"action": "exec", "target": "localhost", "command": "df -h /"}),
			m.call("read", map[string]any{"action": "exec", "target": "localhost", "command": "ps -eo pid,comm,%mem --sort=-%mem | head -n 6"}),
			// Metrics are summarised by vigil when a Prometheus is
			// configured (observability.prometheus); without one the tool
			// says so, and the demo shows that honestly.
			m.call("metrics", map[string]any{"action": "range", "query": "up", "since": "1h"}),
		)
	case 2:
		return calls(m.call("control", map[string]any{"action": "command", "target": "localhost",
			"command": "touch " + m.MarkerFile}))
	case 3:
		if last := lastResult(results); last != nil && !okResult(last.Content) {
			return text(m.summary(results))
		}
		return calls(m.call("read", map[string]any{"action": "exec", "target": "localhost", "command": "ls -l " + m.MarkerFile}))
	}
	return text(m.summary(results))
}

// summary reports what the tools returned, quoting them, so nothing in the
// demo's answer is invented.
func (m *Model) summary(results []agent.Message) string {
	var b strings.Builder
	b.WriteString("Here is what I found on localhost (demo summary built from the tool results above):\n")
	for _, r := range results {
		var env struct {
			OK   bool `json:"ok"`
			Data struct {
				Command string `json:"command"`
				Output  string `json:"output"`
				// A metrics range summary.
				Query  string `json:"query"`
				Total  int    `json:"series_total"`
				Series []struct {
					Series string          `json:"series"`
					Last   json.RawMessage `json:"last"`
					Min    json.RawMessage `json:"min"`
					Trend  struct {
						Direction string `json:"direction"`
					} `json:"trend"`
				} `json:"series"`
			} `json:"data"`
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(r.Content), &env) != nil {
			continue
		}
		switch {
		case env.Error != nil:
			fmt.Fprintf(&b, "- %s: %s (%s)\n", r.Name, env.Error.Message, env.Error.Code)
		case r.Name == "metrics":
			fmt.Fprintf(&b, "- metrics `%s` over the last hour: %d series", env.Data.Query, env.Data.Total)
			for i, sr := range env.Data.Series {
				if i == 3 {
					b.WriteString("; …")
					break
				}
				fmt.Fprintf(&b, "; %s last %s, min %s, %s", sr.Series, sr.Last, sr.Min, sr.Trend.Direction)
			}
			b.WriteString("\n")
		case env.Data.Command != "":
			out := strings.TrimSpace(env.Data.Output)
			if i := strings.IndexByte(out, '\n'); i >= 0 {
				out = out[:i] + " …"
			}
			fmt.Fprintf(&b, "- `%s`: %s\n", env.Data.Command, out)
		}
	}
	b.WriteString("In a real deployment a language model writes this answer; vigil's policy decides what runs either way.")
	return b.String()
}

func lastResult(rs []agent.Message) *agent.Message {
	if len(rs) == 0 {
		return nil
	}
	return &rs[len(rs)-1]
}

func okResult(content string) bool {
	var env struct {
		OK bool `json:"ok"`
	}
	return json.Unmarshal([]byte(content), &env) == nil && env.OK
}

func (m *Model) call(name string, args map[string]any) agent.ToolCall {
	raw, _ := json.Marshal(args)
	return agent.ToolCall{ID: fmt.Sprintf("demo-%d", m.seq.Add(1)), Name: name, Arguments: string(raw)}
}

func calls(cs ...agent.ToolCall) agent.ModelResponse {
	return agent.ModelResponse{ToolCalls: cs, FinishReason: "tool_calls"}
}

func text(s string) agent.ModelResponse {
	return agent.ModelResponse{Content: s, FinishReason: "stop"}
}
