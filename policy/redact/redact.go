// Package redact removes secrets from text (SPEC P9). It is a filter, not a
// decision: everything vigil posts to chat, logs or audits goes through a
// Redactor first, whatever policy decided about the call that produced it.
//
// The rules are a hand-kept table rather than a
// detector library: the maintained detectors (gitleaks, trufflehog) are
// scanners with hundreds of rules and heavy dependency trees, built to find
// secrets in repositories, not to rewrite a tool's output in place within a
// millisecond. The table covers what shows up in infrastructure output and
// is tested case by case, positive and negative, in redact_test.go.
//
// Speed comes from triggers: each rule names the literal substrings without
// which it cannot match. The text is lowered once and searched for every
// trigger; text with none comes back unchanged without running a regexp, and
// otherwise a rule's regexp runs only on the lines holding its trigger.
package redact

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// redactedFmt is the replacement: it keeps a hint of what was there.
const redactedFmt = "[REDACTED:%s]"

// redactedMarker starts every replacement; values that already start with it
// are left alone, which keeps Redact idempotent.
const redactedMarker = "[REDACTED"

// redactRule is one kind of secret.
type redactRule struct {
	kind string
	// triggers are lowercase literals, one of which every match contains.
	triggers []string
	re       *regexp.Regexp
	// groups are the submatches that may hold the secret; the first that
	// took part in the match is replaced. None means the whole match.
	groups []int
	// kindOf names the secret from the match (submatch index pairs),
	// overriding kind; optional.
	kindOf func(s string, m []int) string
	// keep reports a value that only looks like a secret (a placeholder,
	// a variable reference); optional.
	keep func(s string, m []int, value string) bool
	// replacement overrides the [REDACTED:kind] form.
	replacement string
	// multiline rules run on the whole text, before the per-line rules.
	multiline bool
	// needSep: a trigger counts only when a key=value separator follows it.
	needSep bool
}

// Pattern is an operator's own secret format, added to the built-in
// rules by New.
type Pattern struct {
	// Kind names it in the replacement: [REDACTED:<kind>].
	Kind string
	// Regexp matches the secret. A capture group, if any, marks the part to
	// replace; otherwise the whole match is replaced. It must not match
	// across lines.
	Regexp string
}

// Redactor replaces secrets in text. The zero value is not usable; use
// New, or the package function Redact for the built-in rules. A
// Redactor is immutable and safe for concurrent use.
type Redactor struct {
	rules []redactRule
}

// New returns a Redactor with the built-in rules plus extra ones,
// which run after them.
func New(extra ...Pattern) (*Redactor, error) {
	r := &Redactor{rules: append([]redactRule(nil), builtinRedactRules...)}
	for i, p := range extra {
		if p.Kind == "" || p.Regexp == "" {
			return nil, fmt.Errorf("redact pattern %d: kind and regexp are both required", i)
		}
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("redact pattern %d (%s): %w", i, p.Kind, err)
		}
		var groups []int
		for g := 1; g <= re.NumSubexp(); g++ {
			groups = append(groups, g)
		}
		if strings.Contains(p.Regexp, `\n`) {
			return nil, fmt.Errorf("redact pattern %d (%s): must not match across lines", i, p.Kind)
		}
		r.rules = append(r.rules, redactRule{kind: p.Kind, re: re, groups: groups})
	}
	return r, nil
}

// defaultRedactor holds the built-in rules; like them, it never changes.
var defaultRedactor = &Redactor{rules: builtinRedactRules}

// String replaces the secrets in s with the built-in rules.
func String(s string) string { return defaultRedactor.Redact(s) }

// Redact replaces the secrets in s.
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	lower := redactLower(s)

	// Whole-text rules first; they may change line structure.
	changed := false
	for i := range r.rules {
		ru := &r.rules[i]
		if ru.multiline && redactTriggered(lower, ru.triggers) {
			if out, ok := ru.apply(s); ok {
				s, changed = out, true
			}
		}
	}
	if changed {
		lower = redactLower(s)
	}

	// Find the lines each line rule could match: those holding one of its
	// triggers (followed by a separator, for key=value rules).
	var (
		starts []int         // line starts, computed on the first hit
		marks  map[int][]int // line number → rules to run there, in order
		always []int         // rules without triggers
	)
	for i := range r.rules {
		ru := &r.rules[i]
		if ru.multiline {
			continue
		}
		if len(ru.triggers) == 0 {
			always = append(always, i)
			continue
		}
		for _, t := range ru.triggers {
			for off := 0; ; {
				j := strings.Index(lower[off:], t)
				if j < 0 {
					break
				}
				p := off + j
				off = p + len(t)
				if ru.needSep && !redactSepFollows(lower, off) {
					continue
				}
				if starts == nil {
					starts = redactLineStarts(lower)
					marks = make(map[int][]int)
				}
				line := sort.SearchInts(starts, p+1) - 1
				if m := marks[line]; len(m) == 0 || m[len(m)-1] != i {
					marks[line] = append(m, i)
				}
			}
		}
	}
	if len(marks) == 0 && len(always) == 0 {
		return s
	}

	var b strings.Builder
	last := 0 // end of what has been copied to b
	dirty := false
	lines := make([]int, 0, len(marks))
	for l := range marks {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	for _, l := range lines {
		start, end := starts[l], len(s)
		if l+1 < len(starts) {
			end = starts[l+1]
		}
		line := s[start:end]
		out := line
		for _, i := range marks[l] {
			if o, ok := r.rules[i].apply(out); ok {
				out = o
			}
		}
		if out == line {
			continue
		}
		if !dirty {
			dirty = true
			b.Grow(len(s) + 64)
		}
		b.WriteString(s[last:start])
		b.WriteString(out)
		last = end
	}
	if dirty {
		b.WriteString(s[last:])
		s = b.String()
	}
	for _, i := range always {
		if out, ok := r.rules[i].apply(s); ok {
			s = out
		}
	}
	return s
}

// redactLineStarts returns the offset of every line's first byte.
func redactLineStarts(s string) []int {
	starts := []int{0}
	for off := 0; ; {
		j := strings.IndexByte(s[off:], '\n')
		if j < 0 || off+j+1 == len(s) {
			return starts
		}
		off += j + 1
		starts = append(starts, off)
	}
}

// redactSepFollows reports whether a key=value separator follows offset off: an
// optional closing quote (escaped or not), blanks, then ':' or '='.
func redactSepFollows(lower string, off int) bool {
	if off < len(lower) && lower[off] == '\\' {
		off++
	}
	if off < len(lower) && (lower[off] == '"' || lower[off] == '\'') {
		off++
	}
	for off < len(lower) && (lower[off] == ' ' || lower[off] == '\t') {
		off++
	}
	return off < len(lower) && (lower[off] == ':' || lower[off] == '=')
}

// redactTriggered reports whether lower holds one of the triggers.
func redactTriggered(lower string, triggers []string) bool {
	for _, t := range triggers {
		if strings.Contains(lower, t) {
			return true
		}
	}
	return false
}

// redactLower lowers ASCII letters only, so byte offsets in the result are
// offsets in s.
func redactLower(s string) string {
	hasUpper := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			hasUpper = true
			break
		}
	}
	if !hasUpper {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// apply replaces this rule's matches in s; ok is false when nothing changed.
func (ru *redactRule) apply(s string) (string, bool) {
	ms := ru.re.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s, false
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		start, end := m[0], m[1]
		for _, g := range ru.groups {
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				start, end = m[2*g], m[2*g+1]
				break
			}
		}
		value := s[start:end]
		if value == "" || strings.HasPrefix(value, redactedMarker) {
			continue
		}
		if ru.keep != nil && ru.keep(s, m, value) {
			continue
		}
		repl := ru.replacement
		if repl == "" {
			kind := ru.kind
			if ru.kindOf != nil {
				kind = ru.kindOf(s, m)
			}
			repl = fmt.Sprintf(redactedFmt, kind)
		}
		if value == repl {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(repl)
		last = end
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// redactSubmatch returns submatch g of m in s, or "".
func redactSubmatch(s string, m []int, g int) string {
	if 2*g+1 >= len(m) || m[2*g] < 0 {
		return ""
	}
	return s[m[2*g]:m[2*g+1]]
}

// redactPlaceholder reports values that stand for a secret without being one: a
// shell or template variable, a mask, an empty or boolean value, or a
// value another tool already redacted.
func redactPlaceholder(v string) bool {
	v = strings.Trim(v, `"'`)
	if v == "" {
		return true
	}
	switch v[0] {
	case '$', '<', '%', '{':
		return true
	}
	if strings.Trim(v, "*xX•.") == "" && len(v) >= 3 {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "nil", "yes", "no", "redacted", "data+omitted", "<redacted>", "required", "optional":
		return true
	}
	return strings.HasPrefix(v, redactedMarker)
}

// redactNSSSources are /etc/nsswitch.conf sources: "passwd: files systemd" is
// not a password.
var redactNSSSources = map[string]bool{
	"files": true, "compat": true, "db": true, "nis": true, "nisplus": true,
	"systemd": true, "sss": true, "ldap": true, "winbind": true, "dns": true,
}

// redactKeyKind names a key=value secret by its key.
func redactKeyKind(key string) string {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "pass") || strings.HasSuffix(k, "pwd"):
		return "password"
	case strings.Contains(k, "secret") && (strings.Contains(k, "aws") || strings.Contains(k, "access")):
		return "aws-secret-key"
	case strings.HasSuffix(k, "token"):
		return "token"
	case strings.Contains(k, "api"):
		return "api-key"
	case strings.Contains(k, "accountkey") || strings.Contains(k, "sharedaccesskey"):
		return "azure-key"
	case strings.Contains(k, "private"):
		return "private-key"
	default:
		return "secret"
	}
}

// The value forms of key=value secrets: a double-quoted string (JSON,
// shell), a single-quoted one, or a bare word up to whitespace or a
// separator of the surrounding syntax (&, ;, ',', closing brackets).
const redactValueForms = `(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"',;&}\])=][^\s"',;&}\]]*))`

var builtinRedactRules = []redactRule{
	{
		kind:      "private-key",
		multiline: true,
		triggers:  []string{"private key"},
		re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)` +
			`(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`),
	},
	{
		// scheme://user:pass@host keeps the user, as people need it to tell
		// connections apart.
		kind:        "url-password",
		triggers:    []string{"://"},
		re:          regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>]*:([^\s/?#"'<>]+)@`),
		groups:      []int{1},
		replacement: "***",
	},
	{
		kind:     "slack-webhook",
		triggers: []string{"hooks.slack.com"},
		re:       regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]+)`),
		groups:   []int{1},
	},
	{
		kind:     "azure-sas-signature",
		triggers: []string{"sig="},
		re:       regexp.MustCompile(`[?&]sig=([A-Za-z0-9%+/=_-]{16,})`),
		groups:   []int{1},
	},
	{
		kind:     "jwt",
		triggers: []string{"eyj"},
		re:       regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`),
	},
	{
		kind:     "github-token",
		triggers: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re:       regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,247})\b`),
	},
	{
		kind:     "gitlab-token",
		triggers: []string{"glpat-", "gldt-", "glrt-", "glptt-", "glsoat-", "glcbt-"},
		re:       regexp.MustCompile(`\bgl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_-]{20,}`),
	},
	{
		kind:     "slack-token",
		triggers: []string{"xox", "xapp-"},
		re:       regexp.MustCompile(`\b(?:xox[abposre](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})`),
	},
	{
		kind:     "aws-access-key-id",
		triggers: []string{"akia", "asia", "abia", "acca"},
		re:       regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`),
	},
	{
		kind:     "gcp-api-key",
		triggers: []string{"aiza"},
		re:       regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`),
	},
	{
		kind:     "gcp-oauth",
		triggers: []string{"ya29.", "gocspx-"},
		re:       regexp.MustCompile(`\b(?:ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[A-Za-z0-9_-]{20,})`),
	},
	{
		// OpenAI, Anthropic and Stripe style secret keys.
		kind:     "api-key",
		triggers: []string{"sk-", "sk_live_", "rk_live_", "npm_"},
		re:       regexp.MustCompile(`\b(?:sk-(?:proj-|svcacct-|admin-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}|[sr]k_live_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{36})\b`),
	},
	{
		// Authorization: Bearer x / Basic x / token x / x, as a header, a
		// curl -H argument or a JSON field.
		kind:     "authorization",
		triggers: []string{"authorization"},
		re: regexp.MustCompile(`(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?` +
			`(?:(bearer|basic|token|digest|negotiate|ntlm|apikey|sso-key)[ \t]+)?([^\s"',;]+)`),
		groups: []int{2},
		kindOf: func(s string, m []int) string {
			switch strings.ToLower(redactSubmatch(s, m, 1)) {
			case "bearer":
				return "bearer-token"
			case "basic":
				return "basic-auth"
			}
			return "authorization"
		},
		keep: func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// A bearer token outside a header ("Bearer eyJ…" in a log line).
		// It must hold a digit, so prose ("a bearer credential") is kept.
		kind:     "bearer-token",
		triggers: []string{"bearer"},
		re:       regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9\-._~+/]{8,}=*)`),
		groups:   []int{1},
		keep: func(_ string, _ []int, v string) bool {
			return !strings.ContainsAny(v, "0123456789")
		},
	},
	{
		kind:     "password",
		triggers: []string{" -u", "--user"},
		re:       regexp.MustCompile(`\bcurl\b[^\n]*?\s(?:-u|--user)[ \t]+["']?[^\s:"']+:([^\s"']+)`),
		groups:   []int{1},
		keep:     func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// mysql -pSECRET (the password glued to the flag).
		kind:     "password",
		triggers: []string{"mysql", "mariadb"},
		re:       regexp.MustCompile(`\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p([^\s"']+|"[^"\n]*"|'[^'\n]*')`),
		groups:   []int{1},
		keep:     func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// --password secret (a flag and its value as separate words).
		triggers: []string{"--pass", "--token", "--secret", "--api-key", "--apikey"},
		re: regexp.MustCompile(`(?i)(?:^|\s)(--(?:password|passwd|passphrase|token|secret|client-secret|api-key|apikey|auth-token|access-token))[ \t]+` +
			`(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"'-][^\s"']*))`),
		groups: []int{2, 3, 4},
		kindOf: func(s string, m []int) string { return redactKeyKind(redactSubmatch(s, m, 1)) },
		keep:   func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// key=value, key: value, "key": "value", KEY='value', Password=x;
		// for keys that end in a secret's name. The key must end there:
		// max_tokens, token_type, PasswordAuthentication are not secrets.
		// Every keyword ends in one of these.
		triggers: []string{"word", "passwd", "phrase", "pwd", "secret", "token", "key"},
		needSep:  true,
		re: regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|` +
			`api[_-]?key|access[_-]?key|private[_-]?key|secret[_-]?key|account[_-]?key|sharedaccesskey|auth[_-]?key))` +
			`["']?[ \t]*[:=][ \t]*` + redactValueForms),
		groups: []int{2, 3, 4},
		kindOf: func(s string, m []int) string { return redactKeyKind(redactSubmatch(s, m, 1)) },
		keep: func(s string, m []int, v string) bool {
			if redactPlaceholder(v) {
				return true
			}
			switch strings.ToLower(redactSubmatch(s, m, 1)) {
			case "pwd", "oldpwd": // the shell's working directory
				return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~")
			case "passwd": // /etc/nsswitch.conf
				return redactNSSSources[strings.ToLower(v)]
			}
			return false
		},
	},
}
