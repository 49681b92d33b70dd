package config

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

// ChannelScope is channels[].scope: what the channel may touch
// (policy.Scope). Without the key a channel reaches everything, as
// before; with it, each kind allows exactly what its list names (a
// missing or empty list: nothing of that kind; "*": everything).
type ChannelScope struct {
	// Hosts are inventory resources: names or aliases (globs allowed),
	// group:NAME, label:KEY=VALUE. What runs inside one is in scope too.
	Hosts []string `mapstructure:"hosts"`
	// Kubernetes are CLUSTER (the whole cluster, nodes included) or
	// CLUSTER/NAMESPACE entries of kubernetes.clusters.
	Kubernetes []string `mapstructure:"kubernetes"`
	// Datasources are observability.prometheus names, and alertmanager.
	Datasources []string `mapstructure:"datasources"`
	// Repos are changes.git_repos names.
	Repos []string `mapstructure:"repos"`
	// Plugins are plugins[].name.
	Plugins []string `mapstructure:"plugins"`
}

// policyScope is the scope in policy form; nil for a channel without one.
func (s *ChannelScope) policyScope(match string) *policy.Scope {
	if s == nil {
		return nil
	}
	return &policy.Scope{
		Hosts: slices.Clone(s.Hosts), Kubernetes: slices.Clone(s.Kubernetes), Datasources: slices.Clone(s.Datasources),
		Repos: slices.Clone(s.Repos), Plugins: slices.Clone(s.Plugins), Channel: match,
	}
}

func (s *ChannelScope) list(k policy.ScopeKind) []string {
	return (&policy.Scope{Hosts: s.Hosts, Kubernetes: s.Kubernetes, Datasources: s.Datasources,
		Repos: s.Repos, Plugins: s.Plugins}).List(k)
}

// validateScopes checks every channels[].scope: each entry's form, and
// that the names it gives exist: inventory resources and groups,
// clusters (and the namespaces of a cluster with an allowlist),
// datasources, repositories and plugins. A pattern may match nothing yet
// (the inventory grows); a plain name must exist.
func (c *Config) validateScopes() []error {
	var errs []error
	var inv *inventory.Inventory
	for i, ch := range c.Channels {
		if ch.Scope == nil {
			continue
		}
		for _, k := range policy.ScopeKinds() {
			for j, e := range ch.Scope.list(k) {
				key := fmt.Sprintf("channels[%d].scope.%s[%d]", i, k, j)
				msg := ""
				if err := policy.ValidateScopeEntry(k, e); err != nil {
					msg = err.Error()
				} else {
					if k == policy.ScopeHosts && inv == nil {
						inv = c.scopeInventory()
					}
					msg = c.unknownScopeName(k, e, inv)
				}
				if msg != "" {
					errs = append(errs, c.scopeProblem(key, []any{"channels", i, "scope", string(k), j}, e, msg))
				}
			}
		}
	}
	return errs
}

// scopeInventory is the inventory scope names are checked against: the
// file's, or the local machine's when there is none. A file that does
// not load is reported by inventory.file's own check.
func (c *Config) scopeInventory() *inventory.Inventory {
	if c.Inventory.File == "" {
		return inventory.Default()
	}
	inv, err := inventory.Load(c.Inventory.File)
	if err != nil {
		return nil
	}
	return inv
}

// unknownScopeName says what is wrong with a well-formed entry that
// names nothing configured; "" when it is fine.
func (c *Config) unknownScopeName(k policy.ScopeKind, e string, inv *inventory.Inventory) string {
	glob := func(s string) bool { return strings.ContainsAny(s, "*?[") }
	switch k {
	case policy.ScopeHosts:
		if inv == nil {
			return ""
		}
		if g, ok := strings.CutPrefix(e, "group:"); ok {
			if glob(g) || slices.Contains(inv.Groups(), g) {
				return ""
			}
			return fmt.Sprintf("no inventory resource is in group %q (groups: %s)", g, listOrNone(inv.Groups()))
		}
		if strings.HasPrefix(e, "label:") || glob(e) {
			return ""
		}
		if _, ok := inv.Lookup(e); ok {
			return ""
		}
		msg := fmt.Sprintf("%q is not in the inventory", e)
		if s := inv.Suggest(e); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, ", ") + "?"
		}
		return msg
	case policy.ScopeKubernetes:
		cl, ns, hasNS := strings.Cut(e, "/")
		var names []string
		for _, kc := range c.Kubernetes.Clusters {
			names = append(names, kc.Name)
		}
		if glob(cl) {
			return ""
		}
		i := slices.Index(names, cl)
		if i < 0 {
			return fmt.Sprintf("no cluster named %q in kubernetes.clusters (clusters: %s)", cl, listOrNone(names))
		}
		allow := c.Kubernetes.Clusters[i].Namespaces
		switch {
		case !hasNS || len(allow) == 0 && !glob(ns):
			return ""
		case len(allow) == 0:
			return fmt.Sprintf("a namespace pattern needs the namespaces of cluster %s to match against; list them in "+
				"kubernetes.clusters[%d].namespaces, or name the namespaces here", cl, i)
		case glob(ns) || slices.Contains(allow, ns):
			return ""
		}
		return fmt.Sprintf("namespace %q is not one cluster %s allows (kubernetes.clusters[%d].namespaces: %s)", ns, cl, i, strings.Join(allow, ", "))
	case policy.ScopeDatasources:
		var names []string
		for _, p := range c.Observability.Prometheus {
			names = append(names, p.Name)
		}
		if c.Observability.Alertmanager.URL != "" {
			names = append(names, policy.AlertmanagerDatasource)
		}
		if glob(e) || slices.Contains(names, e) {
			return ""
		}
		return fmt.Sprintf("no datasource named %q (observability.prometheus names, and alertmanager when "+
			"observability.alertmanager.url is set: %s)", e, listOrNone(names))
	case policy.ScopeRepos:
		var names []string
		for _, r := range c.Changes.GitRepos {
			names = append(names, r.Name)
		}
		if glob(e) || slices.Contains(names, e) {
			return ""
		}
		return fmt.Sprintf("no repository named %q in changes.git_repos (%s)", e, listOrNone(names))
	case policy.ScopePlugins:
		var names []string
		for _, p := range c.Plugins {
			names = append(names, p.Name)
		}
		if glob(e) || slices.Contains(names, e) {
			return ""
		}
		return fmt.Sprintf("no plugin named %q in plugins (%s)", e, listOrNone(names))
	}
	return ""
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none configured"
	}
	return strings.Join(l, ", ")
}

// scopeProblem is the *Error for a scope entry, placed at its line in
// the file when it came from one.
func (c *Config) scopeProblem(key string, path []any, value, msg string) *Error {
	e := c.problemValue(key, value, msg)
	e.Example = ""
	if c.origin != nil && c.origin.path != "" {
		if line := yamlLineOf(c.origin.path, path); line > 0 {
			e.File, e.Line = c.origin.path, line
		}
	}
	return e
}

// yamlLineOf is the line of the node at path (map keys and list indexes)
// in the YAML file, or 0.
func yamlLineOf(file string, path []any) int {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return 0
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return 0
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || p >= len(n.Content) {
				return 0
			}
			n = n.Content[p]
		}
	}
	return n.Line
}

// scopeKeyLine is "FILE:LINE: " for errors that carry both a key and a
// place.
func scopeKeyLine(e *Error) string {
	if e.File == "" || e.Line <= 0 {
		return ""
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ": "
}
