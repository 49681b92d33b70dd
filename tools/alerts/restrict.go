package alerts

import (
	"context"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"

	"github.com/vigilops/vigil/tools"
)

// Which silences name something. A silence mutes every alert all of its
// matchers match, so one whose matchers accept any value of the labels they
// name mutes every alert: alertname!="", alertname=~"HighLatency|.+",
// service=~".*x.*|.+". Deciding in general whether a regex accepts every
// string is hard, so the guard is an allowlist: a silence needs at least
// one matcher that is provably restrictive, and anything the analysis does
// not understand is not.
//
// A matcher is restrictive when it does not match the empty string (a
// missing label) and it confines the values it accepts by one of their
// ends:
//
//   - name="value" with value not empty;
//   - name=~regex whose every match starts with one of a few characters
//     (a literal prefix: "web-.*", "checkout|cart", "(?i)high.*") or ends
//     with one of a few characters (a literal suffix: ".*-canary").
//
// Negative matchers (!=, !~) are never restrictive: they accept every
// value but the ones they name. The proof is constructive: a one-character
// value outside the few allowed first (or last) characters is a value of
// the label the matcher refuses, so the silence does not mute every alert
// that carries the label.

// maxNarrowRunes is how many characters a match may start (or end) with for
// the matcher to count as confined: a handful of literal alternatives and
// their case variants, never a class such as [a-z] or [^x].
const maxNarrowRunes = 8

// Restrictive reports whether the matcher provably accepts only some of
// the non-empty values of its label, and not a missing one.
func (m Matcher) Restrictive() bool {
	if !m.IsEqual {
		return false
	}
	if !m.IsRegex {
		return m.Value != ""
	}
	re, err := syntax.Parse(m.Value, syntax.Perl)
	if err != nil {
		return false
	}
	re = re.Simplify()
	a := analyse(re)
	return !a.nullable && (a.first.narrow() || a.last.narrow())
}

// runeSet is a set of characters that stays exact while it is small;
// past maxNarrowRunes it is only known to be wide.
type runeSet struct {
	wide  bool
	runes map[rune]bool
}

func (s runeSet) narrow() bool { return !s.wide }

func (s *runeSet) add(r rune, fold bool) {
	if s.wide {
		return
	}
	if s.runes == nil {
		s.runes = map[rune]bool{}
	}
	s.runes[r] = true
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			s.runes[f] = true
		}
	}
	if len(s.runes) > maxNarrowRunes {
		s.wide, s.runes = true, nil
	}
}

func (s *runeSet) union(o runeSet) {
	if o.wide {
		s.wide, s.runes = true, nil
		return
	}
	for r := range o.runes {
		s.add(r, false)
	}
}

// shape is what the analysis knows of a regex: whether it matches the
// empty string, and the characters its non-empty matches may start and
// end with.
type shape struct {
	nullable    bool
	first, last runeSet
}

var wideSet = runeSet{wide: true}

// analyse computes the shape of a simplified regex. Any operator it does
// not know gives a wide, nullable shape: unknown means unrestricted.
func analyse(re *syntax.Regexp) shape {
	switch re.Op {
	case syntax.OpNoMatch:
		return shape{}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return shape{nullable: true}
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return shape{nullable: true}
		}
		fold := re.Flags&syntax.FoldCase != 0
		var s shape
		s.first.add(re.Rune[0], fold)
		s.last.add(re.Rune[len(re.Rune)-1], fold)
		return s
	case syntax.OpCharClass:
		var set runeSet
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if hi-lo >= maxNarrowRunes {
				set = wideSet
				break
			}
			for r := lo; r <= hi; r++ {
				set.add(r, false)
			}
		}
		return shape{first: set, last: set}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return shape{first: wideSet, last: wideSet}
	case syntax.OpCapture:
		return analyse(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		s := analyse(re.Sub[0])
		s.nullable = true
		return s
	case syntax.OpPlus:
		return analyse(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max == 0 {
			return shape{nullable: true}
		}
		s := analyse(re.Sub[0])
		s.nullable = s.nullable || re.Min == 0
		return s
	case syntax.OpConcat:
		subs := make([]shape, len(re.Sub))
		out := shape{nullable: true}
		for i, sub := range re.Sub {
			subs[i] = analyse(sub)
			out.nullable = out.nullable && subs[i].nullable
		}
		// The first character comes from the first element that is not
		// empty; elements that can be empty let the next one's through.
		for _, s := range subs {
			out.first.union(s.first)
			if !s.nullable {
				break
			}
		}
		for i := len(subs) - 1; i >= 0; i-- {
			out.last.union(subs[i].last)
			if !subs[i].nullable {
				break
			}
		}
		return out
	case syntax.OpAlternate:
		var out shape
		for _, sub := range re.Sub {
			s := analyse(sub)
			out.nullable = out.nullable || s.nullable
			out.first.union(s.first)
			out.last.union(s.last)
		}
		return out
	}
	return shape{nullable: true, first: wideSet, last: wideSet}
}

// checkRestrictive refuses a silence none of whose matchers is
// restrictive, saying why for each.
func checkRestrictive(ms []Matcher) error {
	if slices.ContainsFunc(ms, Matcher.Restrictive) {
		return nil
	}
	why := make([]string, len(ms))
	for i, m := range ms {
		why[i] = m.String() + " " + unrestrictedWhy(m)
	}
	return tools.FieldErrorf("matchers", "no matcher names something specific, so the silence could silence every alert (%s); "+
		"add one that does: an equality such as alertname=\"HighLatency\", or a regex of literal alternatives or with a literal "+
		"prefix such as service=~\"checkout|cart\" or instance=~\"web-.*\"", strings.Join(why, "; "))
}

// unrestrictedWhy says why a matcher is not restrictive.
func unrestrictedWhy(m Matcher) string {
	switch {
	case !m.IsEqual && m.IsRegex:
		return "accepts every value its regex does not match, and alerts without the label"
	case !m.IsEqual:
		return "accepts every value but one, and alerts without the label"
	case !m.IsRegex:
		return "matches only alerts without the label"
	case m.MatchesEmpty():
		return "also matches alerts without the label"
	}
	return "can match any value: it has no literal start or end that confines it"
}

// coverage is what a silence would mute among the alerts firing now.
type coverage struct {
	// Active counts the alerts Alertmanager has active (neither silenced
	// nor inhibited); Matched those the silence matches.
	Active, Matched int
	// Names are the matched alerts' names, sorted, at most maxCoverNames.
	Names []string
}

const maxCoverNames = 8

// coverageOf asks Alertmanager which of its active alerts ms match.
func coverageOf(ctx context.Context, api API, ms []Matcher) (coverage, error) {
	as, err := api.Alerts(ctx, nil)
	if err != nil {
		return coverage{}, err
	}
	var c coverage
	seen := map[string]bool{}
	for _, a := range as {
		if a.Status.State == "suppressed" {
			continue
		}
		c.Active++
		if !slices.ContainsFunc(ms, func(m Matcher) bool { return !m.Matches(a.Labels) }) {
			c.Matched++
			if n := a.Labels["alertname"]; !seen[n] {
				seen[n] = true
				c.Names = append(c.Names, n)
			}
		}
	}
	slices.Sort(c.Names)
	if len(c.Names) > maxCoverNames {
		c.Names = append(c.Names[:maxCoverNames], "…")
	}
	return c, nil
}

// namesAlert reports whether ms pin the alert's name: alertname="X".
func namesAlert(ms []Matcher) bool {
	return slices.ContainsFunc(ms, func(m Matcher) bool {
		return m.Name == "alertname" && m.IsEqual && !m.IsRegex && m.Value != ""
	})
}

// refusal says why a silence that mutes every firing alert is refused, or
// "" when it is not: a silence that covers everything firing must name the
// alert it is for, else it hides the next incident along with this one.
func (c coverage) refusal(ms []Matcher) string {
	if c.Active == 0 || c.Matched < c.Active || namesAlert(ms) {
		return ""
	}
	return fmt.Sprintf("the silence matches every alert firing now (all %d: %s), so it would mute the next incident too; "+
		"name the alert it is for with alertname=\"…\" or narrow the other matchers", c.Active, strings.Join(c.Names, ", "))
}

// String is the card's line: how much of what fires now it mutes.
func (c coverage) String() string {
	switch {
	case c.Active == 0:
		return "no alert is firing now"
	case c.Matched == 0:
		return fmt.Sprintf("none of the %d alerts firing now", c.Active)
	}
	return fmt.Sprintf("%d of the %d alerts firing now (%s)", c.Matched, c.Active, strings.Join(c.Names, ", "))
}
