package command

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Where a read may connect (SPEC R1). A network read sends only static
// text the command spells out, to a destination vigil knows: the loopback
// of the host it runs on, the hosts in the inventory, the configured
// datasources, the hosts of policy.http_read_urls and the hosts declared in
// policy (read_destinations, read_only_commands). A tool whose server is
// not on its command line (kubectl's cluster, ceph's monitors, a cloud
// CLI's API) connects to the destinations declared for its service. Host
// names are compared as written, without case, through vigil's own tables
// and never through DNS: a name vigil does not list is not known, whatever
// it resolves to. vigil's own store (store.redis.*) is never a destination.

// ErrDestination is returned for a malformed destination.
var ErrDestination = errors.New("malformed destination")

// ParseDestination parses one declared destination: a host name, an IPv4
// or IPv6 address, or a wildcard *.domain, with an optional :port
// ([v6]:port for an IPv6 address). Without a port every port of the host
// is admitted (Port 0).
func ParseDestination(s string) (Destination, error) {
	bad := func(why string) (Destination, error) {
		return Destination{}, fmt.Errorf("%w %q: %s", ErrDestination, s, why)
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return bad(err.Error())
	}
	wild := strings.HasPrefix(host, "*.")
	name := host
	if wild {
		name = host[2:]
	}
	// A declared "db.internal." is the operator's db.internal; in a
	// command, the dotted name stays another destination (normalDestHost).
	h, ok := normalDestHost(strings.TrimSuffix(name, "."))
	if !ok {
		return bad("host must be a host name, an address or *.domain")
	}
	if wild {
		if _, err := netip.ParseAddr(h); err == nil {
			return bad("a wildcard needs a domain name, not an address")
		}
		h = "*." + h
	}
	return Destination{Host: h, Port: port}, nil
}

// splitHostPort splits host[:port] or [v6][:port]; an IPv6 address
// without brackets has no port.
func splitHostPort(s string) (host string, port int, err error) {
	if s == "" {
		return "", 0, errors.New("empty")
	}
	portText := ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("unterminated [")
		}
		host, rest := s[1:end], s[end+1:]
		if rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", 0, errors.New("text after ]")
			}
			portText = rest[1:]
		}
		if portText == "" {
			return host, 0, nil
		}
		s = host
	case strings.Count(s, ":") == 1:
		s, portText, _ = strings.Cut(s, ":")
	}
	if portText == "" {
		return s, 0, nil
	}
	p, err := strconv.Atoi(portText)
	if err != nil || p < 1 || p > 65535 || !isNumber(portText) {
		return "", 0, fmt.Errorf("port %q is not a number from 1 to 65535", portText)
	}
	return s, p, nil
}

// normalDestHost is a host lower-cased, without brackets, if it is a
// plain host name or an IP address. A final dot stays: "localhost." and
// "web1." are absolute names the resolver is asked for as written (not
// through /etc/hosts' or the search domains' reading of the bare name),
// so they are other destinations than localhost and web1.
func normalDestHost(h string) (string, bool) {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.ToLower(h)
	if h == "" || len(h) > 253 {
		return "", false
	}
	if strings.IndexByte(h, ':') >= 0 {
		a, err := netip.ParseAddr(h)
		if err != nil || a.Zone() != "" {
			return "", false
		}
		return a.String(), true
	}
	for i := 0; i < len(h); i++ {
		if ch := h[i]; !isAlnum(ch) && ch != '.' && ch != '-' && ch != '_' {
			return "", false
		}
	}
	if h[0] == '.' || h[0] == '-' || strings.Contains(h, "..") {
		return "", false
	}
	return h, true
}

// LoopbackHost reports a name or address of the host itself: localhost,
// its *.localhost subdomains, 127.0.0.0/8, ::1, the unspecified addresses
// (connecting to them reaches the host) and IPv4-mapped forms of those.
// Only canonical spellings count: 127.1 or 2130706433 are not known.
func LoopbackHost(h string) bool {
	switch h {
	case "localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback":
		return true
	}
	if strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	if err != nil || a.Zone() != "" {
		return false
	}
	if a.Is4() && strings.Count(h, ".") != 3 {
		return false
	}
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified()
}

// matchHost reports whether a (normalised) host matches a declared one,
// which may be a wildcard *.domain (any name below domain).
func matchHost(host, declared string) bool {
	if suffix, ok := strings.CutPrefix(declared, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return host == declared
}

// sameMachine reports whether two hosts name one machine as far as vigil's
// tables tell: equal, both loopback, or names of one inventory resource.
func (o *Options) sameMachine(a, b string) bool {
	if a == b || LoopbackHost(a) && LoopbackHost(b) {
		return true
	}
	for _, group := range o.Aliases {
		if slices.Contains(group, a) && slices.Contains(group, b) {
			return true
		}
	}
	return false
}

// hostPort is host:port as a person writes it ([v6]:port).
func hostPort(host string, port int) string {
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// String is the destination as host:port ([v6]:port), or the host alone
// when it admits every port.
func (d Destination) String() string {
	if d.Port == 0 {
		return d.Host
	}
	return hostPort(d.Host, d.Port)
}

// declareHint says how to make a destination known.
const declareHint = "declare it in policy.read_destinations, or read on that host with the read tool's target"

// forbidden reports whether host:port is vigil's own store.
func (c *classifier) forbidden(host string, port int) (Destination, bool) {
	for _, f := range c.opts.Forbidden {
		if f.Port == port && c.opts.sameMachine(host, f.Host) {
			return f, true
		}
	}
	return Destination{}, false
}

// knownDest reports whether host:port is a destination vigil knows.
func (c *classifier) knownDest(host string, port int) bool {
	if LoopbackHost(host) {
		return true
	}
	if c.strict > 0 {
		return false
	}
	for _, d := range c.opts.Destinations {
		if (d.Port == 0 || d.Port == port) && matchHost(host, d.Host) {
			return true
		}
	}
	hp := hostPort(host, port)
	for _, p := range c.opts.HTTPReadURLs {
		if p.host == hp {
			return true
		}
	}
	return false
}

// destination records that network client k connects to host:port. It
// returns false after recording a finding when the host is not a plain
// name or address, is vigil's own store, or is not known.
func (c *classifier) destination(k *call, host string, port int) bool {
	return c.destinationHint(k, host, port, declareHint)
}

// destinationHint is destination with its own advice for an unknown host.
func (c *classifier) destinationHint(k *call, host string, port int, hint string) bool {
	h, ok := normalDestHost(host)
	if !ok || port < 0 || port > 65535 {
		c.writer(k.name, RiskMedium, fmt.Sprintf("destination %q is not a plain host name and port", hostPort(host, port)))
		return false
	}
	hp := Destination{Host: h, Port: port}.String()
	if f, bad := c.forbidden(h, port); bad {
		c.construct(k.name, RiskHigh, "destination "+hp+" is vigil's own store ("+f.String()+", store.redis): a read never reaches it")
		return false
	}
	if !c.knownDest(h, port) {
		if c.strict > 0 {
			hint = "a command run on another machine or in a container may reach only that machine's loopback; to read there, use the read tool's target, which runs the command in that machine's sandbox"
		}
		c.writer(k.name, RiskMedium, "destination "+hp+" is not known to vigil ("+hint+")")
		return false
	}
	c.addDest(Destination{Host: h, Port: port})
	c.hit()
	return true
}

// addDest records a proven destination once, unless the command runs on
// another machine or in a container (the local sandbox never sees that
// connection).
func (c *classifier) addDest(d Destination) {
	if c.remote == 0 && !slices.Contains(c.dests, d) {
		c.dests = append(c.dests, d)
	}
}

// service records that network client k connects to the servers declared
// for a service: those its own configuration names (kubectl's kubeconfig,
// ceph.conf) or the provider's API (aws, gcloud, az). Without a
// declaration it is not a read.
func (c *classifier) service(k *call, name, why string) bool {
	if c.strict > 0 {
		c.writer(k.name, RiskMedium, why+"; run on another machine or in a container, that is not this host's configuration (to read there, use the read tool's target, which runs the command in that machine's sandbox)")
		return false
	}
	list := c.opts.Services[name]
	if len(list) == 0 {
		c.writer(k.name, RiskMedium, why+", which vigil does not know; declare them in policy.read_destinations as "+name+"=HOST:PORT")
		return false
	}
	for _, d := range list {
		if f, bad := c.forbidden(d.Host, d.Port); bad {
			c.construct(k.name, RiskHigh, "destination "+d.String()+" is vigil's own store ("+f.String()+", store.redis): a read never reaches it")
			return false
		}
	}
	for _, d := range list {
		c.addDest(d)
	}
	c.hit()
	return true
}

// resolver records a name lookup through the host's own resolver.
func (c *classifier) resolver() {
	c.addDest(resolverDest)
	c.hit()
}

// hit counts a destination proven for the network client being judged.
func (c *classifier) hit() {
	if n := len(c.netFrames); n > 0 {
		c.netFrames[n-1].hits++
	}
}

// resolverDest is the destination of a name lookup through the host's
// own resolver (/etc/resolv.conf): a name is sent, to the resolver the
// operator configured.
var resolverDest = Destination{Host: "resolver", Port: 53}

// urlDest records the destination of an absolute URL: its host and its
// port or the scheme's default.
func (c *classifier) urlDest(k *call, scheme, authority string) bool {
	return c.urlDestHint(k, scheme, authority, declareHint)
}

// urlDestHint is urlDest with its own advice for an unknown host.
func (c *classifier) urlDestHint(k *call, scheme, authority, hint string) bool {
	host, port, err := splitAuthority(authority)
	if err != nil {
		c.writer(k.name, RiskMedium, "URL authority "+strconv.Quote(authority)+": "+err.Error())
		return false
	}
	if port == 0 {
		port = defaultPorts[scheme]
	}
	if port == 0 {
		c.unknown(k.name+" "+scheme+"://", "URL scheme not known to be read-only")
		return false
	}
	return c.destinationHint(k, host, port, hint)
}

// splitAuthority splits a URL authority into host and port; credentials
// (user@) are refused: they are sent, and a reader may misread where the
// host starts.
func splitAuthority(a string) (string, int, error) {
	if strings.ContainsAny(a, "@\\%") {
		return "", 0, errors.New("credentials, escapes or backslashes in the host")
	}
	if a == "" {
		return "", 0, errors.New("no host")
	}
	if !strings.HasPrefix(a, "[") && strings.Count(a, ":") > 1 {
		return "", 0, errors.New("an IPv6 address must be in brackets")
	}
	return splitHostPort(a)
}

// defaultPorts are the ports a client uses for a scheme without one.
var defaultPorts = map[string]int{
	"http": 80, "https": 443, "ssh": 22, "git": 9418, "redis": 6379, "rediss": 6379,
	"postgres": 5432, "postgresql": 5432, "mysql": 3306, "dns": 53, "ftp": 21, "ftps": 990,
	"ldap": 389, "ldaps": 636, "etcd": 2379, "socks5": 1080, "socks5h": 1080, "socks4": 1080,
	"socks4a": 1080, "mongodb": 27017, "amqp": 5672, "amqps": 5671, "ntp": 123, "tcp": 0,
}
