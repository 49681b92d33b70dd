package app

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/alerts"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/changes"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/kube"
	"github.com/vigilops/vigil/tools/metrics"
	"github.com/vigilops/vigil/tools/transport"
)

// scopeParts are what a channel's tool set is built from: the tools every
// channel shares (the builtins) and the parts the datasource tools and
// plugins are narrowed from.
type scopeParts struct {
	builtins []tools.Tool
	// inv and exec build a scope's query tool over the part of the
	// inventory it holds.
	inv      *inventory.Inventory
	exec     transport.Executor
	sources  []metrics.Datasource
	alerts   alerts.Config
	clusters []*kube.Cluster
	// kubeOpts are the kube tool's options every scope keeps (the
	// identity mapping: a scope narrows what is reached, never whose
	// permissions are used).
	kubeOpts []kube.Option
	changes  changes.Config
	// plugins are each plugin's tools by plugin name, in order.
	plugins     []string
	pluginTools map[string][]tools.Tool
}

// channelRegistries builds, once per scope, the registry a channel's runs
// use: its tool descriptions list only what the scope holds (SPEC R8).
// A channel without a scope uses the full registry.
type channelRegistries struct {
	parts   scopeParts
	lookup  func(channel string) (policy.ChannelPolicy, bool)
	mu      sync.Mutex
	byScope map[*policy.Scope]*scopedRegistry
}

// For returns the registry of channel; nil for a channel without a scope
// (the agent then uses the full one).
func (c *channelRegistries) For(channel string) agent.Registry {
	cp, ok := c.lookup(channel)
	sc := cp.Scope
	if !ok {
		// Not a configured channel: nothing is in scope.
		sc = &policy.Scope{Channel: channel}
	}
	if sc == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.byScope[sc]; ok {
		return r
	}
	r, err := c.parts.registry(sc)
	if err != nil {
		// Names were checked at start; a registry that cannot be built
		// offers nothing rather than everything.
		r = &scopedRegistry{scope: sc, Registry: emptyRegistry()}
	}
	c.byScope[sc] = r
	return r
}

func emptyRegistry() *tools.Registry {
	r, _ := tools.NewRegistry()
	return r
}

// registry builds the tools of one scope: the builtins as they are, the
// datasource tools over what the scope allows (an unavailable one says
// so in its description), and the plugins in scope.
func (p scopeParts) registry(sc *policy.Scope) (*scopedRegistry, error) {
	r := &scopedRegistry{scope: sc, hidden: map[string]string{}}
	var ts []tools.Tool
	for _, t := range p.builtins {
		if t.Spec().Name == "query" && p.inv != nil {
			// query searches, lists and shows the topology of what the
			// scope holds (and what that runs inside) only.
			view, err := p.inv.Filter(func(res inventory.Resource) bool {
				reaches, _ := p.inv.ScopeReaches(string(res.ID))
				return sc.Check(res.Name, reaches) == nil
			})
			if err != nil {
				return nil, err
			}
			t = builtin.NewQueryTool(view, p.exec)
		}
		ts = append(ts, t)
	}

	var sources []metrics.Datasource
	for _, s := range p.sources {
		if sc.Allows(policy.ScopeDatasources, s.Name, nil) {
			sources = append(sources, s)
		}
	}
	mt := metrics.New(sources, nil)
	if len(sources) == 0 && len(p.sources) > 0 {
		mt = unavailable(mt, "no Prometheus datasource is in this channel's scope")
	}
	ts = append(ts, mt)

	at := alerts.New(p.alerts)
	if p.alerts.API != nil && !sc.Allows(policy.ScopeDatasources, policy.AlertmanagerDatasource, nil) {
		at = unavailable(at, "the Alertmanager is outside this channel's scope")
	}
	ts = append(ts, at)

	var clusters []*kube.Cluster
	for _, c := range p.clusters {
		if !sc.AllowsSome(c.Name) {
			continue
		}
		ns, all, _ := sc.Namespaces(c.Name, c.Namespaces)
		if !all {
			if len(ns) == 0 {
				continue
			}
			c = c.Narrowed(ns)
		}
		clusters = append(clusters, c)
	}
	kt := kube.New(clusters, nil, p.kubeOpts...)
	if len(clusters) == 0 && len(p.clusters) > 0 {
		kt = unavailable(kt, "no Kubernetes cluster or namespace is in this channel's scope")
	}
	ts = append(ts, kt)

	cc := p.changes
	cc.GitRepos = nil
	for _, g := range p.changes.GitRepos {
		if sc.Allows(policy.ScopeRepos, g.Name, nil) {
			cc.GitRepos = append(cc.GitRepos, g)
		}
	}
	ts = append(ts, changes.New(cc))

	for _, name := range p.plugins {
		if sc.Allows(policy.ScopePlugins, name, nil) {
			ts = append(ts, p.pluginTools[name]...)
			continue
		}
		for _, t := range p.pluginTools[name] {
			r.hidden[t.Spec().Name] = name
		}
	}
	reg, err := tools.NewRegistry(ts...)
	if err != nil {
		return nil, err
	}
	r.Registry = reg
	r.reaches = map[string]func(json.RawMessage) []policy.Reach{
		"metrics": metricsReaches,
		"alerts":  func(json.RawMessage) []policy.Reach { return alertsReaches(p.alerts.API != nil) },
		"kube":    kubeReaches(p.clusters),
	}
	return r, nil
}

// scopedRegistry is one scope's registry. Every proposal carries what it
// reaches besides its target (a datasource, a cluster and namespace), and
// a call outside the scope is refused with the scope's reason before the
// tool sees it; the gate checks the same reaches again, at every call and
// before an approved call runs. A plugin outside the scope has no tools
// here, and a call to one says why.
type scopedRegistry struct {
	*tools.Registry
	scope   *policy.Scope
	hidden  map[string]string
	reaches map[string]func(json.RawMessage) []policy.Reach
}

var _ agent.Registry = (*scopedRegistry)(nil)

// Propose implements agent.Registry.
func (r *scopedRegistry) Propose(name string, raw json.RawMessage) (tools.Proposal, *policy.Block) {
	if plugin, ok := r.hidden[name]; ok {
		p := tools.Proposal{Action: policy.Action{Tool: name, Kind: policy.KindWrite}, Summary: "plugin tool " + name}
		return p, r.scope.Check(name, []policy.Reach{{Kind: policy.ScopePlugins, Name: plugin}})
	}
	var reaches []policy.Reach
	if f := r.reaches[name]; f != nil {
		reaches = f(raw)
		if b := r.scope.Check("", reaches); b != nil {
			return tools.Proposal{Action: policy.Action{Tool: name, Kind: policy.KindWrite, Reaches: reaches}}, b
		}
	}
	p, b := r.Registry.Propose(name, raw)
	p.Reaches = reaches
	return p, b
}

// metricsReaches is the datasource a metrics call names; none when it
// leaves it out (the channel's tool then asks its own first datasource).
func metricsReaches(raw json.RawMessage) []policy.Reach {
	var a struct {
		Datasource string `json:"datasource"`
	}
	if json.Unmarshal(raw, &a) != nil || a.Datasource == "" {
		return nil
	}
	return []policy.Reach{{Kind: policy.ScopeDatasources, Name: a.Datasource}}
}

// alertsReaches: every alerts call reaches the Alertmanager.
func alertsReaches(configured bool) []policy.Reach {
	if !configured {
		return nil
	}
	return []policy.Reach{{Kind: policy.ScopeDatasources, Name: policy.AlertmanagerDatasource}}
}

// kubeReaches places a kube call: a namespace of a cluster, the cluster as
// a whole for nodes, or some of it for a call over every allowed namespace
// (the channel's tool narrows those to its scope).
func kubeReaches(clusters []*kube.Cluster) func(json.RawMessage) []policy.Reach {
	return func(raw json.RawMessage) []policy.Reach {
		var a struct {
			Action    string `json:"action"`
			Cluster   string `json:"cluster"`
			Namespace string `json:"namespace"`
			Kind      string `json:"kind"`
		}
		if json.Unmarshal(raw, &a) != nil {
			return nil
		}
		cluster := a.Cluster
		if cluster == "" {
			if len(clusters) != 1 {
				return nil // the tool asks which
			}
			cluster = clusters[0].Name
		}
		switch {
		case a.Kind == string(kube.KindNode) || a.Action == string(kube.ActionCordon) || a.Action == string(kube.ActionUncordon):
			return []policy.Reach{{Kind: policy.ScopeKubernetes, Name: cluster}}
		case a.Namespace != "":
			return []policy.Reach{{Kind: policy.ScopeKubernetes, Name: cluster + "/" + a.Namespace}}
		}
		return []policy.Reach{{Kind: policy.ScopeKubernetes, Name: cluster, Some: true}}
	}
}

// unavailableTool is a tool this channel's scope leaves nothing of: its
// description says so first. Its calls are refused by the scope (the
// registry's reaches and the gate).
type unavailableTool struct {
	tools.Tool
	spec tools.Spec
}

func unavailable(t tools.Tool, why string) tools.Tool {
	s := t.Spec()
	desc := s.Description
	if rest, ok := strings.CutPrefix(desc, "Not configured here: "); ok {
		// Its own sentence says it is not configured: not the reason here.
		if _, after, ok := strings.Cut(rest, ". "); ok {
			desc = after
		}
	}
	s.Description = "Not available in this channel: " + why + " (channels[].scope), so calls are refused. " + desc
	return unavailableTool{Tool: t, spec: s}
}

func (u unavailableTool) Spec() tools.Spec { return u.spec }
