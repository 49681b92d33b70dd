package policy

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/vigilops/vigil/policy/command"
)

// Scope on the shell path (SPEC R8, issue 27). A read or change runs a
// command on a host the scope holds, and the command itself may connect
// elsewhere: kubectl to a cluster, curl to a datasource, ssh or psql to
// another inventory host. The classifier proves each network read's
// destinations (command.Verdict.Destinations) from vigil's own tables;
// a DestinationMap turns each back into what vigil knows it to be, and
// the channel's scope decides. It is built once from the configuration.

// DestinationMap maps a shell command's destinations to scope reaches:
// an API server of a configured Kubernetes cluster or a datasource by
// host and port, an inventory machine by any of its names (every port),
// and the configured destinations that are no scope kind (open: read
// destinations, declared commands' hosts, HTTP read URLs, other
// services' servers). A destination it does not list is unknown, and a
// scoped channel refuses it.
type DestinationMap struct {
	// exact are reaches by host:port (port never 0): datasources and
	// Kubernetes API servers. A host:port listed under several names
	// reaches all of them.
	exact map[command.Destination][]Reach
	// hosts are inventory machines by each of their names; onHost the
	// exact reaches by host alone (a change's words name no port).
	hosts  map[string][]Reach
	onHost map[string][]Reach
	// open are known destinations of no scope kind; Port 0 is every port,
	// a Host "*.domain" any name below domain.
	open []command.Destination
	// contexts are the clusters using a kubeconfig context, and clusters
	// every configured cluster, for changes (CheckCommandWords).
	contexts map[string][]string
	clusters []string
}

// NewDestinationMap returns an empty map.
func NewDestinationMap() *DestinationMap {
	return &DestinationMap{exact: map[command.Destination][]Reach{}, hosts: map[string][]Reach{},
		onHost: map[string][]Reach{}, contexts: map[string][]string{}}
}

// destKey is d's host as the map keys it: lower case, and "localhost"
// for every loopback spelling (one machine).
func destKey(host string) string {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if command.LoopbackHost(h) {
		return "localhost"
	}
	return h
}

// AddDatasource maps the host:port of datasource name (a Prometheus
// datasource, or AlertmanagerDatasource).
func (m *DestinationMap) AddDatasource(name string, d command.Destination) error {
	return m.addExact(d, Reach{Kind: ScopeDatasources, Name: name})
}

// AddCluster maps the API server of Kubernetes cluster name, reached
// through kubeconfig context (may be "").
func (m *DestinationMap) AddCluster(name, context string, d command.Destination) error {
	if err := m.addExact(d, Reach{Kind: ScopeKubernetes, Name: name}); err != nil {
		return err
	}
	if !slices.Contains(m.clusters, name) {
		m.clusters = append(m.clusters, name)
	}
	if context != "" && !slices.Contains(m.contexts[context], name) {
		m.contexts[context] = append(m.contexts[context], name)
	}
	return nil
}

func (m *DestinationMap) addExact(d command.Destination, r Reach) error {
	if d.Port < 1 || d.Port > 65535 || d.Host == "" {
		return fmt.Errorf("%s %q: destination %q needs a host and a port", r.Kind, r.Name, d.String())
	}
	k := command.Destination{Host: destKey(d.Host), Port: d.Port}
	same := func(x Reach) bool { return x.Kind == r.Kind && x.Name == r.Name }
	if !slices.ContainsFunc(m.exact[k], same) {
		m.exact[k] = append(m.exact[k], r)
	}
	if !slices.ContainsFunc(m.onHost[k.Host], same) {
		m.onHost[k.Host] = append(m.onHost[k.Host], r)
	}
	return nil
}

// AddHost maps every port of an inventory machine's name (its name, an
// alias, its SSH host) to reach.
func (m *DestinationMap) AddHost(name string, reach Reach) {
	k := destKey(name)
	if k == "" || k == "localhost" {
		return // the loopback is the machine the command runs on
	}
	m.hosts[k] = append(m.hosts[k], reach)
}

// AddOpen lists a configured destination that is no scope kind.
func (m *DestinationMap) AddOpen(d command.Destination) {
	d.Host = strings.ToLower(d.Host)
	if !slices.Contains(m.open, d) {
		m.open = append(m.open, d)
	}
}

// Place says what d reaches: its reaches (none for an open destination,
// the loopback of the machine the command runs on, or the resolver) and
// whether vigil knows it at all. A host:port of a datasource or cluster
// wins over the machine it runs on: the port says which.
func (m *DestinationMap) Place(d command.Destination) ([]Reach, bool) {
	k := destKey(d.Host)
	if m != nil {
		if r, ok := m.exact[command.Destination{Host: k, Port: d.Port}]; ok {
			return r, true
		}
		if r, ok := m.hosts[k]; ok {
			return r, true
		}
	}
	if k == "localhost" || d == resolverDestination {
		return nil, true
	}
	if m != nil {
		for _, o := range m.open {
			if (o.Port == 0 || o.Port == d.Port) && openMatch(o.Host, k) {
				return nil, true
			}
		}
	}
	return nil, false
}

// resolverDestination is the classifier's destination for a name lookup
// through the host's own resolver.
var resolverDestination = command.Destination{Host: "resolver", Port: 53}

func openMatch(declared, host string) bool {
	if suffix, ok := strings.CutPrefix(declared, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return declared == host
}

// CheckDestinations refuses a shell command whose proven destinations
// reach what the scope does not allow, or a destination the map cannot
// place. nil scope: nil.
func (s *Scope) CheckDestinations(m *DestinationMap, dests []command.Destination) *Block {
	if s == nil {
		return nil
	}
	for _, d := range dests {
		reaches, ok := m.Place(d)
		if !ok {
			return s.notAvailable(fmt.Sprintf("destination %s", d.String()), "",
				"vigil cannot tell which host, cluster or datasource it is, and this channel is limited to its scope")
		}
		if b := s.checkShellReaches(d.String(), reaches); b != nil {
			return b
		}
	}
	return nil
}

// checkShellReaches checks what one destination reaches. A cluster's API
// server reached from the shell is the cluster as a whole: the namespace
// cannot be proven from a command line (kubeconfig defaults, -n,
// --all-namespaces, manifests), so a scope holding only some namespaces
// refuses it and points to the kube tool.
func (s *Scope) checkShellReaches(what string, reaches []Reach) *Block {
	for _, r := range reaches {
		if s.allows(r) {
			continue
		}
		if r.Kind == ScopeKubernetes && s.AllowsSome(r.Name) {
			return s.notAvailable(fmt.Sprintf("%s (the API server of cluster %s) from a shell command", what, r.Name), r.Kind,
				fmt.Sprintf("the scope holds only some namespaces of %s (%s), and a shell Kubernetes client's namespace cannot be proven "+
					"from its command line; use the kube tool, which honours namespaces", r.Name, s.describeList(ScopeKubernetes)))
		}
		return s.outside(what, r)
	}
	return nil
}

// kubeClients are the shell clients that reach a Kubernetes API server
// named by their configuration, not their command line.
var kubeClients = map[string]bool{"kubectl": true, "helm": true, "argocd": true, "kubectl.exe": true, "oc": true, "k9s": true, "flux": true}

// kubeElsewhere are the words (lower case, split at "=") with which a
// Kubernetes client reaches a cluster vigil cannot tell from its words.
var kubeElsewhere = map[string]bool{"--kubeconfig": true, "kubeconfig": true, "--server": true, "--cluster": true, "--kube-apiserver": true}

// CheckCommandWords is a change's scope check on the shell path: the
// classifier proves no destinations for a command that writes, so every
// word of cmd that names a machine, datasource or API server vigil
// knows, and every Kubernetes client (the clusters of its --context /
// --kube-context, or every configured cluster), must be in scope. It
// over-approximates: a word that merely mentions an out-of-scope host
// is refused too, as an approval cannot widen the scope.
func (s *Scope) CheckCommandWords(m *DestinationMap, cmd string) *Block {
	if s == nil {
		return nil
	}
	words := strings.FieldsFunc(strings.ToLower(cmd), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' || r == ':' || r == '[' || r == ']')
	})
	kube, contexts, elsewhere := false, []string(nil), ""
	for i, w := range words {
		base := w[strings.LastIndexByte(w, '/')+1:]
		if kubeClients[base] {
			kube = true
		}
		if (w == "--context" || w == "--kube-context") && i+1 < len(words) {
			contexts = append(contexts, words[i+1])
		}
		if kubeElsewhere[w] {
			elsewhere = w
		}
		// host:port and [v6]:port are split; an IPv6 address is tried whole.
		toks := strings.FieldsFunc(w, func(r rune) bool { return r == ':' || r == '[' || r == ']' })
		if v6, _, _ := strings.Cut(strings.TrimPrefix(w, "["), "]"); strings.Count(v6, ":") > 1 {
			if a, err := netip.ParseAddr(v6); err == nil {
				toks = append(toks, a.String())
			}
		}
		for _, tok := range toks {
			if b := s.checkShellReaches(tok, m.hostReaches(tok)); b != nil {
				return b
			}
		}
	}
	if !kube {
		return nil
	}
	if elsewhere != "" {
		return s.notAvailable(fmt.Sprintf("a Kubernetes client with %s", elsewhere), "",
			"it may reach any cluster, and vigil cannot tell which one; this channel is limited to its scope")
	}
	if m == nil {
		return s.notAvailable("a Kubernetes client", "", "vigil has no table of clusters to place it, and this channel is limited to its scope")
	}
	clusters := m.clusters
	if len(contexts) > 0 {
		clusters = nil
		for _, c := range contexts {
			named, ok := m.contexts[c]
			if !ok {
				return s.notAvailable(fmt.Sprintf("kubeconfig context %q", c), "",
					"vigil cannot tell which cluster it is, and this channel is limited to its scope")
			}
			clusters = append(clusters, named...)
		}
	}
	for _, c := range clusters {
		if b := s.checkShellReaches("a Kubernetes client", []Reach{{Kind: ScopeKubernetes, Name: c}}); b != nil {
			return b
		}
	}
	return nil
}

// hostReaches are the reaches of a word as a host on any port: the
// inventory machine and every datasource or API server on it.
func (m *DestinationMap) hostReaches(word string) []Reach {
	if m == nil {
		return nil
	}
	k := destKey(word)
	if k == "localhost" {
		return nil // the machine the command runs on, which the target check placed
	}
	return append(slices.Clone(m.hosts[k]), m.onHost[k]...)
}

// declaredReach is where the declared read-only commands (policy.
// read_only_commands) in cmd connect: their hosts. known is false when
// one is a network command that declares none (it may connect anywhere),
// or cmd cannot be read as the gate's declared() read it.
func (g *Gate) declaredReach(cmd string, d command.Dialect) (hosts []command.Destination, known bool) {
	lang := syntax.LangBash
	if d == command.DialectPOSIX {
		lang = syntax.LangPOSIX
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	var stages []*syntax.Stmt
	if !pipelineStages(f.Stmts[0], &stages) {
		return nil, false
	}
	for _, st := range stages {
		c, ok := g.matchDeclared(st)
		if !ok || !c.Network {
			continue
		}
		if len(c.Hosts) == 0 {
			return nil, false
		}
		hosts = append(hosts, c.Hosts...)
	}
	return hosts, true
}

// declaredScope is the scope check of a read allowed by
// policy.read_only_commands: the proven destinations of its classified
// parts and the declared hosts of its declared parts.
func (g *Gate) declaredScope(sc *Scope, cmd string, d command.Dialect, dests []command.Destination) *Block {
	if sc == nil {
		return nil
	}
	hosts, ok := g.declaredReach(cmd, d)
	if !ok {
		return sc.notAvailable(fmt.Sprintf("%q", cmd), "",
			"a declared network command (policy.read_only_commands) names no hosts, so vigil cannot tell where it connects, and this channel is limited to its scope")
	}
	for _, h := range hosts {
		if h.Port == 0 {
			// Every port of the host: all it runs that vigil knows.
			if rs := g.dests.hostReaches(h.Host); len(rs) > 0 {
				if b := sc.checkShellReaches(h.String(), rs); b != nil {
					return b
				}
				continue
			}
		}
		if b := sc.CheckDestinations(g.dests, []command.Destination{h}); b != nil {
			return b
		}
	}
	return sc.CheckDestinations(g.dests, dests)
}
