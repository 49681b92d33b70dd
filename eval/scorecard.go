package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigilops/vigil/agent"
)

// Price is what a model costs per million tokens (config eval.prices).
type Price struct {
	Model      string  `json:"model"`
	Prompt     float64 `json:"prompt_per_million"`
	Completion float64 `json:"completion_per_million"`
}

// Cost estimates what usage cost at p.
func (p Price) Cost(u agent.Usage) float64 {
	return float64(u.PromptTokens)/1e6*p.Prompt + float64(u.CompletionTokens)/1e6*p.Completion
}

// Scorecard is the outcome of a suite: per scenario, per category, totals.
type Scorecard struct {
	// Model is the model that ran (or whose tokenizer counted, under
	// --reference).
	Model      string          `json:"model"`
	Reference  bool            `json:"reference"`
	Compaction bool            `json:"compaction"`
	Runs       int             `json:"runs"`
	Priced     bool            `json:"priced"`
	Started    time.Time       `json:"started"`
	Scenarios  []ScenarioScore `json:"scenarios"`
	Categories []GroupScore    `json:"categories"`
	Total      GroupScore      `json:"total"`
	// Wrong counts wrong trajectories that failed as they must (reference
	// suites only) out of WrongTotal.
	WrongFailed int      `json:"wrong_failed,omitempty"`
	WrongTotal  int      `json:"wrong_total,omitempty"`
	WrongPassed []string `json:"wrong_passed,omitempty"`
	// ValidPassed counts valid alternative trajectories that passed as
	// they must (reference suites only); ValidFailed names the others.
	ValidPassed int      `json:"valid_passed,omitempty"`
	ValidTotal  int      `json:"valid_total,omitempty"`
	ValidFailed []string `json:"valid_failed,omitempty"`
	// Errors counts runs that ended on a system failure (the model
	// endpoint): they are not graded and not in pass@1.
	Errors int `json:"errors,omitempty"`
}

// ScenarioScore sums a scenario's runs.
type ScenarioScore struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	// Expects is what a good run does: "fix granted", "fix denied" or
	// "no change", and "red herring" when the loud signal is innocent.
	Expects string `json:"expects"`
	Runs    int    `json:"runs"`
	Passes  int    `json:"passes"`
	// Errors are runs that ended on a system failure; Runs counts them,
	// pass@1 does not.
	Errors int `json:"errors,omitempty"`
	// Pass1 is the share of runs that passed: the unbiased estimate of
	// pass@1. PassK is whether any of the k runs passed.
	Pass1 float64 `json:"pass_at_1"`
	PassK bool    `json:"pass_at_k"`
	// Reason is the first failing run's grade, "pass" when all passed.
	Reason           string   `json:"reason"`
	Turns            float64  `json:"turns"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	WallMS           int64    `json:"wall_ms"`
	Cost             float64  `json:"cost"`
	Results          []Result `json:"results"`
}

// GroupScore totals scenarios (a category, or all).
type GroupScore struct {
	Name             string  `json:"name"`
	Scenarios        int     `json:"scenarios"`
	Pass1            float64 `json:"pass_at_1"`
	PassK            float64 `json:"pass_at_k"`
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	WallMS           int64   `json:"wall_ms"`
	Cost             float64 `json:"cost"`
}

// Suite is what RunSuite needs.
type Suite struct {
	Scenarios []*Scenario
	// Model returns the model for one run of sc; nil runs the scenario's
	// reference trajectory.
	Model func(sc *Scenario) agent.Model
	// CountAs names the model whose tokenizer counts scripted runs and
	// whose price applies.
	CountAs string
	Runs    int
	Options Options
	Prices  []Price
	// Wrong also runs every wrong trajectory (reference suites).
	Wrong bool
	// Judge scores each run beside the grade; nil: none.
	Judge *Judge
	// JudgeMin, when above 0, makes the judge's score part of the grade:
	// a run fails the check "judge" when a score is below it or the judge
	// lists an unsupported claim.
	JudgeMin int
	// Progress receives one line per run (stderr); nil: none.
	Progress io.Writer
}

// RunSuite runs every scenario Runs times and builds the scorecard.
func RunSuite(ctx context.Context, s Suite) Scorecard {
	if s.Runs < 1 {
		s.Runs = 1
	}
	sc := Scorecard{Model: s.CountAs, Reference: s.Model == nil, Compaction: s.Options.Agent.ContextBudgetTokens >= 0,
		Runs: s.Runs, Started: time.Now().UTC()}
	price, priced := lookupPrice(s.Prices, s.CountAs)
	sc.Priced = priced
	progress := func(format string, a ...any) {
		if s.Progress != nil {
			fmt.Fprintf(s.Progress, format+"\n", a...)
		}
	}
	for i, scen := range s.Scenarios {
		ss := ScenarioScore{Name: scen.Name, Category: scen.Category, Expects: expects(scen), Runs: s.Runs, Reason: "pass"}
		for run := 1; run <= s.Runs; run++ {
			if ctx.Err() != nil {
				break
			}
			var m agent.Model
			if s.Model != nil {
				m = s.Model(scen)
			} else {
				m = NewScript(scen.Reference, s.CountAs)
			}
			r := Run(ctx, scen, m, s.Options, run)
			if s.Judge != nil {
				js := s.Judge.Score(ctx, scen, r)
				r.Judge = &js
				if why := js.Fails(s.JudgeMin); why != "" && r.Error == "" {
					r.Grade.fail("judge", "%s", why)
					r.Grade.Pass = false
				}
			}
			ss.Results = append(ss.Results, r)
			if r.Error != "" {
				ss.Errors++
				sc.Errors++
				progress("[%d/%d] %s run %d/%d: ERROR %s", i+1, len(s.Scenarios), scen.Name, run, s.Runs, r.Error)
				continue
			}
			if r.Grade.Pass {
				ss.Passes++
			} else if ss.Reason == "pass" {
				ss.Reason = r.Grade.Reason()
			}
			ss.Turns += float64(r.Turns)
			ss.PromptTokens += r.Usage.PromptTokens
			ss.CompletionTokens += r.Usage.CompletionTokens
			ss.WallMS += r.Wall.Milliseconds()
			ss.Cost += price.Cost(r.Usage)
			verdict := "pass"
			if !r.Grade.Pass {
				verdict = "FAIL " + r.Grade.Reason()
			}
			progress("[%d/%d] %s run %d/%d: %s (%d turns, %d tokens, %s)", i+1, len(s.Scenarios), scen.Name, run, s.Runs,
				verdict, r.Turns, r.Usage.TotalTokens, r.Wall.Round(time.Millisecond))
		}
		if graded := s.Runs - ss.Errors; graded > 0 {
			ss.Pass1 = float64(ss.Passes) / float64(graded)
			ss.Turns /= float64(graded)
		} else {
			ss.Reason = "error: every run ended on a system failure"
		}
		ss.PassK = ss.Passes > 0
		sc.Scenarios = append(sc.Scenarios, ss)
		if s.Wrong {
			for _, w := range scen.Wrong {
				r := Run(ctx, scen, NewScript(w.Turns, s.CountAs), s.Options, 1)
				sc.WrongTotal++
				if !r.Grade.Pass && slices.Contains(r.Grade.Failed, w.Fails) {
					sc.WrongFailed++
				} else {
					sc.WrongPassed = append(sc.WrongPassed, scen.Name+"/"+w.Name)
					progress("[%d/%d] %s wrong trajectory %s did not fail %s: %s", i+1, len(s.Scenarios), scen.Name, w.Name, w.Fails, r.Grade.Reason())
				}
			}
			for _, v := range scen.Valid {
				r := Run(ctx, scen, NewScript(v.Turns, s.CountAs), s.Options, 1)
				sc.ValidTotal++
				if r.Grade.Pass {
					sc.ValidPassed++
				} else {
					sc.ValidFailed = append(sc.ValidFailed, scen.Name+"/"+v.Name)
					progress("[%d/%d] %s valid trajectory %s failed: %s", i+1, len(s.Scenarios), scen.Name, v.Name, r.Grade.Reason())
				}
			}
		}
	}
	sc.total()
	return sc
}

func expects(s *Scenario) string {
	e := "no change"
	switch s.Expect.Approval {
	case "grant":
		e = "fix granted"
	case "deny":
		e = "fix denied"
	}
	if s.RedHerring {
		e += ", red herring"
	}
	if s.Alert {
		e += ", alert"
	}
	return e
}

func lookupPrice(ps []Price, model string) (Price, bool) {
	for _, p := range ps {
		if strings.EqualFold(p.Model, model) {
			return p, true
		}
	}
	return Price{}, false
}

// total fills the category and overall totals.
func (sc *Scorecard) total() {
	by := map[string]*GroupScore{}
	all := &GroupScore{Name: "total"}
	for _, s := range sc.Scenarios {
		g, ok := by[s.Category]
		if !ok {
			g = &GroupScore{Name: s.Category}
			by[s.Category] = g
		}
		for _, x := range []*GroupScore{g, all} {
			x.Scenarios++
			x.Pass1 += s.Pass1
			if s.PassK {
				x.PassK++
			}
			x.PromptTokens += s.PromptTokens
			x.CompletionTokens += s.CompletionTokens
			x.WallMS += s.WallMS
			x.Cost += s.Cost
		}
	}
	var names []string
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	sc.Categories = nil
	for _, n := range names {
		g := by[n]
		g.Pass1 /= float64(g.Scenarios)
		g.PassK /= float64(g.Scenarios)
		sc.Categories = append(sc.Categories, *g)
	}
	if all.Scenarios > 0 {
		all.Pass1 /= float64(all.Scenarios)
		all.PassK /= float64(all.Scenarios)
	}
	sc.Total = *all
}

// Failed reports whether any scenario never passed or a wrong trajectory
// passed.
func (sc Scorecard) Failed() bool {
	for _, s := range sc.Scenarios {
		if !s.PassK {
			return true
		}
	}
	return len(sc.WrongPassed) > 0 || len(sc.ValidFailed) > 0
}

// WriteJSON writes the scorecard for tooling.
func (sc Scorecard) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sc)
}

// ReadJSON reads a scorecard written by WriteJSON.
func ReadJSON(path string) (Scorecard, error) {
	var sc Scorecard
	data, err := os.ReadFile(path)
	if err != nil {
		return sc, err
	}
	if err := json.Unmarshal(data, &sc); err != nil {
		return sc, fmt.Errorf("%s: not a vigil eval scorecard: %w", path, err)
	}
	return sc, nil
}

// MarkdownOptions shape the Markdown form.
type MarkdownOptions struct {
	// NoWall leaves out wall times (REFERENCE.md, which must not change
	// from run to run).
	NoWall bool
	// Title heads the document ("" for a default).
	Title string
}

// WriteMarkdown writes the scorecard for people.
func (sc Scorecard) WriteMarkdown(w io.Writer, o MarkdownOptions) error {
	var b strings.Builder
	title := o.Title
	if title == "" {
		title = "vigil eval scorecard"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	mode := "model " + sc.Model
	if sc.Reference {
		mode = "reference trajectories (tokens counted with the " + sc.Model + " tokenizer)"
	}
	comp := "on"
	if !sc.Compaction {
		comp = "off"
	}
	fmt.Fprintf(&b, "Mode: %s; runs per scenario: %d; context compaction: %s.\n\n", mode, sc.Runs, comp)
	fmt.Fprintf(&b, "**Total: pass@1 %.2f, pass@k %.2f (k=%d) over %d scenarios; %d prompt + %d completion tokens",
		sc.Total.Pass1, sc.Total.PassK, sc.Runs, sc.Total.Scenarios, sc.Total.PromptTokens, sc.Total.CompletionTokens)
	if sc.Priced {
		fmt.Fprintf(&b, "; estimated cost %.4f", sc.Total.Cost)
	}
	b.WriteString(".**\n\n")
	if sc.WrongTotal > 0 {
		fmt.Fprintf(&b, "Wrong trajectories failing as they must: %d/%d.\n\n", sc.WrongFailed, sc.WrongTotal)
	}
	if sc.ValidTotal > 0 {
		fmt.Fprintf(&b, "Valid alternative trajectories passing as they must: %d/%d.\n\n", sc.ValidPassed, sc.ValidTotal)
	}
	if sc.Errors > 0 {
		fmt.Fprintf(&b, "**%d run(s) ended on a system failure (the model endpoint) and are not graded.**\n\n", sc.Errors)
	}
	wall := func(ms int64) string {
		if o.NoWall {
			return ""
		}
		return fmt.Sprintf(" %s |", (time.Duration(ms) * time.Millisecond).String())
	}
	wallHead, wallSep := " wall |", "---:|"
	if o.NoWall {
		wallHead, wallSep = "", ""
	}
	cost := func(c float64) string {
		if !sc.Priced {
			return "–"
		}
		return fmt.Sprintf("%.4f", c)
	}
	b.WriteString("## By category\n\n")
	fmt.Fprintf(&b, "| category | scenarios | pass@1 | pass@k | prompt tokens | completion tokens | cost |%s\n", wallHead)
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|%s\n", wallSep)
	for _, g := range append(slices.Clone(sc.Categories), sc.Total) {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f | %d | %d | %s |%s\n", g.Name, g.Scenarios, g.Pass1, g.PassK,
			g.PromptTokens, g.CompletionTokens, cost(g.Cost), wall(g.WallMS))
	}
	b.WriteString("\n## By scenario\n\n")
	fmt.Fprintf(&b, "| scenario | category | expects | pass@1 | pass@k | turns | prompt | completion | cost |%s result |\n", wallHead)
	fmt.Fprintf(&b, "|---|---|---|---:|---:|---:|---:|---:|---:|%s---|\n", wallSep)
	for _, s := range sc.Scenarios {
		judge := ""
		for _, r := range s.Results {
			if r.Judge != nil && r.Judge.Error == "" {
				judge = fmt.Sprintf(" (judge: cause %d, evidence %d, explanation %d)", r.Judge.RootCause, r.Judge.Evidence, r.Judge.Explanation)
				break
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.2f | %t | %.1f | %d | %d | %s |%s %s%s |\n", s.Name, s.Category, s.Expects, s.Pass1, s.PassK, s.Turns,
			s.PromptTokens, s.CompletionTokens, cost(s.Cost), wall(s.WallMS), mdCell(s.Reason), judge)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// Wilson is the Wilson score interval (95%) of passes out of n: the range
// of pass rates the runs cannot tell apart.
func Wilson(passes, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	const z = 1.959964
	p := float64(passes) / float64(n)
	nf := float64(n)
	d := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / d
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return math.Max(0, c-h), math.Min(1, c+h)
}

// graded is the runs of a scenario that were graded.
func (s ScenarioScore) graded() int { return s.Runs - s.Errors }

// Compare lists what changed from old to new. A scenario regressed only
// when its pass rate fell beyond what the runs can explain: the new Wilson
// interval lies wholly below the old one (with one run each, a single
// flip is noise and is reported as such). The total is compared the same
// way over all graded runs. Scenarios present in one scorecard only are
// listed as new or removed. It returns the number of regressions.
func Compare(w io.Writer, old, new Scorecard) int {
	prev := map[string]ScenarioScore{}
	for _, s := range old.Scenarios {
		prev[s.Name] = s
	}
	regressions := 0
	seen := map[string]bool{}
	for _, s := range new.Scenarios {
		seen[s.Name] = true
		p, ok := prev[s.Name]
		if !ok {
			fmt.Fprintf(w, "new       %s: pass@1 %.2f\n", s.Name, s.Pass1)
			continue
		}
		_, newHi := Wilson(s.Passes, s.graded())
		oldLo, _ := Wilson(p.Passes, p.graded())
		_, oldHi := Wilson(p.Passes, p.graded())
		newLo, _ := Wilson(s.Passes, s.graded())
		switch {
		case newHi < oldLo:
			regressions++
			fmt.Fprintf(w, "REGRESSED %s: pass@1 %.2f -> %.2f, beyond noise (%d/%d -> %d/%d) (%s)\n", s.Name, p.Pass1, s.Pass1,
				p.Passes, p.graded(), s.Passes, s.graded(), s.Reason)
		case newLo > oldHi:
			fmt.Fprintf(w, "improved  %s: pass@1 %.2f -> %.2f\n", s.Name, p.Pass1, s.Pass1)
		case s.Pass1 < p.Pass1:
			fmt.Fprintf(w, "noise     %s: pass@1 %.2f -> %.2f, within what %d/%d runs can explain (%s)\n", s.Name, p.Pass1, s.Pass1,
				p.graded(), s.graded(), s.Reason)
		case s.Pass1 > p.Pass1:
			fmt.Fprintf(w, "noise     %s: pass@1 %.2f -> %.2f, within what the runs can explain\n", s.Name, p.Pass1, s.Pass1)
		}
		if s.Errors > 0 {
			fmt.Fprintf(w, "errors    %s: %d run(s) ended on a system failure\n", s.Name, s.Errors)
		}
		if p.PromptTokens > 0 && s.PromptTokens > p.PromptTokens*5/4 {
			fmt.Fprintf(w, "tokens    %s: prompt tokens %d -> %d\n", s.Name, p.PromptTokens, s.PromptTokens)
		}
	}
	for _, s := range old.Scenarios {
		if !seen[s.Name] {
			fmt.Fprintf(w, "removed   %s (in the old scorecard only)\n", s.Name)
		}
	}
	// The total compares the scenarios both scorecards hold.
	tally := func(sc Scorecard) (int, int) {
		p, n := 0, 0
		for _, s := range sc.Scenarios {
			if _, inOld := prev[s.Name]; seen[s.Name] && inOld {
				p += s.Passes
				n += s.graded()
			}
		}
		return p, n
	}
	op, on := tally(old)
	np, nn := tally(new)
	oLo, _ := Wilson(op, on)
	_, nHi := Wilson(np, nn)
	total := "within noise"
	if nn > 0 && on > 0 && nHi < oLo {
		regressions++
		total = "REGRESSED beyond noise"
	}
	fmt.Fprintf(w, "total pass@1 %.2f -> %.2f, pass@k %.2f -> %.2f (%s); %d regression(s)\n",
		old.Total.Pass1, new.Total.Pass1, old.Total.PassK, new.Total.PassK, total, regressions)
	return regressions
}
