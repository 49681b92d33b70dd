package alerts

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/alertmanager/matcher/parse"
	"github.com/prometheus/alertmanager/pkg/labels"
)

// Matcher is one label matcher: name=value, name!=value, name=~regex or
// name!~regex, in the shape Alertmanager's v2 API takes for silences.
// Reading, writing and matching are Alertmanager's own (pkg/labels), so a
// matcher means here what it means to the Alertmanager it is sent to.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

// maxMatcherLen bounds one matcher as given.
const maxMatcherLen = 1024

// ParseMatcher reads one matcher the way Alertmanager (0.27 and later, in
// its default mode) reads a filter: with its UTF-8 parser first, so a
// quoted label name such as "service.name"="checkout" works, then with its
// classic parser for the looser forms older configs use (x=, a value with
// spaces left unquoted). A regex must compile; Alertmanager anchors it.
func ParseMatcher(s string) (Matcher, error) {
	if len(s) > maxMatcherLen {
		return Matcher{}, fmt.Errorf("longer than %d characters", maxMatcherLen)
	}
	am, err := parse.Matcher(s)
	if err != nil {
		classic, cerr := labels.ParseMatcher(s)
		var bad *syntax.Error
		if errors.As(err, &bad) || errors.As(cerr, &bad) {
			return Matcher{}, fmt.Errorf("%q: the regex does not compile: %v", s, bad)
		}
		if cerr != nil {
			return Matcher{}, fmt.Errorf("%q is not one matcher (name=value, name!=value, name=~regex or name!~regex; quote a name or value with spaces or punctuation): %v", s, err)
		}
		am = classic
	}
	if am.Name == "" {
		return Matcher{}, fmt.Errorf("%q: the label name is empty", s)
	}
	if !utf8.ValidString(am.Name) || !utf8.ValidString(am.Value) {
		return Matcher{}, fmt.Errorf("%q: names and values must be UTF-8", s)
	}
	if strings.ContainsAny(am.Value, "\x00\n") {
		return Matcher{}, fmt.Errorf("%q: the value must be one line", s)
	}
	return matcherOf(am), nil
}

// matcherOf converts Alertmanager's matcher to the API shape.
func matcherOf(am *labels.Matcher) Matcher {
	m := Matcher{Name: am.Name, Value: am.Value}
	switch am.Type {
	case labels.MatchEqual:
		m.IsEqual = true
	case labels.MatchRegexp:
		m.IsEqual, m.IsRegex = true, true
	case labels.MatchNotRegexp:
		m.IsRegex = true
	}
	return m
}

// am converts back to Alertmanager's matcher. It fails only for a regex
// that does not compile, which ParseMatcher never returns.
func (m Matcher) am() (*labels.Matcher, error) {
	t := labels.MatchNotEqual
	switch {
	case m.IsRegex && m.IsEqual:
		t = labels.MatchRegexp
	case m.IsRegex:
		t = labels.MatchNotRegexp
	case m.IsEqual:
		t = labels.MatchEqual
	}
	return labels.NewMatcher(t, m.Name, m.Value)
}

// String writes the matcher the way Alertmanager's filter parameter reads
// it: the value quoted, and the name too when it is not a classic one.
func (m Matcher) String() string {
	am, err := m.am()
	if err != nil {
		// A regex that does not compile: write it all the same, quoted,
		// so the person reading sees what was asked.
		am = &labels.Matcher{Type: labels.MatchRegexp, Name: m.Name, Value: m.Value}
		if !m.IsEqual {
			am.Type = labels.MatchNotRegexp
		}
	}
	return am.String()
}

// MatchesEmpty reports whether the matcher matches a missing label (the
// empty string). A silence made only of such matchers would silence
// everything, and Alertmanager refuses it.
func (m Matcher) MatchesEmpty() bool {
	return m.Matches(nil)
}

// Matches reports whether labels satisfy the matcher. A regex that does
// not compile matches nothing.
func (m Matcher) Matches(labels map[string]string) bool {
	am, err := m.am()
	if err != nil {
		return false
	}
	return am.Matches(labels[m.Name])
}

// parseMatchers reads a list, naming the bad one.
func parseMatchers(list []string) ([]Matcher, error) {
	out := make([]Matcher, 0, len(list))
	for i, s := range list {
		m, err := ParseMatcher(s)
		if err != nil {
			return nil, fmt.Errorf("matchers[%d]: %w", i, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// joinMatchers writes matchers for people and cards.
func joinMatchers(ms []Matcher) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ", ")
}
