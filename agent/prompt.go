package agent

import (
	"fmt"
	"strings"
)

// baseSystemPrompt states how to work. Safety does not depend on it: policy
// enforces every rule here in code. It only spares the model refusals.
const baseSystemPrompt = `You are vigil, an infrastructure assistant working in a team chat.
You investigate with tools and answer from what they return.

How to work:
- Resolve before you act: use query or discover to find the resource you need; use the exact target names they return.
- Read freely with read; it only runs commands that are read-only and exit by themselves (no -f/--follow, no pagers, no interactive programs).
- Changes go through control or file_edit and may need a person's approval. Propose one change at a time.
- After a change, verify it with a read before you answer.
- Never claim you ran, saw or changed something unless a tool result in this conversation shows it.
- Keep answers short and concrete: what you found, what you did, what you suggest.`

// systemPrompt is rebuilt for every run from the current tools.
func (a *Agent) systemPrompt(reg Registry) string {
	var b strings.Builder
	b.WriteString(baseSystemPrompt)
	if a.cfg.Instructions != "" {
		b.WriteString("\n\nOperator instructions:\n")
		b.WriteString(a.cfg.Instructions)
	}
	if a.cfg.ToolMode == ToolModeJSON {
		b.WriteString("\n\n")
		b.WriteString(JSONModePrompt(reg.Specs()))
	}
	return b.String()
}

// textOnlyNote tells the model why it has no tools this turn.
const textOnlyNote = "No tools are available for this turn. Give your final answer now from what you already know."

// messages builds the request: the system prompt with the session's known
// facts, and the history, compacted to the context budget (compact.go). In
// JSON mode, tool calls and results are rendered as plain text, since the
// model has no tool roles.
func (a *Agent) messages(s *Session, textOnly bool) []Message {
	sys := a.systemPrompt(a.reg(s.Run))
	if a.cfg.ContextBudgetTokens >= 0 {
		if facts := s.Knowledge.Render(); facts != "" {
			sys += "\n\n" + facts
		}
	}
	out := make([]Message, 0, len(s.History)+2)
	out = append(out, Message{Role: RoleSystem, Content: sys})
	var tail []Message
	if textOnly {
		tail = append(tail, Message{Role: RoleUser, Content: textOnlyNote})
	}
	fixed := replyPriming + messageTokens(a.counter, out[0])
	for _, m := range tail {
		fixed += messageTokens(a.counter, m)
	}
	if !textOnly && a.cfg.ToolMode == ToolModeNative {
		fixed += a.toolTokens(s.Run)
	}
	hist := a.compactHistory(s.History, fixed)
	if a.cfg.ToolMode != ToolModeJSON {
		out = append(out, hist...)
	} else {
		for _, m := range hist {
			out = append(out, jsonModeMessage(m))
		}
	}
	return append(out, tail...)
}

func jsonModeMessage(m Message) Message {
	switch {
	case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
		c := m.ToolCalls[0]
		args := c.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		return Message{Role: RoleAssistant, Content: fmt.Sprintf(`{"tool_call":{"name":%q,"parameters":%s}}`, c.Name, args)}
	case m.Role == RoleTool:
		return Message{Role: RoleUser, Content: fmt.Sprintf("Result of %s:\n%s", m.Name, m.Content)}
	}
	return m
}
