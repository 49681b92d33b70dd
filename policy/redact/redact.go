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
	"slices"
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
	// spans marks a rule whose matches span lines: when the scanner finds
	// its trigger, its regexp (or whole) runs on the whole text, before
	// the per-line rules.
	spans bool
	// whole, for a spans rule, replaces re: it rewrites the whole text
	// itself (a secret recognised by what is on the lines around it).
	whole func(r *Redactor, s string) (string, bool)
	// decoded, for an encoded value (base64), reports whether what it
	// encodes holds a secret; a value for which it is false stays.
	decoded func(r *Redactor, value string, depth int) bool
	// replace computes the replacement for one value, overriding the
	// [REDACTED:kind] form (a cookie header keeps its names and
	// attributes); optional.
	replace func(value string) string
	// precise marks a rule whose worth is exact and holds for the text
	// JSON-encoded too: Suspect asks it, instead of counting every hit of
	// the rule's trigger (the trigger is too common to count alone).
	precise bool
	// cue marks a rule with no regexp of its own: a hit worth it means the
	// text has structure (a YAML block under a secret's key, a Kubernetes
	// Secret, a name/value pair naming a secret) that the structural pass
	// (structure.go) must read.
	cue bool
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
		if len(rules[i].triggers) == 0 {
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

// JSON replaces the secrets in a JSON document with the built-in rules,
// by key path (structure.go), and keeps it valid JSON; any JSON value
// qualifies, a lone string too. Text that is not JSON is redacted as text.
func JSON(s string) string { return defaultRedactor.JSON(s) }

// JSON is the package function JSON for r's rules.
func (r *Redactor) JSON(s string) string {
	if !r.Suspect(s) {
		return s
	}
	if out, ok := r.redactJSONDoc(s, 0); ok {
		return out
	}
	return r.Redact(s)
}

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
	return r.scan.any(s, r.rules)
}

// maxDepth bounds how deep redaction follows documents inside documents:
// JSON in a JSON string, JSON in base64 in YAML.
const maxDepth = 6

// Redact replaces the secrets in s.
func (r *Redactor) Redact(s string) string { return r.redact(s, 0) }

func (r *Redactor) redact(s string, depth int) string {
	if s == "" {
		return s
	}
	// A whole JSON document is walked by key path (structure.go): a value
	// is judged with the keys above it, and JSON inside its strings is
	// decoded and walked too.
	if depth < maxDepth && looksJSONDoc(s) && r.Suspect(s) {
		if out, ok := r.redactJSONDoc(s, depth); ok {
			return out
		}
	}
	marks := r.scan.marks(s, r.rules)
	if len(marks) == 0 && len(r.always) == 0 {
		return s
	}
	// Rules whose matches span lines run first, on the whole text: they
	// may change its lines. Then YAML-like structure (a block under a
	// secret's key, a Kubernetes Secret, name/value pairs) is read from
	// the lines; the line rules run on the result.
	if spans, cue := wholeTextRules(marks, r.rules); len(spans) > 0 || cue {
		changed := false
		for _, i := range spans {
			ru := &r.rules[i]
			var out string
			var ok bool
			if ru.whole != nil {
				out, ok = ru.whole(r, s)
			} else {
				out, ok = ru.apply(r, s, depth)
			}
			if ok {
				s, changed = out, true
			}
		}
		if cue {
			if out, ok := r.redactOutline(s); ok {
				s, changed = out, true
			}
		}
		if changed {
			marks = r.scan.marks(s, r.rules)
		}
	}

	var b strings.Builder
	last := 0 // end of what has been copied to b
	dirty := false
	for _, lm := range marks {
		line := s[lm.start:lm.end]
		out := line
		walked := false
		if k := jsonTail(line); depth < maxDepth && k >= 0 {
			// A JSON document per line (JSON logs), perhaps after a time
			// stamp: walked by key path, its prefix by the line rules.
			doc := strings.TrimRight(line[k:], "\r\n")
			var o string
			if o, walked = r.redactJSONDoc(doc, depth); walked {
				out = line[:k] + o + line[k+len(doc):]
				if k > 0 {
					prefix := line[:k]
					for _, i := range lm.rules {
						if ru := &r.rules[i]; !ru.cue && !ru.spans {
							if p, ok := ru.apply(r, prefix, depth); ok {
								prefix = p
							}
						}
					}
					out = prefix + out[k:]
				}
			}
		}
		if !walked {
			for _, i := range lm.rules {
				if ru := &r.rules[i]; !ru.cue && !ru.spans {
					if o, ok := ru.apply(r, out, depth); ok {
						out = o
					}
				}
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
		if out, ok := r.rules[i].apply(r, s, depth); ok {
			s = out
		}
	}
	return s
}

// wholeTextRules returns, in rule order, the spans rules found worth
// running, and whether a cue rule was.
func wholeTextRules(marks []lineMarks, rules []redactRule) (spans []int, cue bool) {
	for _, lm := range marks {
		for _, i := range lm.rules {
			switch {
			case rules[i].cue:
				cue = true
			case rules[i].spans && !slices.Contains(spans, i):
				spans = append(spans, i)
			}
		}
	}
	slices.Sort(spans)
	return spans, cue
}

// apply replaces this rule's matches in s; ok is false when nothing changed.
func (ru *redactRule) apply(r *Redactor, s string, depth int) (string, bool) {
	if ru.re == nil {
		return s, false
	}
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
		// A value that holds a replacement was judged already (by an
		// earlier rule on this line): judging it again, marker included,
		// would make a second pass change what the first left. A rule
		// with its own replace judges the value's parts itself.
		if value == "" || start < last || strings.HasPrefix(value, redactedMarker) ||
			ru.replace == nil && strings.Contains(value, redactedMarker) {
			continue
		}
		if ru.keep != nil && ru.keep(s, m, value) {
			continue
		}
		if ru.decoded != nil && !ru.decoded(r, value, depth) {
			continue
		}
		repl := ru.replacement
		if ru.replace != nil {
			repl = ru.replace(value)
		}
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
// shell), a single-quoted one, one between escaped quotes (JSON inside a
// JSON string: \"hunter2\"), or a bare word up to whitespace, an escaped
// quote or a separator of the surrounding syntax (&, ;, ',', closing
// brackets).
const redactValueForms = `(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|\\"((?:[^"\\\n]|\\[^"\n])*)\\"|((?:[^\s"',;&}\])=<\\]|\\[^"\s])(?:[^\s"',;&}\]<\\]|\\[^"\s])*))`

// flagValue is the value after a client's short flag: a quoted string or a
// word that is not another flag.
const flagValue = `("[^"\n]*"|'[^'\n]*'|[^\s"'-][^\s"']*)`

// keyWords are the key-name fragments of keyed secrets (see keys.go), as a
// regexp alternation: a key holding one of them may name a secret.
const keyWords = `pass|pwd|secret|token|auth|cred|api[_-]?key|private|access[_-]?key|account[_-]?key|sig|sessid|sessionid`

// keyTriggers are keyWords as scanner triggers.
var keyTriggers = []string{"pass", "pwd", "secret", "token", "auth", "cred", "apikey", "api_key", "api-key",
	"private", "accesskey", "access_key", "access-key", "accountkey", "account_key", "account-key", "sig", "sessid",
	"sessionid"}

var builtinRedactRules = []redactRule{
	{
		kind:     "private-key",
		spans:    true,
		triggers: []string{"private key"},
		re: regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)` +
			`(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`),
	},
	{
		// A PEM private key in base64 (a Kubernetes Secret's tls.key, a
		// kubeconfig's client-key-data), wrapped over lines or not. A
		// base64 certificate is kept: only what decodes to a private key
		// goes.
		kind:     "private-key",
		spans:    true,
		triggers: []string{"ls0tls1crudjti"},
		re:       regexp.MustCompile(`LS0tLS1CRUdJTi[A-Za-z0-9+/]*(?:\r?\n[A-Za-z0-9+/]{16,})*={0,2}`),
		decoded:  encodedSecret,
	},
	{
		// A bare AWS secret access key beside its key ID.
		kind:     "aws-secret-key",
		spans:    true,
		triggers: []string{"akia", "asia", "abia", "acca"},
		whole:    awsSecretNearID,
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
		// Go MySQL driver DSNs: user:password@tcp(host:3306)/db,
		// @unix(/run/mysqld.sock)/db, @/db.
		kind:     "password",
		triggers: []string{"@tcp", "@unix(", "@udp(", "@/"},
		re:       regexp.MustCompile(`(?:^|[\s"'=(,;])[^\s:@/"'=(,;\[\]]*:([^\s@"'\[\]]+)@(?:(?:tcp6?|unix|udp)\b|/[A-Za-z0-9_$-])`),
		groups:   []int{1},
		keep:     func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
	},
	{
		// Oracle: sqlplus scott/tiger@db, jdbc:oracle:thin:scott/tiger@host.
		kind:     "password",
		triggers: []string{"sqlplus", "sqlldr", "pdp", "rman", ":thin:"},
		re: regexp.MustCompile(`(?i)(?:\b(?:sqlplus|sqlldr|expdp|impdp|rman)\b[^\n]*?\s(?:-[sSlL]\s+)*[A-Za-z0-9_$#]+/([^\s@/"']+)@` +
			`|\bthin:[A-Za-z0-9_$#]*/([^\s@/"']+)@)`),
		groups: []int{1, 2},
		keep:   func(_ string, _ []int, v string) bool { return redactPlaceholder(v) },
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
		// Base64 of JSON that holds a secret: a docker config.json with its
		// auths, a service account key. Base64 of harmless JSON stays.
		kind:     "encoded-secret",
		triggers: []string{"eyj"},
		re:       regexp.MustCompile(`\beyJ[A-Za-z0-9+/_-]{8,}={0,2}`),
		decoded:  encodedSecret,
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
		re:       regexp.MustCompile(`\b(?:sk-(?:proj-|svcacct-|admin-|ant-[a-z0-9]+-)?[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{36})\b`),
	},
	{
		// HashiCorp Vault tokens: service (hvs.), batch (hvb.), recovery
		// (hvr.), and the batch form before Vault 1.10 (b.AAAAAQ…).
		kind:     "vault-token",
		triggers: []string{"hvs.", "hvb.", "hvr.", "b.aaaaaq"},
		re:       regexp.MustCompile(`\b(?:hv[sbr]\.[A-Za-z0-9_-]{20,}|b\.AAAAAQ[A-Za-z0-9_-]{20,})`),
	},
	{
		// Vault service tokens before 1.10: s. and 24 letters and digits.
		kind:     "vault-token",
		triggers: []string{"s."},
		worth:    vaultLegacyWorth,
		re:       regexp.MustCompile(`(?:^|[^A-Za-z0-9_./+-])(s\.[A-Za-z0-9]{24})\b`),
		groups:   []int{1},
		keep:     func(_ string, _ []int, v string) bool { return !vaultLegacyShape(v) },
	},
	{
		kind:     "sendgrid-key",
		triggers: []string{"sg."},
		worth:    sendgridWorth,
		re:       regexp.MustCompile(`\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`),
	},
	{
		// Other issuers' published token formats.
		kind: "api-key",
		triggers: []string{"_v1_", "whsec_", "shpat_", "shpss_", "shpca_", "shppa_", "pypi-age", "dckr_pat_", "glsa_",
			"glc_", "hf_", "lin_api_", "nrak-", "sntrys_", "xkeysib-", "pat-na1-", "pat-eu1-"},
		re: regexp.MustCompile(`\b(?:do[opr]_v1_[a-f0-9]{64}|whsec_[A-Za-z0-9+/=]{24,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}` +
			`|pypi-AgE[A-Za-z0-9_-]{50,}|dckr_pat_[A-Za-z0-9_-]{20,}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/=_-]{32,}` +
			`|hf_[A-Za-z0-9]{34}|lin_api_[A-Za-z0-9]{40}|NRAK-[A-Z0-9]{27}|sntrys_[A-Za-z0-9+/=_-]{40,}` +
			`|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}` +
			`|pat-(?:na|eu)1-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})\b`),
	},
	{
		// Password hashes: crypt(3) in /etc/shadow (MD5, bcrypt, SHA-256,
		// SHA-512, yescrypt, scrypt), Apache htpasswd ($apr1$, {SHA}),
		// LDAP userPassword ({SSHA}, {CRYPT}), argon2 and PBKDF2. A hash
		// lets anyone with a GPU try passwords offline.
		kind: "password-hash",
		triggers: []string{"$1$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "$7$", "$y$", "$gy$", "$apr1$",
			"$argon2", "$scrypt$", "$pbkdf2", "$sha1$", "$md5", "{sha", "{ssha", "{crypt}", "{md5}", "{smd5}", "{pbkdf2",
			"pbkdf2_sha", "bcrypt_sha256$", "argon2$"},
		re: regexp.MustCompile(`(?:\$(?:1|2[abxy]|5|6|7|y|gy|apr1|sha1|md5|scrypt)\$[./A-Za-z0-9$=,+-]{8,}` +
			`|\$argon2(?:id|i|d)\$[A-Za-z0-9$=,+/.-]{16,}|\$pbkdf2(?:-sha\d+)?\$[A-Za-z0-9$.+/=-]{16,}` +
			`|\b(?:pbkdf2_sha(?:1|256)|bcrypt_sha256|argon2)\$[A-Za-z0-9$.+/=,-]{16,}` +
			`|(?i:\{(?:SHA|SSHA|SHA256|SSHA256|SHA512|SSHA512|CRYPT|MD5|SMD5|PBKDF2[A-Z0-9-]*)\})[A-Za-z0-9+/=.$]{8,})`),
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
		// Cookie and Set-Cookie headers (and curl's --cookie/-b): every
		// cookie's value, names and attributes kept. Session cookies are
		// bearer credentials.
		kind:     "cookie",
		triggers: []string{"ookie", " -b"},
		worth:    cookieWorth,
		re: regexp.MustCompile(`(?i)(?:\b(?:set-cookie2?|cookie)["']?[ \t]*[:=][ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\n"']+))` +
			`|\s(?:--cookie|-b)(?:[ \t]+|=)(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"']+)))`),
		groups:  []int{1, 2, 3, 4, 5, 6},
		replace: redactCookies,
		keep:    func(_ string, _ []int, v string) bool { return redactCookies(v) == v },
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
		// A .pgpass line: host:port:database:user:password, the password
		// running to the end of the line.
		kind:     "password",
		triggers: []string{":0", ":1", ":2", ":3", ":4", ":5", ":6", ":7", ":8", ":9", ":*"},
		worth:    pgpassWorth,
		precise:  true,
		re: regexp.MustCompile(`(?i:^|[\s"']|pgpass(?::\d+)?:)[^\s:"'\\\[\]]+:(?:\d{1,5}|\*):[^\s:"'\\\[\]]+:[^\s:"'\\\[\]]+:` +
			`((?:[^:\n\r\\]|\\.)+?)[ \t]*\r?\n?$`),
		groups: []int{1},
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
		groups: []int{2, 3, 4, 5},
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
		// vault operator init: "Unseal Key 1: …", "Recovery Key 2: …".
		kind:     "vault-unseal-key",
		triggers: []string{"seal key", "overy key"},
		re:       regexp.MustCompile(`(?i)\b(?:unseal|recovery)[ \t]+key[ \t]+\d+[ \t]*:[ \t]*([^\s"']+)`),
		groups:   []int{1},
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
	// Cues for the structural pass (structure.go): no regexp of their own.
	{triggers: keyTriggers, worth: blockWorth, cue: true},
	{triggers: keyTriggers, worth: nameValueWorth, cue: true},
	{triggers: []string{"secret"}, worth: secretKindWorth, cue: true},
	// An AWS SSM SecureString's Value is a secret whatever its name.
	{triggers: []string{"securestring"}, cue: true},
}
