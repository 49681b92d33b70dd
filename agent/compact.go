package agent

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/agent/jsontree"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// Context compaction (SPEC A10). The stored session keeps every message;
// only the prompt sent to the model is bounded:
//
//  1. Always: a tool result older than the last two tool-call turns and
//     longer than compactMinChars is replaced by its short form,
//     deterministically, so the same history always gives the same
//     prompt. The short form keeps the evidence: for structured data its
//     values (numbers, states, errors, what they are about; timestamps
//     and notes go first), for command output its facts (error lines,
//     services, disks, ...) and its last lines.
//  2. Over the budget (llm.context_budget_tokens): only the last turn is
//     kept verbatim, and results longer than 300 characters (SPEC A10's
//     threshold) are shortened.
//  3. Still over: the oldest tool exchanges (a call message and its results)
//     are left out, oldest first; the known-facts block keeps what they
//     found.
//  4. Still over: the largest remaining results are cut to fit.
//
// Never shortened or left out: the user's messages (questions, vigil's
// context blocks, verification prompts), the assistant's answers, and the
// exchanges that hold a write or a policy decision (approvals, denials,
// blocks), so approvals and the verification state stay in view.

const (
	// DefaultContextBudget is the default prompt budget in tokens.
	DefaultContextBudget = 24000
	compactKeepTurns     = 2
	// compactMinChars is the size below which a result is kept whole
	// while the prompt is within the budget. A short form costs 250 to 500
	// bytes itself (the envelope, the note, the call, the evidence), so
	// shortening a result under about 1.2 KB saves at most some 200
	// tokens, under 1% of the default budget, and loses detail the model
	// reasons with (a metrics summary's min, max and trend). Under budget
	// pressure the SPEC's 300 applies (compactPressureMinChars).
	compactMinChars         = 1200
	compactPressureMinChars = 300
	compactHeadChars        = 200
	// compactTailLines is how many last lines of a command's output its
	// short form keeps.
	compactTailLines = 3
	// squeezeFloor is the least a result is cut down to in stage 4.
	squeezeFloor = 400
)

// compactedKey is the meta key of a shortened result.
const compactedKey = "compacted"

// compaction is one prompt being fitted to the budget.
type compaction struct {
	tc     TokenCounter
	cache  *promptCache
	msgs   []Message
	tokens []int
	total  int
	kinds  map[string]policy.ActionKinds
	turns  []int // index of each assistant message with tool calls
	owner  []int // per message: its turn (an index into turns), or -1
	// protect memoises protected: 1 yes, -1 no, 0 not yet known.
	protect []int8
	dropped []bool
	// short marks results already replaced by their short form.
	short []bool
}

// compactHistory returns the history as the prompt carries it: compacted
// so that fixed (the system prompt, tools and anything else sent with it)
// plus the history stays within the budget where that can be done without
// leaving out what must stay.
func (a *Agent) compactHistory(hist []Message, fixed int) []Message {
	budget := a.cfg.ContextBudgetTokens
	if budget < 0 || len(hist) == 0 {
		return hist
	}
	if a.fitsUntouched(hist, fixed, budget) {
		return hist
	}
	c := a.newCompaction(hist)
	c.shorten(compactKeepTurns, compactMinChars)
	if fixed+c.total > budget {
		c.shorten(1, compactPressureMinChars)
	}
	if fixed+c.total > budget {
		c.drop(budget - fixed)
	}
	if fixed+c.total > budget {
		c.squeeze(budget - fixed)
	}
	if fixed+c.total > budget {
		a.log.Warn("prompt over the context budget after compaction: what must stay does not fit",
			"tokens", fixed+c.total, "budget", budget)
	}
	return c.result()
}

// fitsUntouched reports the common case of a short conversation: no turn
// old enough to shorten, and within the budget.
func (a *Agent) fitsUntouched(hist []Message, fixed, budget int) bool {
	turns, total := 0, fixed
	for _, m := range hist {
		if m.Role == RoleAssistant && len(m.ToolCalls) > 0 {
			turns++
			if turns > compactKeepTurns {
				return false
			}
		}
		total += messageTokens(a.counter, m)
	}
	return total <= budget
}

func (a *Agent) newCompaction(hist []Message) *compaction {
	kinds := map[string]policy.ActionKinds{}
	for _, sp := range a.tools.Specs() {
		kinds[sp.Name] = sp.Kinds
	}
	c := &compaction{
		tc:      a.counter,
		cache:   a.prompt,
		kinds:   kinds,
		msgs:    slices.Clone(hist),
		tokens:  make([]int, len(hist)),
		owner:   make([]int, len(hist)),
		protect: make([]int8, len(hist)),
		dropped: make([]bool, len(hist)),
		short:   make([]bool, len(hist)),
	}
	cur := -1
	var calls map[string]bool
	for i, m := range c.msgs {
		c.tokens[i] = messageTokens(c.tc, m)
		c.total += c.tokens[i]
		c.owner[i] = -1
		switch m.Role {
		case RoleAssistant:
			cur = -1
			if len(m.ToolCalls) == 0 {
				continue
			}
			c.turns = append(c.turns, i)
			cur = len(c.turns) - 1
			c.owner[i] = cur
			calls = map[string]bool{}
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = true
			}
		case RoleTool:
			if cur >= 0 && calls[m.ToolCallID] {
				c.owner[i] = cur
			}
		default:
			cur = -1
		}
	}
	return c
}

// writes reports whether a call changes something, by its tool's declared
// kinds; an unknown tool does.
func (c *compaction) writes(call ToolCall) bool {
	k, ok := c.kinds[call.Name]
	return !ok || k.KindOf(callInfoOf(call).Action) == policy.KindWrite
}

// protected reports whether message i must stay as it is: a result of a
// write or a policy decision, or for a call message, an exchange holding
// one.
func (c *compaction) protected(i int) bool {
	if c.protect[i] != 0 {
		return c.protect[i] > 0
	}
	p := false
	m := c.msgs[i]
	switch {
	case m.Role == RoleTool && c.owner[i] >= 0:
		p = c.writes(c.callOf(i)) || strings.Contains(m.Content, `"blocked":true`)
	case m.Role == RoleAssistant && c.owner[i] >= 0:
		for _, tc := range m.ToolCalls {
			p = p || c.writes(tc)
		}
		for j := i + 1; !p && j < len(c.msgs) && c.owner[j] == c.owner[i]; j++ {
			p = c.protected(j)
		}
	}
	c.protect[i] = -1
	if p {
		c.protect[i] = 1
	}
	return p
}

func (c *compaction) set(i int, content string) {
	c.msgs[i].Content = content
	c.total -= c.tokens[i]
	c.tokens[i] = messageTokens(c.tc, c.msgs[i])
	c.total += c.tokens[i]
}

// shorten replaces the results longer than minChars of every turn but
// the last keep.
func (c *compaction) shorten(keep, minChars int) {
	limit := len(c.turns) - keep
	for i, m := range c.msgs {
		if m.Role != RoleTool || c.owner[i] < 0 || c.owner[i] >= limit || len(m.Content) <= minChars || c.short[i] {
			continue
		}
		if c.protected(i) {
			continue
		}
		if short := c.shortForm(c.callOf(i), m.Content); len(short) < len(m.Content) {
			c.set(i, short)
		}
		c.short[i] = true
	}
}

func (c *compaction) callOf(i int) ToolCall {
	for _, tc := range c.msgs[c.turns[c.owner[i]]].ToolCalls {
		if tc.ID == c.msgs[i].ToolCallID {
			return tc
		}
	}
	return ToolCall{ID: c.msgs[i].ToolCallID, Name: c.msgs[i].Name}
}

// drop leaves out whole exchanges, oldest first, until the history fits in
// room tokens; never the last turn nor a protected exchange.
func (c *compaction) drop(room int) {
	for t := 0; t < len(c.turns)-1 && c.total > room; t++ {
		at := c.turns[t]
		if c.protected(at) {
			continue
		}
		for i := at; i < len(c.msgs); i++ {
			if c.owner[i] != t {
				if i > at {
					break
				}
				continue
			}
			if i == at && strings.TrimSpace(c.msgs[i].Content) != "" {
				// Keep what the model said; only its calls go.
				c.msgs[i].ToolCalls = nil
				c.owner[i] = -1
				c.total -= c.tokens[i]
				c.tokens[i] = messageTokens(c.tc, c.msgs[i])
				c.total += c.tokens[i]
				continue
			}
			c.dropped[i] = true
			c.total -= c.tokens[i]
			c.tokens[i] = 0
		}
	}
}

// squeeze cuts the largest unprotected results, the newest included, until
// the history fits in room tokens or nothing is left to cut.
func (c *compaction) squeeze(room int) {
	orig := map[int]string{}
	keepOf := map[int]int{}
	for c.total > room {
		big := -1
		for i, m := range c.msgs {
			if m.Role != RoleTool || c.dropped[i] || len(m.Content) <= squeezeFloor || c.protected(i) {
				continue
			}
			if k, ok := keepOf[i]; ok && k <= squeezeFloor {
				continue // cut as far as it goes
			}
			if big < 0 || c.tokens[i] > c.tokens[big] {
				big = i
			}
		}
		if big < 0 {
			return
		}
		if _, ok := orig[big]; !ok {
			orig[big] = c.msgs[big].Content
			keepOf[big] = len(orig[big])
		}
		over := c.total - room
		// Bytes per token of this text, to aim the cut; the note the cut
		// leaves costs a little too.
		ratio := max(1, len(c.msgs[big].Content)/max(1, c.tokens[big]))
		keepOf[big] = max(squeezeFloor, keepOf[big]-(over+24)*ratio)
		c.set(big, cutContent(orig[big], keepOf[big]))
	}
}

func (c *compaction) result() []Message {
	out := make([]Message, 0, len(c.msgs))
	for i, m := range c.msgs {
		if !c.dropped[i] {
			out = append(out, m)
		}
	}
	return out
}

// shortForm is compactResult, remembered: the same old results are
// shortened again for every model call of a conversation.
func (c *compaction) shortForm(call ToolCall, content string) string {
	if c.cache == nil {
		return compactResult(call, content)
	}
	return c.cache.short(call, content)
}

// promptCache holds what building prompts computes again and again: the
// tokens of the tool specs (fixed once the registry is built) and the short
// forms of old results. It is bounded and safe for concurrent use.
type promptCache struct {
	specTokens func() int
	// scoped holds the spec tokens of each channel registry
	// (WithChannelTools), counted once each.
	scopedMu sync.Mutex
	scoped   map[Registry]int
	seed     maphash.Seed
	mu       sync.Mutex
	shorts   map[uint64]string
}

// shortCacheSize bounds the short forms remembered.
const shortCacheSize = 1024

func newPromptCache(a *Agent) *promptCache {
	return &promptCache{
		specTokens: sync.OnceValue(func() int { return toolsTokens(a.counter, a.tools.Specs()) }),
		seed:       maphash.MakeSeed(),
		shorts:     map[uint64]string{},
	}
}

// toolTokens is the tokens of the specs run r is offered: the agent's
// own registry's from specTokens, a channel's (WithChannelTools) counted
// once and kept.
func (a *Agent) toolTokens(r *RunState) int {
	p := a.prompt
	if a.channelTools == nil || r == nil {
		return p.specTokens()
	}
	reg := a.channelTools(r.Channel)
	switch {
	case reg == nil:
		return p.specTokens()
	case !reflect.TypeOf(reg).Comparable():
		return toolsTokens(a.counter, reg.Specs())
	}
	p.scopedMu.Lock()
	defer p.scopedMu.Unlock()
	n, ok := p.scoped[reg]
	if !ok {
		if p.scoped == nil {
			p.scoped = map[Registry]int{}
		}
		n = toolsTokens(a.counter, reg.Specs())
		p.scoped[reg] = n
	}
	return n
}

func (p *promptCache) short(call ToolCall, content string) string {
	var h maphash.Hash
	h.SetSeed(p.seed)
	h.WriteString(call.ID)
	h.WriteByte(0)
	h.WriteString(call.Name)
	h.WriteByte(0)
	h.WriteString(call.Arguments)
	h.WriteByte(0)
	h.WriteString(content)
	key := h.Sum64()
	p.mu.Lock()
	s, ok := p.shorts[key]
	p.mu.Unlock()
	if ok {
		return s
	}
	s = compactResult(call, content)
	p.mu.Lock()
	if len(p.shorts) >= shortCacheSize {
		clear(p.shorts)
	}
	p.shorts[key] = s
	p.mu.Unlock()
	return s
}

// resultEnvelope is a tool result as the model read it.
type resultEnvelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Blocked bool           `json:"blocked"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// compactResult is the short form of a tool result, still an envelope
// (SPEC T1): how the call ended, its facts (or, with none, the start of the
// result), and a note in meta saying it was shortened.
func compactResult(call ToolCall, content string) string {
	ci := callInfoOf(call)
	out := tools.Envelope{Meta: map[string]any{
		compactedKey: fmt.Sprintf("vigil shortened this result of %d bytes to save context; call the tool again for the full output", len(content)),
		"call":       ci.Describe(),
	}}
	var env resultEnvelope
	if err := json.Unmarshal([]byte(content), &env); err == nil {
		out.OK = env.OK
		if e := env.Error; e != nil {
			out.Error = &tools.ErrorInfo{Code: policy.Code(e.Code), Message: clip(e.Message, compactHeadChars), Blocked: e.Blocked, Failed: !e.Blocked}
		}
	}
	// Command output keeps its exit code, facts and last lines;
	// structured data its values (its facts when they do not fit).
	data := map[string]any{}
	var cmd map[string]any
	if len(env.Data) > 0 && json.Unmarshal(env.Data, &cmd) == nil && facts.IsCommand(cmd) {
		data = commandShort(cmd)
	} else if root, ok := jsontree.Parse(string(env.Data)); ok && (root.Kind == jsontree.Object || root.Kind == jsontree.Array) {
		if ev, ok := evidenceOf(root); ok {
			out.Data = json.RawMessage(ev.Encode())
			return out.JSON()
		}
	}
	if fs := facts.Extract(ci, content); len(fs) > 0 {
		lines := make([]string, len(fs))
		for i, f := range fs {
			lines[i] = f.Key + ": " + f.Value
		}
		data["facts"] = lines
	}
	if len(data) == 0 {
		data["start"] = clip(content, compactHeadChars)
	}
	out.Data = data
	return out.JSON()
}

// commandShort is what a command result's short form keeps beside its
// facts: the exit code and the output's last lines.
func commandShort(d map[string]any) map[string]any {
	out := map[string]any{"exit_code": d["exit_code"]}
	text, _ := d["output"].(string)
	if stderr, _ := d["stderr"].(string); strings.TrimSpace(stderr) != "" {
		text += "\n" + stderr
	}
	var tail []string
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := len(lines) - 1; i >= 0 && len(tail) < compactTailLines; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			tail = append([]string{clip(l, 160)}, tail...)
		}
	}
	if len(tail) > 0 {
		out["last_lines"] = tail
	}
	return out
}

// cutMiddle keeps about keep bytes of s: its start and its end, where the
// news usually is (the last lines of a log).
func cutMiddle(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	head := keep * 3 / 5
	for head > 0 && !isRuneStart(s[head]) {
		head--
	}
	tail := len(s) - (keep - head)
	for tail < len(s) && !isRuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n[vigil cut %d bytes here to fit the context budget]\n%s", s[:head], tail-head, s[tail:])
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// callInfoOf reads what extraction and compaction need of a call from the
// model's own arguments.
func callInfoOf(c ToolCall) facts.Call { return facts.CallOf(c.ID, c.Name, c.Arguments) }

// oneLine collapses whitespace and newlines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip shortens s to at most n bytes, on a character boundary, marking the
// cut with an ellipsis. Package facts keeps its own copy: a little copying
// keeps compaction and extraction from sharing more than the JSON tree.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
