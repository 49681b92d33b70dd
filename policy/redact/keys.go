package redact

import (
	"math"
	"regexp"
	"strings"
)

// Keyed secrets: "key=value" and its relatives, where the key's name says a
// secret follows. A key is read as words ("DB_PASS" is db+pass,
// "secretName" is secret+name, "PGPASSWORD" one word ending in password)
// and falls in one of three classes:
//
//   - strong: its last word names a secret ("DB_PASS", "REDIS_AUTH",
//     "client_secret", "X-Api-Key"), or its last word names a form of one
//     ("password_hash", "token_value"). Every value is redacted but
//     placeholders and a few known non-secrets (an auth method, a path for
//     PWD).
//   - weak: a word names a secret but the key is about something else
//     ("password_policy", "token_count", "secret_name", "auth_type"). Only
//     a value that looks like a credential (long, mixed, high entropy) is
//     redacted.
//   - none: no word names a secret ("author", "bypass", "max_tokens",
//     "tokenizer").

type keyClass int

const (
	keyNone keyClass = iota
	keyWeak
	keyStrong
)

// secretWords are key words that name a secret.
var secretWords = wordSet("password", "passwd", "pass", "pw", "pwd", "passphrase", "passcode", "secret", "token",
	"auth", "apikey", "credential", "credentials", "creds", "cred", "privatekey", "secretkey", "accesskey",
	"accountkey", "sharedaccesskey", "clientsecret", "signature", "sig", "sessionid", "sessid")

// secretSuffixes make a run-together key a secret's name ("pgpassword",
// "dbpass", "xsrftoken", "masterauth").
var secretSuffixes = []string{"password", "passwd", "passphrase", "passcode", "secret", "token", "apikey",
	"privatekey", "secretkey", "accountkey", "accesskey", "pass", "pwd", "auth", "sessionid", "sessid"}

// notSecretWords end like a secret's name but are not one.
var notSecretWords = wordSet("bypass", "compass", "surpass", "overpass", "underpass", "trespass", "encompass",
	"oauth", "tokens", "secrets", "passwords")

// keyQualifiers make the word "key" a secret's name ("api_key",
// "encryption_key"); "public_key" and "ssh_key" are not.
var keyQualifiers = wordSet("api", "access", "secret", "private", "account", "auth", "encryption", "signing",
	"master", "client", "shared", "app", "webhook", "hmac", "session", "license", "crypt", "cipher", "storage",
	"service", "sas", "subscription", "primary", "secondary", "admin", "root", "consumer")

// valueWords name a form of the secret itself ("password_hash",
// "token_value", "secret_b64").
var valueWords = wordSet("value", "val", "data", "str", "string", "b64", "base64", "hash", "hex", "raw", "plain",
	"plaintext", "enc", "encrypted", "digest", "bcrypt", "md5", "sha256", "sha512", "key")

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// keyWordsOf appends to buf the words of a key name, lowercased, split at
// _ . - : $ and quotes, and at lower-to-upper case changes.
func keyWordsOf(buf []string, key string) []string {
	start := -1
	for i := 0; i <= len(key); i++ {
		boundary, startsWord := i == len(key), false
		if !boundary {
			switch c := key[i]; {
			case c == '_' || c == '.' || c == '-' || c == ':' || c == '$' || c == '"' || c == '\'':
				boundary = true
			case 'A' <= c && c <= 'Z' && i > 0 && 'a' <= key[i-1] && key[i-1] <= 'z':
				boundary, startsWord = true, true
			}
		}
		if boundary {
			if start >= 0 && i > start {
				buf = append(buf, strings.ToLower(key[start:i]))
			}
			start = -1
			if startsWord {
				start = i
			}
		} else if start < 0 {
			start = i
		}
	}
	return buf
}

// secretWord reports whether one key word names a secret.
func secretWord(w string) bool {
	if secretWords[w] {
		return true
	}
	if notSecretWords[w] {
		return false
	}
	for _, suf := range secretSuffixes {
		if len(w) > len(suf) && strings.HasSuffix(w, suf) {
			return true
		}
	}
	return false
}

// classifyKey decides what a key name says about its value.
func classifyKey(key string) keyClass {
	var buf [8]string
	ws := keyWordsOf(buf[:0], key)
	if len(ws) == 0 {
		return keyNone
	}
	names := func(k int) bool {
		return secretWord(ws[k]) || ws[k] == "key" && k > 0 && keyQualifiers[ws[k-1]]
	}
	last := len(ws) - 1
	if names(last) {
		return keyStrong
	}
	any := false
	for k := 0; k < last; k++ {
		if names(k) {
			any = true
			break
		}
	}
	if !any {
		return keyNone
	}
	if valueWords[ws[last]] {
		return keyStrong
	}
	return keyWeak
}

// keyKind names a keyed secret by its key, for [REDACTED:<kind>].
func keyKind(key string) string {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "pass") || strings.Contains(k, "pwd"):
		return "password"
	case strings.Contains(k, "secret") && (strings.Contains(k, "aws") || strings.Contains(k, "access")):
		return "aws-secret-key"
	case strings.Contains(k, "token"):
		return "token"
	case strings.Contains(k, "api"):
		return "api-key"
	case strings.Contains(k, "accountkey") || strings.Contains(k, "sharedaccesskey"):
		return "azure-key"
	case strings.Contains(k, "private"):
		return "private-key"
	case strings.Contains(k, "cred"):
		return "credential"
	case strings.Contains(k, "secret"):
		return "secret"
	case strings.Contains(k, "auth"):
		return "auth"
	case strings.Contains(k, "sig"):
		return "signature"
	default:
		return "secret"
	}
}

// redactPlaceholder reports values that stand for a secret without being one: a
// shell or template variable, a mask, an empty or boolean value, a YAML
// block indicator, or a value another tool already redacted.
func redactPlaceholder(v string) bool {
	v = strings.Trim(v, `"'`)
	if v == "" {
		return true
	}
	switch v[0] {
	case '<', '%', '{', '[':
		return true
	case '$':
		// $VAR, ${VAR}, $(cmd); not a bcrypt hash ($2y$10$…).
		if len(v) == 1 || v[1] == '{' || v[1] == '(' || v[1] == '_' || 'A' <= v[1] && v[1] <= 'Z' || 'a' <= v[1] && v[1] <= 'z' {
			return true
		}
	}
	switch v {
	case "|", "|-", "|+", ">", ">-", ">+", "-", "~":
		return true
	}
	if strings.Trim(v, "*xX•.") == "" && len(v) >= 3 {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "none", "nil", "yes", "no", "on", "off", "redacted", "data+omitted", "required",
		"optional", "unset", "empty", "missing", "hidden", "masked", "n/a", "na", "undefined":
		return true
	}
	return strings.HasPrefix(v, redactedMarker)
}

// statusWords after a strong key describe the secret rather than being it
// ("signature: valid", "token: expired").
var statusWords = wordSet("valid", "invalid", "expired", "revoked", "set", "ok", "default", "disabled", "enabled",
	"auto", "inherit", "inherited", "present", "absent", "generated", "rotated", "unknown", "not-set", "notset")

// authMethods after an "auth" key name a method, not a secret.
var authMethods = wordSet("basic", "bearer", "digest", "ldap", "md5", "scram-sha-256", "trust", "peer", "ident",
	"password", "oauth", "oauth2", "oidc", "saml", "kerberos", "gssapi", "token", "jwt", "cert", "tls", "mtls",
	"internal", "external", "local", "sso", "anonymous", "api_key", "apikey", "key", "header", "cookie", "session",
	"plain", "login", "cram-md5", "xoauth2", "negotiate", "ntlm", "iam", "aws", "github", "google", "azure",
	"htpasswd", "pam", "radius", "reject", "allow", "deny", "any", "all", "user", "users", "client", "server")

// redactNSSSources are /etc/nsswitch.conf sources: "passwd: files systemd" is
// not a password.
var redactNSSSources = wordSet("files", "compat", "db", "nis", "nisplus", "systemd", "sss", "ldap", "winbind", "dns")

// pathValue matches a file path value.
var pathValue = regexp.MustCompile(`^(?:~|\.{1,2})?/[A-Za-z0-9._@+-]*(?:/[A-Za-z0-9._@+-]*)*$`)

// keepKeyed reports whether value v of key stays: the key names no secret,
// or v is a placeholder or a known non-secret. flag marks a command-line
// flag ("--password"), whose "--no-…" form takes no value.
func keepKeyed(key, v string, flag bool) bool {
	if redactPlaceholder(v) {
		return true
	}
	ws := keyWordsOf(nil, key)
	if flag && len(ws) > 0 && ws[0] == "no" {
		return true
	}
	switch classifyKey(key) {
	case keyNone:
		return true
	case keyWeak:
		return !looksLikeCredential(v)
	}
	last := ws[len(ws)-1]
	lv := strings.ToLower(strings.Trim(v, `"'`))
	switch {
	case last == "pwd" || last == "oldpwd": // the shell's working directory
		return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~")
	case last == "passwd":
		return redactNSSSources[lv]
	case last == "key" && pathValue.MatchString(v): // private_key: /etc/ssl/private/x.key
		return true
	case last == "auth" || strings.HasSuffix(last, "auth"):
		return authMethods[lv]
	}
	return statusWords[lv]
}

// uuidLike matches a UUID: an identifier, not a credential.
var uuidLike = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// looksLikeCredential reports a value that is shaped like a generated
// secret: at least 16 characters with no blanks, not a path, URL, UUID,
// number or host name, and mixing character classes with high entropy.
func looksLikeCredential(v string) bool {
	v = strings.Trim(v, `"'`)
	if len(v) < 16 || strings.ContainsAny(v, " \t") || strings.Contains(v, "://") ||
		pathValue.MatchString(v) || uuidLike.MatchString(v) {
		return false
	}
	var lower, upper, digit, other bool
	dotted := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
			dotted = false
		case '0' <= c && c <= '9':
			digit = true
		default:
			other = true
			if c != '.' && c != '-' {
				dotted = false
			}
		}
	}
	if dotted && strings.Contains(v, ".") {
		return false // a host name or a version
	}
	classes := 0
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			classes++
		}
	}
	switch {
	case classes >= 3:
		return entropy(v) >= 3.0
	case classes == 2:
		return entropy(v) >= 3.5
	}
	return false
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// proseKeep are words that follow "the password is" without being one.
var proseKeep = wordSet("the", "a", "an", "not", "set", "unset", "required", "missing", "empty", "incorrect", "wrong",
	"invalid", "expired", "correct", "valid", "stored", "hashed", "too", "now", "being", "changed", "in", "at",
	"still", "also", "only", "usually", "same", "different", "weak", "strong", "long", "short", "shown", "hidden",
	"saved", "encrypted", "rotated", "managed", "kept", "available", "needed", "unknown", "blank", "none", "null",
	"defined", "configured", "provided", "given", "generated", "reset", "your", "my", "our", "its", "their",
	"this", "that", "what", "which", "where", "how", "who", "there", "here", "used", "necessary", "sensitive",
	"secret", "private", "public", "mandatory", "optional", "fine", "ok", "good", "bad", "new", "old", "default",
	"random", "unique", "shared", "temporary", "static", "dynamic", "visible", "present", "absent", "case-sensitive",
	"for", "of", "on", "to", "from", "by", "with", "without", "and", "or", "but", "if", "when", "as", "it", "them",
	"one", "two", "all", "any", "some", "no", "yes", "true", "false", "never", "always", "valid.", "enough",
	"insecure", "secure", "safe", "unsafe", "exposed", "readable", "writable", "correctly", "locked", "unlocked")

// keepProse reports whether the word after "the password is" is ordinary
// prose rather than a password.
func keepProse(v string) bool {
	if redactPlaceholder(v) {
		return true
	}
	lv := strings.ToLower(v)
	if lv != v && strings.ToUpper(v[:1])+v[1:] != v {
		return false // mixed case inside the word: a secret
	}
	for i := 0; i < len(lv); i++ {
		if c := lv[i]; !('a' <= c && c <= 'z' || c == '-') {
			return false // digits or symbols: a secret
		}
	}
	return proseKeep[lv] || strings.HasSuffix(lv, "ed") || strings.HasSuffix(lv, "ing") || strings.HasSuffix(lv, "ly")
}

// keyChar reports the bytes of a key name.
func keyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// keyAround returns the key name holding s[i:j].
func keyAround(s string, i, j int) (start, end int) {
	for i > 0 && keyChar(s[i-1]) {
		i--
	}
	for j < len(s) && keyChar(s[j]) {
		j++
	}
	return i, j
}

// keyedWorth: the key holding the trigger names a secret and a key=value
// separator follows it (an optional closing quote, escaped or not, blanks,
// then ':' or '=').
func keyedWorth(s string, i, j int) bool {
	start, end := keyAround(s, i, j)
	off := end
	if off < len(s) && s[off] == '\\' {
		off++
	}
	if off < len(s) && (s[off] == '"' || s[off] == '\'') {
		off++
	}
	for off < len(s) && (s[off] == ' ' || s[off] == '\t') {
		off++
	}
	if off >= len(s) || (s[off] != ':' && s[off] != '=') {
		return false
	}
	return classifyKey(s[start:end]) != keyNone
}

// flagWorth: the trigger is in a command-line flag ("--password",
// "-token") that names a secret and is followed by a separate value.
func flagWorth(s string, i, j int) bool {
	start, end := keyAround(s, i, j)
	if s[start] != '-' || start > 0 && !strings.ContainsRune(" \t\r\n\"'", rune(s[start-1])) {
		return false
	}
	off := end
	if off >= len(s) || (s[off] != ' ' && s[off] != '\t') {
		return false
	}
	for off < len(s) && (s[off] == ' ' || s[off] == '\t') {
		off++
	}
	if off >= len(s) || s[off] == '-' || s[off] == '\n' {
		return false
	}
	return classifyKey(strings.TrimLeft(s[start:end], "-")) != keyNone
}

// proseWorth: the trigger is a whole word ("password", not "passwords" or
// "password_policy") and "is", "was", "are" or "=" follows within a few
// words.
func proseWorth(s string, i, j int) bool {
	if i > 0 && keyChar(s[i-1]) || j < len(s) && keyChar(s[j]) && s[j] != 's' {
		return false
	}
	rest := s[j:]
	if k := strings.IndexByte(rest, '\n'); k >= 0 {
		rest = rest[:k]
	}
	if len(rest) > 80 {
		rest = rest[:80]
	}
	rest = strings.ToLower(rest)
	return strings.Contains(rest, " is ") || strings.Contains(rest, " was ") || strings.Contains(rest, " are ") ||
		strings.Contains(rest, " = ") || strings.Contains(rest, " is:")
}

// xmlWorth: the trigger is in an element name ("<db_password>").
func xmlWorth(s string, i, j int) bool {
	for i > 0 && (keyChar(s[i-1]) || s[i-1] == ':') {
		i--
	}
	return i > 0 && s[i-1] == '<'
}
