package alerts

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Matcher is one label matcher: name=value, name!=value, name=~regex or
// name!~regex, as Alertmanager and PromQL write them.
type Matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// maxMatcherLen bounds one matcher as given.
const maxMatcherLen = 1024

// ParseMatcher reads name=value, name!=value, name=~regex or name!~regex.
// The value may be double-quoted with Go escapes ("a \"b\""); a regex must
// compile (it is anchored, as Alertmanager anchors it).
func ParseMatcher(s string) (Matcher, error) {
	if len(s) > maxMatcherLen {
		return Matcher{}, fmt.Errorf("longer than %d characters", maxMatcherLen)
	}
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "=!")
	if i <= 0 {
		return Matcher{}, fmt.Errorf("%q is not name=value, name!=value, name=~regex or name!~regex", s)
	}
	name := strings.TrimSpace(s[:i])
	if !labelName.MatchString(name) {
		return Matcher{}, fmt.Errorf("%q: %q is not a label name", s, name)
	}
	var m Matcher
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "=~"):
		m, rest = Matcher{IsRegex: true, IsEqual: true}, rest[2:]
	case strings.HasPrefix(rest, "!~"):
		m, rest = Matcher{IsRegex: true}, rest[2:]
	case strings.HasPrefix(rest, "!="):
		m, rest = Matcher{}, rest[2:]
	case strings.HasPrefix(rest, "="):
		m, rest = Matcher{IsEqual: true}, rest[1:]
	default:
		return Matcher{}, fmt.Errorf("%q: the operator must be =, !=, =~ or !~", s)
	}
	m.Name = name
	value := strings.TrimSpace(rest)
	if strings.HasPrefix(value, `"`) {
		uq, err := strconv.Unquote(value)
		if err != nil {
			return Matcher{}, fmt.Errorf("%q: the quoted value is not closed or has a bad escape", s)
		}
		value = uq
	}
	if strings.ContainsAny(value, "\x00\n") {
		return Matcher{}, fmt.Errorf("%q: the value must be one line", s)
	}
	if m.IsRegex {
		if _, err := regexp.Compile("^(?:" + value + ")$"); err != nil {
			return Matcher{}, fmt.Errorf("%q: the regex does not compile: %v", s, err)
		}
	}
	m.Value = value
	return m, nil
}

// String writes the matcher the way Alertmanager's filter parameter reads
// it, the value quoted.
func (m Matcher) String() string {
	op := "="
	switch {
	case m.IsRegex && m.IsEqual:
		op = "=~"
	case m.IsRegex:
		op = "!~"
	case !m.IsEqual:
		op = "!="
	}
	return m.Name + op + strconv.Quote(m.Value)
}

// MatchesEmpty reports whether the matcher matches a missing label (the
// empty string). A silence made only of such matchers would silence
// everything, and Alertmanager refuses it.
func (m Matcher) MatchesEmpty() bool {
	var hit bool
	if m.IsRegex {
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		hit = err == nil && re.MatchString("")
	} else {
		hit = m.Value == ""
	}
	return hit == m.IsEqual
}

// Matches reports whether labels satisfy the matcher.
func (m Matcher) Matches(labels map[string]string) bool {
	v := labels[m.Name]
	var hit bool
	if m.IsRegex {
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		hit = err == nil && re.MatchString(v)
	} else {
		hit = v == m.Value
	}
	return hit == m.IsEqual
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
