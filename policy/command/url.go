package command

import (
	"errors"
	"fmt"
	"strings"
)

// "GET is harmless" is a convention, not a fact: admin APIs act on GET
// (Tomcat's /manager/text/undeploy?path=, Solr's ?action=UNLOAD,
// Jenkins's /build?token=), and no list of action words can name them
// all. A URL an HTTP client fetches is read-only only when the operator
// listed it (policy.http_read_urls), or when it has the exact shape of a
// well-known read endpoint (readEndpoints: health checks, metrics,
// version, the Prometheus and Alertmanager read APIs, ...) with only the
// query parameters that endpoint reads. Everything else needs approval,
// and the reason says how to declare it.

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

// urlUse is how an HTTP client fetches a URL.
type urlUse struct {
	// defaultHost is the host of a URL written as :port/path (httpie).
	defaultHost string
	// defaultScheme is the scheme of a URL written without one.
	defaultScheme string
	// socket: the request goes over a unix socket (curl --unix-socket),
	// not to the URL's host.
	socket bool
	// params are query parameters added apart from the URL (httpie's
	// name==value items).
	params []string
}

// checkURL judges one URL an HTTP client fetches with GET: its host must
// be a destination vigil knows, and the URL a listed one or a well-known
// read endpoint. It returns false after recording a finding.
func (c *classifier) checkURL(k *call, a arg, use urlUse) bool {
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
		if use.defaultScheme != "" {
			scheme = use.defaultScheme
		}
		if use.defaultHost != "" && strings.HasPrefix(raw, ":") {
			rest = use.defaultHost + raw
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
		if k.name == "curl" && (strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "localhost/")) {
			c.localNet() // reads a local file
			return true
		}
		fallthrough
	default:
		c.unknown(k.name+" "+scheme+"://", "URL scheme not known to be read-only")
		return false
	}
	authority, target := rest, "/"
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, target = rest[:i], rest[i:]
		if target[0] != '/' {
			target = "/" + target
		}
	}
	target, _, _ = strings.Cut(target, "#")
	path, query, _ := strings.Cut(target, "?")
	if use.socket {
		c.localNet()
	} else if !c.urlDestHint(k, scheme, authority, "declare it in policy.http_read_urls") {
		return false
	}
	host, herr := normalHost(scheme, authority)
	if herr == nil && cleanPath(path) && c.listedURL(scheme, host, path) {
		return true
	}
	if name, ok := readEndpoint(path, query, use.params); ok {
		_ = name
		return true
	}
	c.writer(k.name+" "+raw, RiskMedium, "URL is not a known read endpoint (health, readiness, metrics, version, Prometheus or Alertmanager reads, ...); list it in policy.http_read_urls if a GET of it only reads")
	return false
}

// endpoint is one well-known read endpoint: its path, "*" standing for
// any one segment, and the query parameters it reads.
type endpoint struct {
	path   string
	params string
}

// readEndpoints are GET endpoints whose servers define them as reads:
// health, liveness and readiness probes, metrics and version pages (the
// conventions of Kubernetes components, Spring Boot actuators, Go and
// Prometheus exporters), the Prometheus HTTP API's query and status
// reads, the Alertmanager API v2 reads, Elasticsearch and OpenSearch's
// _cluster/health and _cat, Consul's health and status reads, and the
// Docker Engine API's listings (over its socket). A parameter not listed
// for an endpoint makes the URL unknown.
var readEndpoints = []endpoint{
	{"/health", "pretty"}, {"/healthz", "verbose exclude"}, {"/healthz/*", "verbose"},
	{"/livez", "verbose exclude"}, {"/livez/*", "verbose"}, {"/readyz", "verbose exclude"},
	{"/readyz/*", "verbose"}, {"/ready", ""}, {"/status", ""}, {"/ping", ""}, {"/-/healthy", ""},
	{"/-/ready", ""}, {"/health/live", ""}, {"/health/ready", ""}, {"/health/liveness", ""},
	{"/health/readiness", ""}, {"/api/health", ""}, {"/version", ""},
	{"/metrics", "collect[] exclude[] name[] format"},
	{"/actuator/health", ""}, {"/actuator/health/*", ""}, {"/actuator/info", ""},
	{"/actuator/prometheus", ""}, {"/actuator/metrics", ""}, {"/actuator/metrics/*", "tag"},
	// Prometheus HTTP API.
	{"/api/v1/query", "query time timeout limit stats"},
	{"/api/v1/query_range", "query start end step timeout limit stats"},
	{"/api/v1/query_exemplars", "query start end"},
	{"/api/v1/series", "match[] start end limit"}, {"/api/v1/labels", "match[] start end limit"},
	{"/api/v1/label/*/values", "match[] start end limit"}, {"/api/v1/targets", "state scrapePool"},
	{"/api/v1/targets/metadata", "match_target metric limit"},
	{"/api/v1/rules", "type rule_name[] rule_group[] file[] exclude_alerts match[]"},
	{"/api/v1/alerts", ""}, {"/api/v1/alertmanagers", ""}, {"/api/v1/metadata", "metric limit limit_per_metric"},
	{"/api/v1/status/config", ""}, {"/api/v1/status/flags", ""}, {"/api/v1/status/runtimeinfo", ""},
	{"/api/v1/status/buildinfo", ""}, {"/api/v1/status/tsdb", "limit"}, {"/api/v1/status/walreplay", ""},
	// Alertmanager API v2.
	{"/api/v2/alerts", "filter silenced inhibited active unprocessed receiver"},
	{"/api/v2/alerts/groups", "filter silenced inhibited active receiver"},
	{"/api/v2/silences", "filter"}, {"/api/v2/silence/*", ""}, {"/api/v2/status", ""},
	{"/api/v2/receivers", ""},
	// Elasticsearch and OpenSearch.
	{"/_cluster/health", esParams}, {"/_cluster/health/*", esParams}, {"/_cluster/stats", esParams},
	{"/_cat", ""}, {"/_cat/*", esCatParams}, {"/_cat/*/*", esCatParams},
	// Consul.
	{"/v1/status/leader", ""}, {"/v1/status/peers", ""}, {"/v1/health/state/*", "dc filter ns"},
	{"/v1/health/service/*", "dc passing filter tag ns"}, {"/v1/health/node/*", "dc filter ns"},
	{"/v1/health/checks/*", "dc filter ns"}, {"/v1/catalog/services", "dc ns"}, {"/v1/catalog/nodes", "dc"},
	// Docker Engine API (curl --unix-socket /var/run/docker.sock).
	{"/_ping", ""}, {"/info", ""}, {"/containers/json", "all limit size filters"},
	{"/containers/*/json", "size"}, {"/containers/*/top", "ps_args"},
	{"/containers/*/logs", "stdout stderr since until timestamps tail"},
	{"/containers/*/stats", "stream one-shot"}, {"/images/json", "all filters digests"},
	{"/networks", "filters"}, {"/volumes", "filters"},
}

const (
	esParams    = "level local master_timeout timeout pretty human filter_path"
	esCatParams = "v h s help format bytes pretty time local master_timeout health pri expand_wildcards"
)

// readEndpoint reports whether path and query (and extra parameters) are
// a well-known read endpoint, by exact shape: a clean path (no escapes or
// dot segments) and only listed parameters, each given once.
func readEndpoint(path, query string, extra []string) (string, bool) {
	if !cleanPath(path) {
		return "", false
	}
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	for _, e := range readEndpoints {
		if !pathShape(path, e.path) {
			continue
		}
		names := extra
		if query != "" {
			for _, kv := range strings.Split(query, "&") {
				name, _, _ := strings.Cut(kv, "=")
				names = append(names[:len(names):len(names)], name)
			}
		}
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "%+;") || !hasWord(e.params, n) {
				return "", false
			}
		}
		return e.path, true
	}
	return "", false
}

// pathShape matches a clean path against a shape whose "*" segments stand
// for any one segment.
func pathShape(path, shape string) bool {
	for {
		p, prest, pmore := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		s, srest, smore := strings.Cut(strings.TrimPrefix(shape, "/"), "/")
		if s != "*" && p != s || s == "*" && p == "" || pmore != smore {
			return false
		}
		if !pmore {
			return true
		}
		path, shape = "/"+prest, "/"+srest
	}
}

func isAlnum(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9'
}
