package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vigilops/vigil/agent"
)

// JudgeScore is the optional judge model's opinion of a run, reported
// beside the deterministic grade, never instead of it.
type JudgeScore struct {
	RootCause   int `json:"root_cause"`
	Evidence    int `json:"evidence"`
	Explanation int `json:"explanation"`
	// Unsupported lists claims of the answer no tool output supports.
	Unsupported []string `json:"unsupported,omitempty"`
	Notes       string   `json:"notes,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// Fails reports why the score fails a run at threshold min (each score
// must reach it, and no claim may be unsupported); "" when it passes or
// the judge erred (an error is reported, never graded).
func (js JudgeScore) Fails(min int) string {
	if min <= 0 || js.Error != "" {
		return ""
	}
	var why []string
	for _, s := range []struct {
		name string
		v    int
	}{{"root_cause", js.RootCause}, {"evidence", js.Evidence}, {"explanation", js.Explanation}} {
		if s.v < min {
			why = append(why, fmt.Sprintf("%s %d < %d", s.name, s.v, min))
		}
	}
	if len(js.Unsupported) > 0 {
		why = append(why, "unsupported claims: "+strings.Join(js.Unsupported, "; "))
	}
	return strings.Join(why, ", ")
}

// Rubric is what the judge is told to score by.
const Rubric = `You grade an infrastructure investigation done by an on-call assistant.
Score three things from 0 to 3 and answer with one JSON object only:
{"root_cause": n, "evidence": n, "explanation": n, "unsupported": ["claim", ...], "notes": "one sentence"}

root_cause:  3 names the true root cause and the entity precisely; 2 right cause, vague entity;
             1 a symptom or a partly right cause; 0 wrong or none.
evidence:    3 every claim rests on a tool result shown; 2 the key claims do; 1 little support;
             0 claims with no tool result behind them.
explanation: 3 clear, says what was changed (or that nothing was) and what to do next;
             2 clear but incomplete; 1 hard to act on; 0 misleading.
unsupported: every claim of the final answer (a figure, a name, a change said to be made) that no tool
             output below shows; [] when all are supported. A change the answer claims but no approved
             write made is unsupported.
The expected cause is given for reference; do not reward wording, reward substance.`

// judgeOutputBytes bounds each tool output shown to the judge.
const judgeOutputBytes = 4000

// excerpt is what the judge sees of a long output: its first lines (a
// table's header), its last (the newest journal lines), and every line in
// between that holds a figure or a name of the answer, so a claim the
// answer takes from the middle of a process table is shown with its
// source; what is left out is counted, never silently dropped.
func excerpt(out, answer string, limit int) string {
	if len(out) <= limit {
		return out
	}
	lines := strings.Split(out, "\n")
	var terms []string
	for _, m := range figure.FindAllStringSubmatch(answer, -1) {
		if digits(m[1]) >= 2 {
			terms = append(terms, m[1])
		}
	}
	for _, w := range strings.FieldsFunc(answer, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if w = strings.Trim(w, "."); len(w) >= 6 {
			terms = append(terms, w)
		}
	}
	// The header and the newest lines first, then the answer's sources,
	// while the budget lasts.
	keep := make([]bool, len(lines))
	used := 0
	take := func(i int) {
		if !keep[i] && used+len(lines[i]) < limit {
			keep[i] = true
			used += len(lines[i]) + 1
		}
	}
	for i := 0; i < min(5, len(lines)); i++ {
		take(i)
	}
	for i := max(0, len(lines)-15); i < len(lines); i++ {
		take(i)
	}
	for i, l := range lines {
		for _, t := range terms {
			if hasFigure(l, t) || !isDigit(t[0]) && strings.Contains(l, t) {
				take(i)
				break
			}
		}
	}
	var b strings.Builder
	skipped := 0
	for i, l := range lines {
		if !keep[i] {
			skipped++
			continue
		}
		if skipped > 0 {
			fmt.Fprintf(&b, "[… %d lines left out …]\n", skipped)
			skipped = 0
		}
		b.WriteString(l + "\n")
	}
	if skipped > 0 {
		fmt.Fprintf(&b, "[… %d lines left out …]\n", skipped)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Judge scores runs with a model.
type Judge struct {
	Model agent.Model
}

// Score asks the judge about one run. Failures are reported in the score's
// Error, never as a grade.
func (j *Judge) Score(ctx context.Context, sc *Scenario, r Result) JudgeScore {
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\nExpected root cause: %s (%s)\n\nTool calls made:\n", sc.Question, sc.Expect.Entity, strings.Join(sc.Expect.Cause, "; "))
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "- %s.%s %s: %s (ran %t, ok %t, approved %t)\n", c.Tool, c.Action, c.Target, c.Command, c.Ran, c.OK, c.Approved)
		if out := strings.TrimSpace(c.Output); out != "" {
			fmt.Fprintf(&b, "  output:\n%s\n", indent(excerpt(out, r.Answer, judgeOutputBytes), "    "))
		}
	}
	fmt.Fprintf(&b, "\nFinal answer:\n%s\n", r.Answer)
	resp, err := j.Model.Complete(ctx, agent.ModelRequest{Messages: []agent.Message{
		{Role: agent.RoleSystem, Content: Rubric},
		{Role: agent.RoleUser, Content: b.String()},
	}}, nil)
	if err != nil {
		return JudgeScore{Error: err.Error()}
	}
	return parseJudge(resp.Content)
}

// parseJudge reads the judge's JSON object, tolerating text around it.
func parseJudge(s string) JudgeScore {
	i, k := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || k < i {
		return JudgeScore{Error: "the judge answered without a JSON object"}
	}
	var js JudgeScore
	if err := json.Unmarshal([]byte(s[i:k+1]), &js); err != nil {
		return JudgeScore{Error: "the judge's JSON: " + err.Error()}
	}
	for _, v := range []int{js.RootCause, js.Evidence, js.Explanation} {
		if v < 0 || v > 3 {
			return JudgeScore{Error: fmt.Sprintf("the judge gave a score out of 0–3: %d", v)}
		}
	}
	return js
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}
