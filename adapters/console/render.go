package console

import (
	"fmt"
	"strings"
	"time"

	"github.com/vigilops/vigil/bot"
)

// Render turns a reply into terminal text.
func Render(r bot.Reply) string {
	switch r.Kind {
	case bot.ReplyTrace:
		if r.Trace != nil {
			return renderTrace(r.Trace)
		}
	case bot.ReplyAnswer:
		out := "vigil> " + indentRest(r.Text, "       ")
		if r.RunID != "" {
			out += "\n       (rate this answer: good | bad)"
		}
		return out
	case bot.ReplyError:
		if r.ErrorID != "" {
			return fmt.Sprintf("error: %s (error id %s)", r.Text, r.ErrorID)
		}
		return "error: " + r.Text
	}
	return "note: " + r.Text
}

func renderTrace(t *bot.Trace) string {
	var b strings.Builder
	what := t.Tool
	if t.Action != "" {
		what += " " + t.Action
	}
	if t.Target != "" {
		what += " on " + t.Target
	}
	fmt.Fprintf(&b, "[%s] %s", outcomeLabel(t.Outcome), what)
	if t.Command != "" {
		fmt.Fprintf(&b, ": %s", t.Command)
	}
	fmt.Fprintf(&b, " (%s)", t.Duration.Round(time.Millisecond))
	if t.Sandbox != "" {
		fmt.Fprintf(&b, "\n    sandbox: %s", t.Sandbox)
	}
	if t.Code != "" {
		fmt.Fprintf(&b, "\n    %s: %s", t.Code, t.Message)
	}
	if out := strings.TrimRight(t.Output, "\n"); out != "" {
		b.WriteString("\n    | ")
		b.WriteString(strings.ReplaceAll(out, "\n", "\n    | "))
		if t.Truncated {
			fmt.Fprintf(&b, "\n    | … output truncated (%d bytes in all)", len(t.FullOutput))
		}
	}
	return b.String()
}

func outcomeLabel(o bot.Outcome) string {
	switch o {
	case bot.OutcomeOK:
		return "ok"
	case bot.OutcomeBlocked:
		return "blocked"
	case bot.OutcomeApproval:
		return "needs approval"
	}
	return "failed"
}

// RenderCard turns an approval card into terminal text. A pending card
// always names the exact answers: "approve <id>" and "deny <id> <reason>".
func RenderCard(c bot.ApprovalCard) string {
	var b strings.Builder
	switch c.Status {
	case bot.ApprovalApproved:
		fmt.Fprintf(&b, "[approval %s] approved by %s at %s", c.ID, c.DecidedBy, c.DecidedAt.Format(time.TimeOnly))
		return b.String()
	case bot.ApprovalDenied:
		fmt.Fprintf(&b, "[approval %s] denied by %s at %s", c.ID, c.DecidedBy, c.DecidedAt.Format(time.TimeOnly))
		if c.Reason != "" {
			fmt.Fprintf(&b, ": %s", c.Reason)
		}
		return b.String()
	case bot.ApprovalExpired:
		fmt.Fprintf(&b, "[approval %s] expired at %s; nothing was changed", c.ID, c.ExpiresAt.Format(time.TimeOnly))
		return b.String()
	}
	fmt.Fprintf(&b, "[approval %s] approval needed\n", c.ID)
	change := c.Command
	if change == "" {
		change = c.Summary
	}
	fmt.Fprintf(&b, "    change:    %s\n", indentRest(change, "               "))
	if len(c.Parts) > 0 {
		b.WriteString("    parts:\n")
		for _, p := range c.Parts {
			fmt.Fprintf(&b, "      %s\n", p)
		}
	}
	for _, d := range c.Details {
		if strings.Contains(strings.TrimRight(d.Value, "\n"), "\n") || strings.HasSuffix(d.Value, "\n") {
			// Multi-line content (a file's new content, appended text):
			// every line shown, marked so the approver sees where it
			// starts and ends.
			fmt.Fprintf(&b, "      %s:\n", d.Label)
			for _, line := range strings.Split(strings.TrimSuffix(d.Value, "\n"), "\n") {
				fmt.Fprintf(&b, "        | %s\n", line)
			}
			if !strings.HasSuffix(d.Value, "\n") {
				b.WriteString("        (no newline at the end)\n")
			}
			continue
		}
		fmt.Fprintf(&b, "      %s: %s\n", d.Label, d.Value)
	}
	target := c.Target
	if target == "" {
		target = "(none: the tool acts on no inventory resource)"
	}
	fmt.Fprintf(&b, "    target:    %s\n", target)
	fmt.Fprintf(&b, "    risk:      %s", c.Risk)
	if len(c.Reasons) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(c.Reasons, "; "))
	}
	fmt.Fprintf(&b, "\n    requester: %s\n", c.Requester)
	fmt.Fprintf(&b, "    expires:   %s\n", c.ExpiresAt.Format(time.TimeOnly))
	fmt.Fprintf(&b, "    answer:    approve %s   |   deny %s <reason>", c.ID, c.ID)
	return b.String()
}

func indentRest(s, pad string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad)
}
