package command

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// "GET is harmless" is a convention, not a fact: admin APIs act on GET
// (Tomcat's /manager/text/undeploy?path=, Solr's ?action=UNLOAD,
// Jenkins's /build?token=). A URL an HTTP client fetches is read-only
// only when none of its path segments, query parameter names or values
// names an action, or when the operator listed it as read-only
// (policy.http_read_urls). A path through the Kubernetes API proxy
// (/proxy/) reaches any service and needs such a listing too.

// actionWords name actions. A word of a URL (its segments, parameter
// names and values, split at punctuation and camelCase humps, compared
// without case) that is one of these, or one of these plus "s"/"es",
// makes the URL write-or-unknown.
var actionWords = wordSet(`delete drop unload undeploy build restart stop start purge flush
	shutdown reset reload kill remove create update set trigger run exec execute destroy
	terminate halt reboot poweroff truncate clear invalidate evict disable enable pause resume
	suspend scale deploy redeploy install uninstall upgrade downgrade rollback revert erase wipe
	apply invoke eval rm del unset modify edit write put patch save upload import cancel abort
	rebuild recreate restore failover promote demote drain cordon uncordon evacuate migrate
	rotate compact vacuum prune gc repair decommission revoke insert unmount shell cmd command
	script`)

// actionWord returns the first word of s that names an action, or "".
func actionWord(s string) string {
	start := -1
	for i := 0; i <= len(s); i++ {
		alnum := i < len(s) && isAlnum(s[i])
		// A camelCase hump starts a new word: deleteAll, forceRestart.
		hump := alnum && start >= 0 && i > start && isUpper(s[i]) && !isUpper(s[i-1])
		if start >= 0 && (!alnum || hump) {
			if w := strings.ToLower(s[start:i]); isActionWord(w) {
				return w
			}
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	return ""
}

func isActionWord(w string) bool {
	if actionWords[w] {
		return true
	}
	for _, suffix := range []string{"s", "es"} {
		if base, ok := strings.CutSuffix(w, suffix); ok && actionWords[base] {
			return true
		}
	}
	return false
}

func isAlnum(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
}

func isUpper(ch byte) bool { return ch >= 'A' && ch <= 'Z' }

// URLPrefix is one entry of policy.http_read_urls: URLs it matches are
// read-only whatever their path below the prefix and their query say.
// An absolute prefix (http or https, a host, an optional port and a path)
// matches URLs an HTTP client fetches; a prefix that is a path alone
// (/readyz, /api/v1/nodes/n1/proxy/metrics) matches the paths of
// `kubectl get --raw` on the configured cluster.
type URLPrefix struct {
	scheme, host, path string
	raw                string
}

// String returns the prefix as configured.
func (p URLPrefix) String() string { return p.raw }

// ErrURLPrefix is returned for a malformed policy.http_read_urls entry.
var ErrURLPrefix = errors.New("malformed URL prefix")

// ParseURLPrefix parses one policy.http_read_urls entry. It refuses
// anything a reader could misread: another scheme, credentials, a query
// or fragment, dot segments, escapes or characters outside a plain path.
func ParseURLPrefix(s string) (URLPrefix, error) {
	bad := func(why string) (URLPrefix, error) {
		return URLPrefix{}, fmt.Errorf("%w %q: %s", ErrURLPrefix, s, why)
	}
	if s == "" {
		return bad("empty")
	}
	if strings.HasPrefix(s, "/") {
		if !cleanPath(s) {
			return bad("path must be plain: no query, escapes, dot segments or empty segments")
		}
		return URLPrefix{path: s, raw: s}, nil
	}
	scheme, rest, ok := strings.Cut(s, "://")
	scheme = strings.ToLower(scheme)
	if !ok || scheme != "http" && scheme != "https" {
		return bad("scheme must be http or https")
	}
	host, path := rest, "/"
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	h, err := normalHost(scheme, host)
	if err != nil {
		return bad(err.Error())
	}
	if !cleanPath(path) {
		return bad("path must be plain: no query, escapes, dot segments or empty segments")
	}
	return URLPrefix{scheme: scheme, host: h, path: path, raw: s}, nil
}

// normalHost returns host[:port] lower-cased with the scheme's default port
// made explicit; it refuses credentials and characters outside a host name
// or address.
func normalHost(scheme, host string) (string, error) {
	if host == "" {
		return "", errors.New("no host")
	}
	name, port := host, ""
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return "", errors.New("unterminated IPv6 address")
		}
		name, port = host[:end+1], strings.TrimPrefix(host[end+1:], ":")
		if host[end+1:] != "" && !strings.HasPrefix(host[end+1:], ":") {
			return "", errors.New("bad host")
		}
		if strings.Trim(name[1:len(name)-1], "0123456789abcdefABCDEF:.") != "" {
			return "", errors.New("bad IPv6 address")
		}
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		name, port = host[:i], host[i+1:]
	}
	if !strings.HasPrefix(name, "[") {
		for i := 0; i < len(name); i++ {
			if ch := name[i]; !isAlnum(ch) && ch != '.' && ch != '-' && ch != '_' {
				return "", fmt.Errorf("host %q has a character outside a host name", name)
			}
		}
	}
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	if !isNumber(port) {
		return "", fmt.Errorf("port %q is not a number", port)
	}
	return strings.ToLower(name) + ":" + port, nil
}

// cleanPath reports a path of plain segments: no query, fragment,
// escapes, backslashes, dot segments or empty segments (other than a
// final slash).
func cleanPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if !isAlnum(ch) && !strings.ContainsRune("/-._~!$&'()*+,;=:@", rune(ch)) {
			return false
		}
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if s == "." || s == ".." || s == "" && i != len(segs)-1 {
			return false
		}
	}
	return true
}

// matches reports whether the prefix covers a URL with the given scheme,
// normalized host and clean path, at a segment boundary.
func (p URLPrefix) matches(scheme, host, path string) bool {
	if p.scheme != scheme || p.host != host {
		return false
	}
	return pathUnder(path, p.path)
}

// pathUnder reports whether path is prefix or below it.
func pathUnder(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || strings.HasSuffix(prefix, "/") || path[len(prefix)] == '/'
}

// listedURL reports whether an operator listed the URL as read-only.
func (c *classifier) listedURL(scheme, host, path string) bool {
	for _, p := range c.opts.HTTPReadURLs {
		if p.scheme != "" && p.matches(scheme, host, path) {
			return true
		}
	}
	return false
}

// listedAPIPath reports whether an operator listed a Kubernetes API path.
func (c *classifier) listedAPIPath(path string) bool {
	if !cleanPath(path) {
		return false
	}
	for _, p := range c.opts.HTTPReadURLs {
		if p.scheme == "" && pathUnder(path, p.path) {
			return true
		}
	}
	return false
}

// curlGuessed are host name prefixes from which curl guesses a scheme
// other than http for a URL written without one.
var curlGuessed = []string{"ftp.", "dict.", "ldap.", "imap.", "smtp.", "pop3."}

// checkURL judges one URL an HTTP client fetches with GET. defaultHost is
// the host of a URL written as :port/path (httpie), or "". It returns
// false after recording a finding.
func (c *classifier) checkURL(k *call, a arg, defaultHost string) bool {
	if !a.static {
		c.unknown(k.name, "dynamic URL")
		return false
	}
	if !c.noControl(k, a) {
		return false
	}
	raw := a.s
	scheme, rest, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		scheme, rest = "http", raw
		if defaultHost != "" && strings.HasPrefix(raw, ":") {
			rest = defaultHost + raw
		}
		for _, g := range curlGuessed {
			if strings.HasPrefix(strings.ToLower(raw), g) {
				c.unknown(k.name+" "+raw, "a client may guess a protocol other than HTTP from the host name")
				return false
			}
		}
	}
	scheme = strings.ToLower(scheme)
	switch scheme {
	case "http", "https":
	case "file":
		if k.name == "curl" {
			return true // reads a local file
		}
		fallthrough
	default:
		c.unknown(k.name+" "+scheme+"://", "URL scheme not known to be read-only")
		return false
	}
	c.net = true
	authority, target := rest, "/"
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, target = rest[:i], rest[i:]
		if target[0] != '/' {
			target = "/" + target
		}
	}
	target, _, _ = strings.Cut(target, "#")
	path, query, _ := strings.Cut(target, "?")
	host, herr := normalHost(scheme, authority)
	if herr == nil && cleanPath(path) && c.listedURL(scheme, host, path) {
		return true
	}
	word := k.name + " " + raw
	if w := urlAction(path, query); w != "" {
		c.writer(word, RiskMedium, "URL names an action ("+w+"); list it in policy.http_read_urls if it is read-only")
		return false
	}
	if proxyPath(path) {
		c.unknown(word, "reaches a service through the Kubernetes API proxy; list it in policy.http_read_urls if it is read-only")
		return false
	}
	return true
}

// urlAction returns the action word of a URL's path or query, after
// undoing percent-encoding (repeatedly: a server may decode twice).
func urlAction(path, query string) string {
	for _, seg := range strings.Split(path, "/") {
		if w := actionWord(unescapeAll(seg, false)); w != "" {
			return w
		}
	}
	for _, kv := range strings.FieldsFunc(query, func(r rune) bool { return r == '&' || r == ';' }) {
		if w := actionWord(unescapeAll(kv, true)); w != "" {
			return w
		}
	}
	return ""
}

// unescapeAll percent-decodes s until it no longer changes (at most four
// times); a malformed escape is left as it is.
func unescapeAll(s string, query bool) string {
	for n := 0; n < 4 && strings.ContainsAny(s, "%+"); n++ {
		var u string
		var err error
		if query {
			u, err = url.QueryUnescape(s)
		} else {
			u, err = url.PathUnescape(s)
		}
		if err != nil || u == s {
			break
		}
		s = u
	}
	return s
}

// proxyPath reports a Kubernetes API proxy path: a "proxy" segment after
// a service, pod or node.
func proxyPath(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		s := strings.ToLower(unescapeAll(seg, false))
		if s == "proxy" || strings.HasPrefix(s, "proxy:") {
			return true
		}
	}
	return false
}
