package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// ScopeKind is one kind of thing a channel's scope names (SPEC R8).
type ScopeKind string

const (
	// ScopeHosts are inventory resources: a machine and everything that
	// runs on it. Entries match a resource's name or alias (globs allowed),
	// "group:NAME" one of its inventory groups, "label:KEY=VALUE" one of
	// its labels (VALUE may be a glob). A resource is in scope when it or
	// a resource it runs inside matches.
	ScopeHosts ScopeKind = "hosts"
	// ScopeKubernetes are clusters and namespaces: "CLUSTER" is the whole
	// cluster (its nodes too), "CLUSTER/NAMESPACE" one namespace; both
	// parts may be globs.
	ScopeKubernetes ScopeKind = "kubernetes"
	// ScopeDatasources are Prometheus datasources by name, and
	// "alertmanager" for the Alertmanager.
	ScopeDatasources ScopeKind = "datasources"
	// ScopeRepos are changes.git_repos by name.
	ScopeRepos ScopeKind = "repos"
	// ScopePlugins are plugins (MCP servers) by name.
	ScopePlugins ScopeKind = "plugins"
)

// ScopeKinds lists every kind, in the order configuration shows them.
func ScopeKinds() []ScopeKind {
	return []ScopeKind{ScopeHosts, ScopeKubernetes, ScopeDatasources, ScopeRepos, ScopePlugins}
}

// AlertmanagerDatasource is the datasource name the Alertmanager has in a
// scope.
const AlertmanagerDatasource = "alertmanager"

// Scope is what one channel may touch: an allowlist per kind. A nil *Scope
// allows everything (a channel without a scope key: vigil as before).
// A non-nil Scope allows of each kind exactly what its list names; an
// empty or missing list allows nothing of that kind, and "*" everything.
type Scope struct {
	Hosts       []string `json:"hosts,omitempty"`
	Kubernetes  []string `json:"kubernetes,omitempty"`
	Datasources []string `json:"datasources,omitempty"`
	Repos       []string `json:"repos,omitempty"`
	Plugins     []string `json:"plugins,omitempty"`
	// Channel is the channel's policy key, for refusals ("slack:C0123");
	// it decides nothing.
	Channel string `json:"channel,omitempty"`
}

// List is the allowlist of kind k.
func (s *Scope) List(k ScopeKind) []string {
	if s == nil {
		return nil
	}
	switch k {
	case ScopeHosts:
		return s.Hosts
	case ScopeKubernetes:
		return s.Kubernetes
	case ScopeDatasources:
		return s.Datasources
	case ScopeRepos:
		return s.Repos
	case ScopePlugins:
		return s.Plugins
	}
	return nil
}

// Allows reports whether the scope allows the thing of kind k called name,
// with labels and groups (hosts only). A nil scope allows everything; an
// unknown kind nothing. For ScopeKubernetes, name is "CLUSTER" for the
// cluster as a whole (cluster-scoped objects such as nodes) and
// "CLUSTER/NAMESPACE" for a namespace.
func (s *Scope) Allows(k ScopeKind, name string, labels map[string]string, groups ...string) bool {
	if s == nil {
		return true
	}
	for _, e := range s.List(k) {
		if entryAllows(k, e, name, labels, groups) {
			return true
		}
	}
	return false
}

// AllowsSome reports whether any part of cluster is in scope (a list of
// every allowed namespace is then narrowed to those).
func (s *Scope) AllowsSome(cluster string) bool {
	if s == nil {
		return true
	}
	for _, e := range s.Kubernetes {
		c, _, _ := strings.Cut(e, "/")
		if globMatch(c, cluster) {
			return true
		}
	}
	return false
}

// Namespaces narrows a cluster's namespaces to those in scope. known are
// the cluster's own namespaces (its allowlist; nil when it has none).
// all reports that the whole cluster is in scope (known stays as it is);
// otherwise the result lists the namespaces allowed, and ok is false when
// a pattern cannot be expanded because known is nil.
func (s *Scope) Namespaces(cluster string, known []string) (ns []string, all, ok bool) {
	if s == nil || s.Allows(ScopeKubernetes, cluster, nil) {
		return known, true, true
	}
	ok = true
	for _, e := range s.Kubernetes {
		c, pat, has := strings.Cut(e, "/")
		if !has || !globMatch(c, cluster) {
			continue
		}
		if !isGlob(pat) {
			if (known == nil || slices.Contains(known, pat)) && !slices.Contains(ns, pat) {
				ns = append(ns, pat)
			}
			continue
		}
		if known == nil {
			ok = false
			continue
		}
		for _, n := range known {
			if globMatch(pat, n) && !slices.Contains(ns, n) {
				ns = append(ns, n)
			}
		}
	}
	return ns, false, ok
}

func entryAllows(k ScopeKind, e, name string, labels map[string]string, groups []string) bool {
	switch k {
	case ScopeHosts:
		if g, ok := strings.CutPrefix(e, "group:"); ok {
			return slices.ContainsFunc(groups, func(x string) bool { return globMatch(g, x) })
		}
		if l, ok := strings.CutPrefix(e, "label:"); ok {
			key, val, _ := strings.Cut(l, "=")
			v, has := labels[key]
			return has && globMatch(val, v)
		}
		return globMatch(strings.ToLower(e), strings.ToLower(name))
	case ScopeKubernetes:
		ec, ens, eHasNS := strings.Cut(e, "/")
		c, ns, hasNS := strings.Cut(name, "/")
		if !globMatch(ec, c) {
			return false
		}
		if !eHasNS {
			return true // the whole cluster
		}
		return hasNS && globMatch(ens, ns)
	case ScopeDatasources, ScopeRepos, ScopePlugins:
		return globMatch(e, name)
	}
	return false
}

// globMatch matches name against a shell pattern (path.Match: *, ?,
// [...]); a malformed pattern matches nothing (ValidateScopeEntry refuses
// it at start).
func globMatch(pattern, name string) bool {
	if pattern == name {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// ValidateScopeEntry checks the form of one entry of kind k: a pattern
// that parses, and for hosts a group or label entry that names something.
func ValidateScopeEntry(k ScopeKind, e string) error {
	if strings.TrimSpace(e) == "" || strings.TrimSpace(e) != e {
		return fmt.Errorf("%q: an entry is a name or pattern without surrounding spaces", e)
	}
	check := func(p string) error {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("%q: not a valid pattern (%v)", e, err)
		}
		return nil
	}
	switch k {
	case ScopeHosts:
		if g, ok := strings.CutPrefix(e, "group:"); ok {
			if g == "" {
				return fmt.Errorf("%q names no group; write group:NAME", e)
			}
			return check(g)
		}
		if l, ok := strings.CutPrefix(e, "label:"); ok {
			key, val, has := strings.Cut(l, "=")
			if !has || key == "" {
				return fmt.Errorf("%q: write label:KEY=VALUE", e)
			}
			return check(val)
		}
		return check(e)
	case ScopeKubernetes:
		c, ns, has := strings.Cut(e, "/")
		if c == "" || has && (ns == "" || strings.Contains(ns, "/")) {
			return fmt.Errorf("%q: write CLUSTER or CLUSTER/NAMESPACE", e)
		}
		if err := check(c); err != nil {
			return err
		}
		return check(ns)
	case ScopeDatasources, ScopeRepos, ScopePlugins:
		return check(e)
	}
	return fmt.Errorf("%q: unknown scope kind %q", e, k)
}

// Reach is one thing a call touches, as a scope sees it.
type Reach struct {
	Kind ScopeKind
	// Name is the host's, datasource's, repo's or plugin's name, or
	// "CLUSTER" / "CLUSTER/NAMESPACE"; for a host, Aliases are its other
	// names.
	Name    string
	Aliases []string
	Labels  map[string]string
	Groups  []string
	// Via are the resources a host-kind thing runs inside, nearest first:
	// it is in scope when it or one of them is.
	Via []Reach
	// Some marks a Kubernetes reach of a part of a cluster that vigil
	// narrows to the scope itself (a list over every allowed namespace):
	// any entry naming the cluster allows it.
	Some bool
}

// allows reports whether s allows r, through r.Via for hosts.
func (s *Scope) allows(r Reach) bool {
	if s == nil {
		return true
	}
	if r.Kind == ScopeKubernetes && r.Some {
		return s.AllowsSome(r.Name)
	}
	for _, n := range append([]string{r.Name}, r.Aliases...) {
		if s.Allows(r.Kind, n, r.Labels, r.Groups...) {
			return true
		}
	}
	if r.Kind == ScopeHosts {
		for _, v := range r.Via {
			if s.allows(v) {
				return true
			}
		}
	}
	return false
}

// ScopeResolver says what a target names, as scopes see it: the
// inventory resource with what it runs inside, or the cluster and
// namespace of a Kubernetes object. ok is false for a name it does not
// know.
type ScopeResolver interface {
	Reaches(target string) (reaches []Reach, ok bool)
}

// Check refuses what the scope does not allow: nil when every reach is
// in scope. target is what the call named, for the message.
func (s *Scope) Check(target string, reaches []Reach) *Block {
	if s == nil {
		return nil
	}
	for _, r := range reaches {
		if !s.allows(r) {
			return s.outside(target, r)
		}
	}
	return nil
}

// outside is the refusal of r, named by target.
func (s *Scope) outside(target string, r Reach) *Block {
	what := describeReach(r)
	if target != "" && !strings.EqualFold(target, r.Name) {
		what = fmt.Sprintf("%q (%s)", target, what)
	}
	return s.notAvailable(what, r.Kind, fmt.Sprintf("it is outside the channel's scope (%s)", s.describeList(r.Kind)))
}

// Unknown refuses a target the scope cannot place: with a scope, what
// vigil cannot tell the owner of is not available.
func (s *Scope) Unknown(target string) *Block {
	return s.notAvailable(fmt.Sprintf("%q", target), "",
		"vigil cannot tell which host, cluster or namespace it belongs to, and this channel is limited to its scope")
}

func (s *Scope) notAvailable(what string, k ScopeKind, why string) *Block {
	ch := "this channel"
	switch s.Channel {
	case "":
	case DefaultChannel:
		ch = "this channel (its scope is the default entry's)"
	default:
		ch = "this channel (" + s.Channel + ")"
	}
	d := map[string]any{"reason": "outside_scope"}
	if k != "" {
		d["scope_kind"] = string(k)
		d["in_scope"] = orEmpty(s.List(k))
	}
	return &Block{
		Code:    CodeStrictResolution,
		Message: fmt.Sprintf("%s is not available in %s: %s", what, ch, why),
		RecoveryHint: "do not retry it under another name; work with what is in scope, and tell the user that " +
			"this resource is handled from another channel",
		Details: d,
	}
}

// ScopeReason is the one line a person is told about an out-of-scope
// name; "" when it is in scope.
func (s *Scope) ScopeReason(target string, reaches []Reach) string {
	if b := s.Check(target, reaches); b != nil {
		return b.Message
	}
	return ""
}

func describeReach(r Reach) string {
	switch r.Kind {
	case ScopeHosts:
		return "host " + r.Name
	case ScopeKubernetes:
		if c, ns, ok := strings.Cut(r.Name, "/"); ok {
			return fmt.Sprintf("namespace %s of cluster %s", ns, c)
		}
		if r.Some {
			return "cluster " + r.Name
		}
		return "cluster " + r.Name + " as a whole"
	case ScopeDatasources:
		return "datasource " + r.Name
	case ScopeRepos:
		return "repository " + r.Name
	case ScopePlugins:
		return "plugin " + r.Name
	}
	return r.Name
}

func (s *Scope) describeList(k ScopeKind) string {
	l := s.List(k)
	if len(l) == 0 {
		return fmt.Sprintf("it allows no %s", k)
	}
	return fmt.Sprintf("%s: %s", k, strings.Join(l, ", "))
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// KubeReach is the scope's view of a Kubernetes resource ID
// ("k8s_deployment:prod:shop/checkout", "k8s_node:prod:node-1"); ok is
// false for any other ID.
func KubeReach(id ResourceID) (Reach, bool) {
	kind, rest, ok := strings.Cut(string(id), ":")
	if !ok || !strings.HasPrefix(kind, "k8s_") {
		return Reach{}, false
	}
	cluster, obj, ok := strings.Cut(rest, ":")
	if !ok || cluster == "" {
		return Reach{}, false
	}
	if ns, _, namespaced := strings.Cut(obj, "/"); namespaced {
		return Reach{Kind: ScopeKubernetes, Name: cluster + "/" + ns}, true
	}
	return Reach{Kind: ScopeKubernetes, Name: cluster}, true
}
