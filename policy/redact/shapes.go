package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Helpers of the rules for secrets recognised by their shape rather than by
// a key or an issuer's prefix: .pgpass lines, cookie headers, base64 that
// encodes a secret, an AWS secret key printed beside its key ID, Vault's
// legacy tokens.

// pgpassFieldByte reports the bytes of a .pgpass host, database or user
// field as vigil reads them: no separator, blank, quote or bracket (a
// bracket would be a [REDACTED:…] marker).
func pgpassFieldByte(c byte) bool {
	switch c {
	case ':', '\n', '\r', ' ', '\t', '"', '\'', '\\', '[', ']':
		return false
	}
	return true
}

// pgpassWorth: the trigger (a colon before a digit or '*') ends the host of
// a .pgpass line, host:port:database:user:password, whose password runs to
// the end of the line without an unescaped colon. It holds for the text
// JSON-encoded too (a line may end at a quote or an escaped newline), so
// Suspect can ask it: colons before digits are everywhere (times, ports).
func pgpassWorth(s string, i, _ int) bool {
	k := i - 1
	for k >= 0 && pgpassFieldByte(s[k]) {
		k--
	}
	if k == i-1 {
		return false // no host
	}
	if k >= 0 && !strings.ContainsRune("\n\r \t\"'\\", rune(s[k])) && !(s[k] == ':' && afterPgpassName(s, k)) {
		return false
	}
	p := i + 1
	if p < len(s) && s[p] == '*' {
		p++
	} else {
		d := p
		for p < len(s) && p-d < 6 && '0' <= s[p] && s[p] <= '9' {
			p++
		}
		if p == d || p-d > 5 {
			return false
		}
	}
	for range 2 { // database, user
		if p >= len(s) || s[p] != ':' {
			return false
		}
		p++
		st := p
		for p < len(s) && pgpassFieldByte(s[p]) {
			p++
		}
		if p == st {
			return false
		}
	}
	if p >= len(s) || s[p] != ':' {
		return false
	}
	p++
	st := p
	for p < len(s) {
		c := s[p]
		if c == '\n' || c == '\r' || c == '"' {
			break
		}
		if c == ':' {
			return false // one field too many: not a .pgpass line
		}
		if c == '\\' {
			switch {
			case p+1 < len(s) && strings.IndexByte(`nr"`, s[p+1]) >= 0:
				p = len(s) // an escaped line end or quote, in JSON-encoded text
				continue
			case p+2 < len(s) && s[p+1] == '\\' && s[p+2] == ':':
				p += 3 // an escaped colon, JSON-encoded
			default:
				p += 2
			}
			continue
		}
		p++
	}
	return p > st
}

// afterPgpassName reports whether the colon at s[k] ends a file name like
// .pgpass, with an optional line number (grep's "~/.pgpass:3:"): a line of
// /etc/passwd must not pass for a .pgpass line met halfway.
func afterPgpassName(s string, k int) bool {
	j := k
	for j > 0 && '0' <= s[j-1] && s[j-1] <= '9' {
		j--
	}
	if j < k && j > 0 && s[j-1] == ':' {
		j--
	} else {
		j = k
	}
	return j >= 6 && strings.EqualFold(s[j-6:j], "pgpass")
}

// cookieWorth: the trigger ("ookie", which is rarer than "co") ends
// "cookie", a header's or a JSON field's name (Cookie:, Set-Cookie:,
// "cookie": …) or curl's --cookie; or the trigger is " -b" on a curl
// command line.
func cookieWorth(s string, i, j int) bool {
	if s[i] == ' ' { // " -b"
		ls := strings.LastIndexByte(s[:i], '\n') + 1
		return strings.Contains(s[ls:i], "curl") && (j == len(s) || s[j] == ' ' || s[j] == '=' || s[j] == '\'' || s[j] == '"')
	}
	if i == 0 || lowerTable[s[i-1]] != 'c' {
		return false
	}
	i--
	if i >= 2 && s[i-2:i] == "--" {
		return true
	}
	if i > 0 && keyChar(s[i-1]) && s[i-1] != '-' || j < len(s) && keyChar(s[j]) && s[j] != '2' {
		return false
	}
	k := j
	if k < len(s) && s[k] == '2' {
		k++
	}
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
	}
	for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	return k < len(s) && (s[k] == ':' || s[k] == '=')
}

// cookieAttributes are Set-Cookie attributes: their values are not
// secrets.
var cookieAttributes = wordSet("path", "domain", "expires", "max-age", "secure", "httponly", "samesite", "priority",
	"partitioned", "version", "comment", "commenturl", "discard", "port")

// redactCookies masks every cookie value in a Cookie or Set-Cookie value
// ("sid=abc; Path=/" → "sid=[REDACTED:cookie]; Path=/"), keeping names
// and attributes. A word without '=' (a cookie-jar file name, HttpOnly)
// stays.
func redactCookies(v string) string {
	parts := strings.Split(v, ";")
	changed := false
	for i, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if !ok || cookieAttributes[strings.ToLower(strings.TrimSpace(name))] {
			continue
		}
		tv := strings.TrimSpace(val)
		if tv == "" || redactPlaceholder(tv) {
			continue
		}
		lead := val[:len(val)-len(strings.TrimLeft(val, " \t"))]
		trail := val[len(strings.TrimRight(val, " \t")):]
		parts[i] = name + "=" + lead + "[REDACTED:cookie]" + trail
		changed = true
	}
	if !changed {
		return v
	}
	return strings.Join(parts, ";")
}

// decodeBase64 decodes standard or URL base64, padded or not, ignoring
// line breaks.
func decodeBase64(v string) ([]byte, bool) {
	v = strings.NewReplacer("\n", "", "\r", "", " ", "", "\t", "").Replace(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(v); err == nil {
			return b, true
		}
	}
	return nil, false
}

// encodedSecret reports whether base64 value v encodes a private key, or
// text that holds a secret (a docker config.json with its auth, a JSON
// credential). Base64 that encodes a certificate or ordinary text is kept.
func encodedSecret(r *Redactor, v string, depth int) bool {
	b, ok := decodeBase64(v)
	if !ok || len(b) == 0 {
		return false
	}
	t := string(b)
	if strings.Contains(t, "PRIVATE KEY") {
		return true
	}
	if !utf8.ValidString(t) || depth+1 >= maxDepth {
		return false
	}
	return r.redact(t, depth+1) != t
}

// awsKeyID is an AWS access key ID.
var awsKeyID = regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`)

// awsSecretCandidate is a 40-character word of base64 characters: the shape
// of an AWS secret access key.
var awsSecretCandidate = regexp.MustCompile(`(?:^|[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)

// awsSecretNearID redacts a bare AWS secret access key printed beside its
// key ID: on the same line, the line before or the two lines after (a
// credentials CSV, `aws iam create-access-key` as a table, a key pair
// pasted on two lines). On its own such a word is too like other IDs to
// redact; next to a key ID it is the secret.
func awsSecretNearID(_ *Redactor, s string) (string, bool) {
	ids := awsKeyID.FindAllStringIndex(s, -1)
	if len(ids) == 0 {
		return s, false
	}
	type span struct{ start, end int }
	var windows []span
	for _, id := range ids {
		start := strings.LastIndexByte(s[:id[0]], '\n') + 1
		if start > 0 {
			start = strings.LastIndexByte(s[:start-1], '\n') + 1
		}
		end := id[1]
		for range 3 {
			k := strings.IndexByte(s[end:], '\n')
			if k < 0 {
				end = len(s)
				break
			}
			end += k + 1
		}
		if n := len(windows); n > 0 && start <= windows[n-1].end {
			windows[n-1].end = max(windows[n-1].end, end)
			continue
		}
		windows = append(windows, span{start, end})
	}
	var b strings.Builder
	last := 0
	for _, w := range windows {
		for _, m := range awsSecretCandidate.FindAllStringSubmatchIndex(s[w.start:w.end], -1) {
			start, end := w.start+m[2], w.start+m[3]
			if !awsSecretShape(s[start:end]) {
				continue
			}
			b.WriteString(s[last:start])
			b.WriteString("[REDACTED:aws-secret-key]")
			last = end
		}
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// awsSecretShape: mixed case and a digit or symbol, as 40 random base64
// characters have; a hex digest or a word run has not.
func awsSecretShape(v string) bool {
	lower, upper, digit, other := charClasses(v)
	return lower && upper && (digit || other)
}

// vaultLegacyShape: a legacy Vault service token (s. and 24 characters)
// mixes upper case, lower case and digits; "s.Background" does not.
func vaultLegacyShape(v string) bool {
	lower, upper, digit, _ := charClasses(strings.TrimPrefix(v, "s."))
	return lower && upper && digit
}

// charClasses reports which classes of ASCII character v holds.
func charClasses(v string) (lower, upper, digit, other bool) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		default:
			other = true
		}
	}
	return lower, upper, digit, other
}

// vaultLegacyWorth: "s." starts a word and 24 letters and digits follow,
// then a word boundary.
func vaultLegacyWorth(s string, i, j int) bool {
	if i > 0 {
		c := s[i-1]
		if keyChar(c) || c == '/' || c == '+' {
			return false
		}
	}
	k := j
	for k < len(s) && k-j <= 24 && ('a' <= s[k] && s[k] <= 'z' || 'A' <= s[k] && s[k] <= 'Z' || '0' <= s[k] && s[k] <= '9') {
		k++
	}
	return k-j == 24 && (k == len(s) || !keyChar(s[k]) && s[k] != '/')
}

// sendgridWorth: "SG." in upper case, starting a word.
func sendgridWorth(s string, i, _ int) bool {
	return s[i] == 'S' && s[i+1] == 'G' && (i == 0 || !keyChar(s[i-1]))
}
