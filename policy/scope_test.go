package policy

import (
	"strings"
	"testing"
	"time"
)

func TestScopeAllows(t *testing.T) {
	web := map[string]string{"team": "payments", "env": "prod"}
	sc := &Scope{
		Hosts:       []string{"web-*", "group:edge", "label:team=pay*", "DB1"},
		Kubernetes:  []string{"prod/shop", "prod/team-a-*", "staging"},
		Datasources: []string{"main", "alertmanager"},
		Repos:       []string{"infra"},
		Plugins:     nil,
	}
	cases := []struct {
		kind   ScopeKind
		name   string
		labels map[string]string
		groups []string
		want   bool
	}{
		{ScopeHosts, "web-1", nil, nil, true},
		{ScopeHosts, "WEB-2", nil, nil, true},
		{ScopeHosts, "db1", nil, nil, true},
		{ScopeHosts, "db2", nil, nil, false},
		{ScopeHosts, "lb1", nil, []string{"edge"}, true},
		{ScopeHosts, "lb2", nil, []string{"core"}, false},
		{ScopeHosts, "x", web, nil, true},
		{ScopeHosts, "y", map[string]string{"team": "search"}, nil, false},
		{ScopeHosts, "z", map[string]string{"owner": "payments"}, nil, false},
		{ScopeKubernetes, "prod/shop", nil, nil, true},
		{ScopeKubernetes, "prod/team-a-api", nil, nil, true},
		{ScopeKubernetes, "prod/payments", nil, nil, false},
		{ScopeKubernetes, "prod", nil, nil, false}, // a namespace entry is not the whole cluster
		{ScopeKubernetes, "staging", nil, nil, true},
		{ScopeKubernetes, "staging/anything", nil, nil, true},
		{ScopeKubernetes, "dev/shop", nil, nil, false},
		{ScopeDatasources, "main", nil, nil, true},
		{ScopeDatasources, "alertmanager", nil, nil, true},
		{ScopeDatasources, "longterm", nil, nil, false},
		{ScopeRepos, "infra", nil, nil, true},
		{ScopeRepos, "apps", nil, nil, false},
		{ScopePlugins, "grafana", nil, nil, false}, // no list: nothing of the kind
		{ScopeKind("other"), "x", nil, nil, false},
	}
	for _, c := range cases {
		if got := sc.Allows(c.kind, c.name, c.labels, c.groups...); got != c.want {
			t.Errorf("Allows(%s, %q, %v, %v) = %v, want %v", c.kind, c.name, c.labels, c.groups, got, c.want)
		}
	}
	var none *Scope
	for _, k := range ScopeKinds() {
		if !none.Allows(k, "anything", nil) {
			t.Errorf("a nil scope must allow every %s", k)
		}
	}
	empty := &Scope{}
	for _, k := range ScopeKinds() {
		if empty.Allows(k, "anything", nil) {
			t.Errorf("an empty scope must allow no %s", k)
		}
	}
	star := &Scope{Hosts: []string{"*"}, Kubernetes: []string{"*"}}
	if !star.Allows(ScopeHosts, "any", nil) || !star.Allows(ScopeKubernetes, "c/ns", nil) || !star.Allows(ScopeKubernetes, "c", nil) {
		t.Error(`"*" must allow everything of its kind`)
	}
}

func TestScopeHostThroughParent(t *testing.T) {
	sc := &Scope{Hosts: []string{"media-server"}, Channel: "slack:C1"}
	jelly := Reach{Kind: ScopeHosts, Name: "jellyfin", Via: []Reach{{Kind: ScopeHosts, Name: "media-server"}, {Kind: ScopeHosts, Name: "delly"}}}
	if b := sc.Check("jellyfin", []Reach{jelly}); b != nil {
		t.Fatalf("a container inside an in-scope LXC is in scope: %v", b)
	}
	delly := Reach{Kind: ScopeHosts, Name: "delly", Aliases: []string{"pve"}}
	b := sc.Check("pve", []Reach{delly})
	if b == nil {
		t.Fatal("the node above the in-scope LXC is not in scope")
	}
	if b.Code != CodeStrictResolution || !strings.Contains(b.Message, "not available in this channel (slack:C1)") ||
		!strings.Contains(b.Message, "hosts: media-server") || !strings.Contains(b.Message, "host delly") {
		t.Errorf("refusal = %+v", b)
	}
	if !(&Scope{Hosts: []string{"pve"}}).allows(delly) {
		t.Error("an alias in scope allows the host")
	}
}

func TestScopeNamespaces(t *testing.T) {
	sc := &Scope{Kubernetes: []string{"prod/shop", "prod/team-*", "dev"}}
	ns, all, ok := sc.Namespaces("prod", []string{"shop", "team-a", "team-b", "payments"})
	if all || !ok || strings.Join(ns, ",") != "shop,team-a,team-b" {
		t.Errorf("prod = %v all=%v ok=%v", ns, all, ok)
	}
	if _, _, ok := sc.Namespaces("prod", nil); ok {
		t.Error("a pattern cannot be expanded without the cluster's namespaces")
	}
	if ns, all, _ := sc.Namespaces("dev", nil); !all || ns != nil {
		t.Errorf("dev is whole: %v %v", ns, all)
	}
	if ns, all, _ := sc.Namespaces("other", []string{"a"}); all || len(ns) != 0 {
		t.Errorf("other: %v %v", ns, all)
	}
	if !sc.AllowsSome("prod") || sc.AllowsSome("other") {
		t.Error("AllowsSome")
	}
}

func TestKubeReach(t *testing.T) {
	for id, want := range map[ResourceID]string{
		"k8s_deployment:prod:shop/checkout": "prod/shop",
		"k8s_node:prod:node-1":              "prod",
		"k8s_pod:dev:a/b":                   "dev/a",
	} {
		r, ok := KubeReach(id)
		if !ok || r.Name != want || r.Kind != ScopeKubernetes {
			t.Errorf("KubeReach(%s) = %+v %v, want %s", id, r, ok, want)
		}
	}
	for _, id := range []ResourceID{"node:delly", "lxc:delly:141", "k8s_pod", "k8s_pod::x"} {
		if _, ok := KubeReach(id); ok {
			t.Errorf("KubeReach(%s) must not place it", id)
		}
	}
}

func TestValidateScopeEntry(t *testing.T) {
	good := map[ScopeKind][]string{
		ScopeHosts:       {"web-*", "group:edge", "label:team=payments", "label:team=*"},
		ScopeKubernetes:  {"prod", "prod/shop", "*/team-*"},
		ScopeDatasources: {"main"},
	}
	for k, es := range good {
		for _, e := range es {
			if err := ValidateScopeEntry(k, e); err != nil {
				t.Errorf("%s %q: %v", k, e, err)
			}
		}
	}
	bad := map[ScopeKind][]string{
		ScopeHosts:      {"", " web", "group:", "label:team", "label:=x", "web-["},
		ScopeKubernetes: {"/shop", "prod/", "prod/a/b", "pr[od"},
		ScopeRepos:      {"[x"},
	}
	for k, es := range bad {
		for _, e := range es {
			if err := ValidateScopeEntry(k, e); err == nil {
				t.Errorf("%s %q: want an error", k, e)
			}
		}
	}
}

type fakeScopes map[string][]Reach

func (f fakeScopes) Reaches(t string) ([]Reach, bool) {
	r, ok := f[strings.ToLower(t)]
	return r, ok
}

func TestGateScope(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := NewGate(Rules{ReadSandbox: SandboxOff}).WithScopes(fakeScopes{
		"web-1": {{Kind: ScopeHosts, Name: "web-1"}},
		"db-1":  {{Kind: ScopeHosts, Name: "db-1"}},
	})
	s := NewSessionState()
	s.Context.Add(Resource{ID: "k8s_deployment:prod:shop/checkout", Kind: "k8s_deployment", Name: "checkout"}, now)
	s.Context.Add(Resource{ID: "k8s_deployment:prod:pay/ledger", Kind: "k8s_deployment", Name: "ledger"}, now)
	s.Context.Add(Resource{ID: "node:web-1", Kind: "node", Name: "web-1"}, now)
	s.Context.Add(Resource{ID: "node:db-1", Kind: "node", Name: "db-1"}, now)
	sc := &Scope{Hosts: []string{"web-*"}, Kubernetes: []string{"prod/shop"}, Datasources: []string{"main"}, Channel: "slack:CA"}
	who := Requester{User: "U1", Operator: true, Scope: sc}

	read := func(target string, reaches ...Reach) Decision {
		return g.Authorize(s, Action{Tool: "read", Kind: KindRead, Target: target, Command: "uptime", Reaches: reaches}, LevelControlled, who, now)
	}
	if d := read("web-1"); d.Block != nil {
		t.Fatalf("in scope: %v", d.Block)
	}
	d := read("db-1")
	if d.Block == nil || !strings.Contains(d.Block.Message, `"db-1" is not available in this channel (slack:CA)`) &&
		!strings.Contains(d.Block.Message, "host db-1 is not available") {
		t.Fatalf("out of scope read = %+v", d.Block)
	}
	if d := read("mystery"); d.Block == nil || !strings.Contains(d.Block.Message, "cannot tell") {
		t.Fatalf("an unplaceable target with a scope = %+v", d.Block)
	}
	if d := read("", Reach{Kind: ScopeDatasources, Name: "longterm"}); d.Block == nil || !strings.Contains(d.Block.Message, "datasource longterm") {
		t.Fatalf("out of scope datasource = %+v", d.Block)
	}
	write := func(target string) Decision {
		return g.Authorize(s, Action{Tool: "kube", Name: "scale", Kind: KindWrite, Target: target}, LevelControlled, who, now)
	}
	if d := write("k8s_deployment:prod:shop/checkout"); d.Block != nil && strings.Contains(d.Block.Message, "not available") {
		t.Fatalf("in-scope kube write refused for its scope: %+v", d.Block)
	}
	if d := write("ledger"); d.Block == nil || !strings.Contains(d.Block.Message, "namespace pay of cluster prod") {
		t.Fatalf("out-of-scope kube write by resolved name = %+v", d.Block)
	}
	// Without a scope nothing changes.
	who.Scope = nil
	if d := read("db-1"); d.Block != nil {
		t.Fatalf("no scope: %v", d.Block)
	}
	if d := read("mystery"); d.Block != nil {
		t.Fatalf("no scope, unknown target read (the scoped read bypass): %v", d.Block)
	}
}

// BenchmarkGateScope is what a channel's scope adds to every call: the
// gate's decision for a read of an inventory host, without a scope and
// with a realistic one (globs, a group, a label; the host placed through
// its parent).
func BenchmarkGateScope(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	host := Reach{Kind: ScopeHosts, Name: "jelly", Labels: map[string]string{"team": "media"},
		Via: []Reach{{Kind: ScopeHosts, Name: "media-server", Aliases: []string{"media"}, Groups: []string{"media"}},
			{Kind: ScopeHosts, Name: "delly", Aliases: []string{"pve"}}}}
	g := NewGate(Rules{ReadSandbox: SandboxOff}).WithScopes(fakeScopes{"jelly": {host}})
	s := NewSessionState()
	s.Context.Add(Resource{ID: "docker_container:media-server:jelly", Kind: "docker_container", Name: "jelly"}, now)
	a := Action{Tool: "read", Kind: KindRead, Target: "jelly", Command: "uptime"}
	sc := &Scope{Hosts: []string{"web-*", "db-?", "group:frontend", "label:team=shop*", "media-server"},
		Kubernetes: []string{"prod/shop"}, Datasources: []string{"main"}}
	for _, c := range []struct {
		name  string
		scope *Scope
	}{{"none", nil}, {"scoped", sc}} {
		b.Run(c.name, func(b *testing.B) {
			who := Requester{User: "U1", Scope: c.scope}
			b.ReportAllocs()
			for b.Loop() {
				if d := g.Authorize(s, a, LevelControlled, who, now); d.Block != nil {
					b.Fatal(d.Block)
				}
			}
		})
	}
}
