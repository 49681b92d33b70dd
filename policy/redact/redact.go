// Package redact removes secrets from text (SPEC P9). It is a filter, not a
// decision: everything vigil posts to chat, logs or audits, and every tool
// result it sends to the model, goes through a Redactor first, whatever
// policy decided about the call that produced it.
//
// The rules are a hand-kept table rather than a detector library: the
// maintained detectors (gitleaks, trufflehog) are scanners with hundreds of
// rules and heavy dependency trees, built to find secrets in repositories,
// not to rewrite a tool's output in place within a millisecond. The table
// covers what shows up in infrastructure output: issuers' token formats,
// private keys, credentials in URLs, and key/value pairs whose key names a
// secret (keys.go) in env, YAML, JSON, INI, XML, CLI-flag and prose forms.
// It is tested case by case, secrets and look-alikes, in redact_test.go.
//
// Speed comes from triggers: each rule names the literal substrings without
// which it cannot match. One pass over the text finds every trigger (scan.go);
// text with none comes back unchanged without running a regexp, and
// otherwise a rule's regexp runs only on the lines where a trigger was found
// and, for key/value rules, where the key around it names a secret.
package redact

import (
	"fmt"
	"regexp"
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
	// triggers are lowercase literals, one of which every match contains
	// (matched without regard to ASCII case). Multiline rules match theirs
	// exactly.
	triggers []string
	// worth, when set, reports whether a trigger found at s[i:j] makes the
	// rule worth running on that line (a key that names a secret, followed
	// by a separator).
	worth func(s string, i, j int) bool
	re    *regexp.Regexp
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
// New, or the package function String for the built-in rules. A
// Redactor is immutable and safe for concurrent use.
type Redactor struct {
	rules []redactRule
	// always are the rules without triggers (operators' patterns): they
	// run on every text.
	always []int
	scan   *scanner
}

// New returns a Redactor with the built-in rules plus extra ones,
// which run after them.
func New(extra ...Pattern) (*Redactor, error) {
	rules := append([]redactRule(nil), builtinRedactRules...)
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
		rules = append(rules, redactRule{kind: p.Kind, re: re, groups: groups})
	}
	return newRedactor(rules), nil
}

func newRedactor(rules []redactRule) *Redactor {
	r := &Redactor{rules: rules}
	for i := range rules {
		if len(rules[i].triggers) == 0 && !rules[i].multiline {
			r.always = append(r.always, i)
		}
	}
	r.scan = newScanner(rules)
	return r
}

// defaultRedactor holds the built-in rules; like them, it never changes.
var defaultRedactor = newRedactor(builtinRedactRules)

// String replaces the secrets in s with the built-in rules.
func String(s string) string { return defaultRedactor.Redact(s) }

// Suspect reports whether s holds a trigger of any built-in rule. False
// means String(s) == s, and the same for every string JSON-decoded from s:
// no trigger holds a character JSON escapes. It lets callers skip work on
// text that cannot hold a secret.
func Suspect(s string) bool { return defaultRedactor.Suspect(s) }

// Suspect is the package function Suspect for r's rules.
func (r *Redactor) Suspect(s string) bool {
	if len(r.always) > 0 {
		return true
	}
	for i := range r.rules {
		if r.rules[i].multiline && multilineTriggered(s, r.rules[i].triggers) {
			return true
		}
	}
	return r.scan.any(s)
}

// Redact replaces the secrets in s.
func (r *Redactor) Redact(s string) string {
	if s == "" {
		return s
	}
	// Whole-text rules first; they may change line structure.
	for i := range r.rules {
		ru := &r.rules[i]
		if ru.multiline && multilineTriggered(s, ru.triggers) {
			if out, ok := ru.apply(s); ok {
				s = out
			}
		}
	}

	marks := r.scan.marks(s, r.rules)
	if len(marks) == 0 && len(r.always) == 0 {
		return s
	}

	var b strings.Builder
	last := 0 // end of what has been copied to b
	dirty := false
	for _, lm := range marks {
		line := s[lm.start:lm.end]
		out := line
		for _, i := range lm.rules {
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
		b.WriteString(s[last:lm.start])
		b.WriteString(out)
		last = lm.end
	}
	if dirty {
		b.WriteString(s[last:])
		s = b.String()
	}
	for _, i := range r.always {
		if out, ok := r.rules[i].apply(s); ok {
			s = out
		}
	}
	return s
}

// multilineTriggered reports whether s holds one of a multiline rule's
// triggers, matched exactly.
func multilineTriggered(s string, triggers []string) bool {
	for _, t := range triggers {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
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
		if value == "" || strings.HasPrefix(value, redactedMarker) || start < last {
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

// The value forms of key=value secrets: a double-quoted string (JSON,
// shell), a single-quoted one, or a bare word up to whitespace or a
// separator of the surrounding syntax (&, ;, ',', closing brackets).
const redactValueForms = `(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"',;&}\])=<][^\s"',;&}\]<]*))`

// flagValue is the value after a client's short flag: a quoted string or a
// word that is not another flag.
const flagValue = `("[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)`

// keyWords are the key-name fragments of keyed secrets (see keys.go), as a
// regexp alternation: a key holding one of them may name a secret.
const keyWords = `pass|pwd|secret|token|auth|cred|api[_-]?key|private|access[_-]?key|account[_-]?key|sig`

// keyTriggers are keyWords as scanner triggers.
var keyTriggers = []string{"pass", "pwd", "secret", "token", "auth", "cred", "apikey", "api_key", "api-key",
	"private", "accesskey", "access_key", "access-key", "accountkey", "account_key", "account-key", "sig"}

var builtinRedactRules = []redactRule{
	{
		kind:      "private-key",
		multiline: true,
		triggers:  []string{"PRIVATE KEY"},
		re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)` +
			`(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`),
	},
	{
		// scheme://user:pass@host keeps the user, as people need it to tell
		// connections apart.
		kind:        "url-password",
		triggers:    []string{"://"},
		re:          regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@"'<>]*:([^\s/?#"'<>@]+(?:@[^\s/?#"'<>@]+)*)@`),
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
		// A password glued to a short flag, or one a client takes as the
		// next word: mysql -pSECRET, sshpass -p S, redis-cli -a S,
		// docker login -p S, mongosh -p S, ldapsearch -w S, smbclient -U
		// user%S, openssl -passin pass:S.
		kind:     "password",
		triggers: []string{"mysql", "mariadb", "sshpass", "redis-cli", "login", "mongo", "ldap", "smbclient", "pass:"},
		re: regexp.MustCompile(`(?:\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p([^\s"']+|"[^"\n]*"|'[^'\n]*')` +
			`|\b(?:sshpass|mongo|mongosh|mongodump|mongorestore)\b[^\n]*?\s-p[ \t]*` + flagValue +
			`|\bredis-cli\b[^\n]*?\s-a[ \t]*` + flagValue +
			`|\b(?:docker|podman|helm|buildah|skopeo)[ \t]+(?:registry[ \t]+)?login\b[^\n]*?\s-p[ \t]*` + flagValue +
			`|\bldap[a-z]*\b[^\n]*?\s-w[ \t]*` + flagValue +
			`|\bsmbclient\b[^\n]*?\s-U[ \t]*[^\s%"']+%([^\s"']+)` +
			`|\bpass:([^\s"']+))`),
		groups: []int{1, 2, 3, 4, 5, 6, 7},
		keep:   func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// --password secret, -token secret (a flag and its value as
		// separate words), for flags whose name names a secret.
		triggers: keyTriggers,
		worth:    flagWorth,
		re: regexp.MustCompile(`(?i)(?:^|[\s"'])(--?[a-z0-9][a-z0-9_.-]*)[ \t]+` +
			`(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"'-][^\s"']*))`),
		groups: []int{2, 3, 4},
		kindOf: func(s string, m []int) string { return keyKind(redactSubmatch(s, m, 1)) },
		keep: func(s string, m []int, v string) bool {
			return keepKeyed(strings.TrimLeft(redactSubmatch(s, m, 1), "-"), v, true)
		},
	},
	{
		// key=value, key: value, "key": "value", KEY='value', Password=x;
		// for keys that name a secret (keys.go decides which, and whether
		// the value looks like one).
		triggers: keyTriggers,
		worth:    keyedWorth,
		re: regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:` + keyWords + `)[A-Za-z0-9_.-]*)` +
			`(?:\\?["'])?[ \t]*[:=][ \t]*` + redactValueForms),
		groups: []int{2, 3, 4},
		kindOf: func(s string, m []int) string { return keyKind(redactSubmatch(s, m, 1)) },
		keep: func(s string, m []int, v string) bool {
			return keepKeyed(redactSubmatch(s, m, 1), v, false)
		},
	},
	{
		// <password>secret</password>, <apiKey>…</apiKey> in XML.
		triggers: keyTriggers,
		worth:    xmlWorth,
		re:       regexp.MustCompile(`(?i)<([A-Za-z0-9_.:-]*(?:` + keyWords + `)[A-Za-z0-9_.:-]*)>([^<\n]+)</`),
		groups:   []int{2},
		kindOf:   func(s string, m []int) string { return keyKind(redactSubmatch(s, m, 1)) },
		keep: func(s string, m []int, v string) bool {
			return keepKeyed(redactSubmatch(s, m, 1), v, false)
		},
	},
	{
		// Directives with a space before the secret: redis's requirepass
		// and masterauth, .netrc's password, SQL's IDENTIFIED BY 'x' and
		// PASSWORD 'x'.
		kind:     "password",
		triggers: []string{"requirepass", "masterauth", "identified", "password"},
		re: regexp.MustCompile(`(?i)(?:^|\s)(?:requirepass|masterauth)[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s"']+)` +
			`|\bmachine\b[^\n]*?\bpassword[ \t]+([^\s"']+)` +
			`|\b(?:identified[ \t]+(?:with[ \t]+[a-z_]+[ \t]+)?by|password)[ \t]+'([^'\n]*)'`),
		groups: []int{1, 2, 3},
		keep:   func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// Prose: "the admin password is hunter2", "the API token for ci
		// was abc123". Ordinary words after "is" are kept ("the password
		// is incorrect").
		kind:     "password",
		triggers: []string{"password", "passphrase", "passwd", "passcode", "secret", "token", "api key", "credential"},
		worth:    proseWorth,
		re: regexp.MustCompile(`(?i)\b(password|passphrase|passwd|passcode|secret|token|api key|credentials?)` +
			`(?:[ \t]+(?:for|of|on|to)[ \t]+[^\s,;]+){0,2}[ \t]+(?:is|was|are|=)[ \t]*:?[ \t]*` +
			`(?:"([^"\n]+)"|'([^'\n]+)'|“([^”\n]+)”|([^\s"'“”,;]+[^\s"'“”,;.!?)]))`),
		groups: []int{2, 3, 4, 5},
		kindOf: func(s string, m []int) string { return keyKind(redactSubmatch(s, m, 1)) },
		keep:   func(_ string, _ []int, v string) bool { return keepProse(v) },
	},
}
