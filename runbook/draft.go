package runbook

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/policy"
)

// Draft is a runbook written from a resolved investigation, waiting for a
// person's approval before Save writes it.
type Draft struct {
	// Name is the file name it would be saved under.
	Name    string
	Title   string
	Content string
	// Summary is one line for the approval card: the cause and the fix.
	Summary string
}

// reCause finds the sentences of an answer that name a cause.
var reCause = regexp.MustCompile(`(?i)\b(root cause|caused by|cause[sd]?\s+(?:is|was|are|were)|because|due to|the reason|as a result of|led to|leads to|result(?:s|ed)? (?:from|in)|triggered by|culprit|the (?:problem|issue) (?:is|was))\b`)

// NamesCause reports whether an answer names a cause: a sentence that says
// why, not only what (a deterministic reading, no model).
func NamesCause(answer string) bool { return len(causeSentences(answer)) > 0 }

func causeSentences(answer string) []string {
	var out []string
	for _, s := range sentences(answer) {
		if reCause.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}

var reSentenceEnd = regexp.MustCompile(`([.!?])\s+|\n+`)

// sentences splits Markdown prose into sentences, list items and lines.
func sentences(text string) []string {
	var out []string
	for _, s := range reSentenceEnd.Split(text, -1) {
		s = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), "-*•>#0123456789. "))
		if len(s) > 3 {
			out = append(out, s)
		}
	}
	return out
}

// Eligible says whether a run can become a runbook: it answered, the
// answer names a cause, and a change it made was verified. The reason
// explains a refusal to people.
func Eligible(rec *agent.RunRecord) (bool, string) {
	switch {
	case rec == nil || !rec.Answered:
		return false, "that run ended without an answer"
	case !NamesCause(rec.Answer):
		return false, "the answer names no cause"
	case rec.Wrote && !rec.Verified:
		return false, "a change ran but was not verified"
	}
	return true, ""
}

// Limits of a draft.
const (
	maxEvidence   = 12
	maxSymptoms   = 8
	maxTitle      = 80
	maxSummary    = 280
	maxAnswerDraw = 3000
)

// Draft writes a runbook from a finished run: symptoms (the question and
// what the tool results showed), the evidence commands in order, the cause
// (the answer's sentences that name one), the fix (the changes that ran)
// and its verification (the reads after the last change). known are the
// session's facts; those from this run's calls are used. The file name is
// free in the directory at the time of drafting.
func (l *Library) Draft(rec *agent.RunRecord, known []facts.Fact, at time.Time) (Draft, error) {
	if ok, why := Eligible(rec); !ok {
		return Draft{}, fmt.Errorf("runbook: cannot draft from run %s: %s", rec.ID, why)
	}
	title := titleOf(rec.Question)
	calls := map[string]bool{}
	var resources []string
	lastWrite := -1
	for i, st := range rec.Steps {
		calls[st.CallID] = true
		if st.Target != "" && !slices.Contains(resources, st.Target) {
			resources = append(resources, st.Target)
		}
		if st.Kind == policy.KindWrite && st.OK {
			lastWrite = i
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n## Symptoms\n\n- Reported: %s\n", title, quoteLine(rec.Question))
	n := 0
	for _, f := range known {
		if !calls[f.Source] || n >= maxSymptoms {
			continue
		}
		switch f.Category {
		case facts.Error, facts.Service, facts.Metric, facts.Negative, facts.Exit, facts.Port, facts.Version:
			fmt.Fprintf(&b, "- %s: %s\n", f.Key, f.Value)
			n++
		}
	}
	b.WriteString("\n## Evidence\n\nWhat showed it, in order:\n\n")
	n = 0
	for i, st := range rec.Steps {
		if st.Kind == policy.KindWrite || !st.OK || n >= maxEvidence || (lastWrite >= 0 && i > lastWrite) {
			continue
		}
		n++
		fmt.Fprintf(&b, "%d. %s\n", n, stepLine(st))
	}
	if n == 0 {
		b.WriteString("(no read succeeded before the fix)\n")
	}
	b.WriteString("\n## Cause\n\n")
	for _, s := range causeSentences(rec.Answer) {
		fmt.Fprintf(&b, "%s\n", ensureStop(s))
	}
	b.WriteString("\n## Fix\n\n")
	fixes := 0
	for _, st := range rec.Steps {
		if st.Kind == policy.KindWrite && st.OK {
			fixes++
			fmt.Fprintf(&b, "- %s (a change: it needs approval)\n", stepLine(st))
		}
	}
	if fixes == 0 {
		b.WriteString("No change was made in the investigation this runbook comes from; see the answer below for what was suggested.\n")
	}
	b.WriteString("\n## Verification\n\n")
	verified := 0
	if lastWrite >= 0 {
		for _, st := range rec.Steps[lastWrite+1:] {
			if st.Kind != policy.KindWrite && st.OK {
				verified++
				fmt.Fprintf(&b, "- %s\n", stepLine(st))
			}
		}
	}
	if verified == 0 {
		b.WriteString("Repeat the evidence reads above and compare.\n")
	}
	answer := rec.Answer
	if len(answer) > maxAnswerDraw {
		answer = answer[:maxAnswerDraw] + "…"
	}
	b.WriteString("\n## Answer given\n\n")
	for _, line := range strings.Split(strings.TrimSpace(answer), "\n") {
		b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
	}

	fm := FrontMatter{
		Title:     title,
		Keywords:  keywordsOf(rec.Question, 8),
		Resources: resources,
		Source:    fmt.Sprintf("vigil run %s, %s, approved before saving", rec.ID, at.UTC().Format("2006-01-02")),
	}
	content, err := Render(fm, b.String())
	if err != nil {
		return Draft{}, err
	}
	name := l.freeName(slug(title))
	cause := "no cause"
	if cs := causeSentences(rec.Answer); len(cs) > 0 {
		cause = cs[0]
	}
	fix := "no change made"
	for _, st := range rec.Steps {
		if st.Kind == policy.KindWrite && st.OK {
			fix = stepLine(st)
			break
		}
	}
	summary := fmt.Sprintf("Save runbook %q (%d evidence steps). Cause: %s Fix: %s", title, countEvidence(rec, lastWrite), ensureStop(cause), fix)
	return Draft{Name: name, Title: title, Content: content, Summary: clipRunes(summary, maxSummary)}, nil
}

func countEvidence(rec *agent.RunRecord, lastWrite int) int {
	n := 0
	for i, st := range rec.Steps {
		if st.Kind != policy.KindWrite && st.OK && (lastWrite < 0 || i <= lastWrite) {
			n++
		}
	}
	return min(n, maxEvidence)
}

// stepLine is a step as a runbook shows it: "`read exec` on `web1`: `df -h`".
func stepLine(st agent.Step) string {
	what := st.Tool
	if st.Action != "" {
		what += " " + st.Action
	}
	s := "`" + what + "`"
	if st.Target != "" {
		s += " on `" + st.Target + "`"
	}
	if st.Command != "" {
		s += ": `" + strings.ReplaceAll(clipRunes(strings.Join(strings.Fields(st.Command), " "), 200), "`", "'") + "`"
	}
	return s
}

var reAtMention = regexp.MustCompile(`@([\w.-]+)`)

// titleOf turns a question into a title.
func titleOf(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	q = strings.TrimRight(q, "?!. ")
	q = reAtMention.ReplaceAllString(q, "$1")
	if q == "" {
		return "Untitled investigation"
	}
	q = clipRunes(q, maxTitle)
	return strings.ToUpper(q[:1]) + q[1:]
}

// keywordsOf picks a question's words, in order, for the front matter.
func keywordsOf(q string, n int) []string {
	var out []string
	for _, t := range tokens(q) {
		if len(t) < 3 || slices.Contains(out, t) {
			continue
		}
		out = append(out, t)
		if len(out) == n {
			break
		}
	}
	return out
}

var reNonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(title string) string {
	s := strings.Trim(reNonSlug.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if len(s) > 60 {
		s = strings.TrimRight(s[:60], "-")
	}
	if s == "" {
		s = "runbook"
	}
	return s
}

// freeName is base.md, or base-2.md, base-3.md… whichever is free.
func (l *Library) freeName(base string) string {
	name := base + ".md"
	for i := 2; l.Exists(name) && i < 1000; i++ {
		name = base + "-" + strconv.Itoa(i) + ".md"
	}
	return name
}

func quoteLine(s string) string {
	return strconv.Quote(clipRunes(strings.Join(strings.Fields(s), " "), 300))
}

func ensureStop(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Offer renders matches as the block the model receives with the
// question, each with its path, the best ones with their text; "" when
// there are none.
func (l *Library) Offer(ms []Match) string {
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Runbooks that may apply (from the team's runbook directory; follow one only where it fits what the tools show, " +
		"and cite its path in your answer when you use it):")
	for i, m := range ms {
		fmt.Fprintf(&b, "\n\n%d. %s: %q (matched by %s)", i+1, l.Shown(m.Path), m.Title, m.Why)
		if i < 2 {
			body := m.Body
			if len(body) > offerBodyLimit {
				cut := offerBodyLimit
				for cut > 0 && body[cut]&0xC0 == 0x80 {
					cut--
				}
				body = body[:cut] + "\n[… cut; the whole runbook is " + strconv.Itoa(len(m.Body)) + " bytes]"
			}
			b.WriteString("\n" + body)
		}
	}
	return b.String()
}

// offerBodyLimit bounds each runbook text in the offer.
const offerBodyLimit = 1500
