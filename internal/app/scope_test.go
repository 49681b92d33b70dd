package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/alerts"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/changes"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/kube"
	"github.com/vigilops/vigil/tools/metrics"
)

// stubTool stands for a plugin's tool.
type stubTool struct{ name string }

func (s stubTool) Spec() tools.Spec {
	return tools.Spec{Name: s.name, Description: "[plugin pd] page", Kinds: policy.ActionKinds{Every: policy.KindRead}}
}
func (s stubTool) Propose(json.RawMessage) (tools.Proposal, *policy.Block) {
	return tools.Proposal{Action: policy.Action{Tool: s.name}}, nil
}
func (s stubTool) Execute(context.Context, tools.Proposal) tools.Result { return tools.Result{} }

func testParts() scopeParts {
	cs := fake.NewSimpleClientset()
	return scopeParts{
		sources: []metrics.Datasource{{Name: "shop-prom"}, {Name: "pay-prom"}},
		alerts:  alerts.Config{API: &alerts.Client{}},
		clusters: []*kube.Cluster{
			{Name: "prod", Client: cs, Namespaces: []string{"shop", "payments", "team-a"}},
			{Name: "dev", Client: cs},
		},
		changes:     changes.Config{GitRepos: []changes.Repo{{Name: "infra", Path: "/tmp"}, {Name: "apps", Path: "/tmp"}}},
		plugins:     []string{"pd"},
		pluginTools: map[string][]tools.Tool{"pd": {stubTool{name: "pd_page"}}},
	}
}

func specOf(t *testing.T, r *scopedRegistry, name string) string {
	t.Helper()
	tl, ok := r.Get(name)
	if !ok {
		t.Fatalf("no %s tool", name)
	}
	return tl.Spec().Description
}

func TestScopedRegistries(t *testing.T) {
	p := testParts()
	shop, err := p.registry(&policy.Scope{Kubernetes: []string{"prod/shop", "prod/team-*"}, Datasources: []string{"shop-prom"},
		Repos: []string{"infra"}, Channel: "slack:C1"})
	if err != nil {
		t.Fatal(err)
	}
	pay, err := p.registry(&policy.Scope{Kubernetes: []string{"prod/payments", "dev"}, Datasources: []string{"pay-prom", "alertmanager"},
		Plugins: []string{"pd"}, Channel: "slack:C2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		r         *scopedRegistry
		tool      string
		want, not []string
	}{
		{shop, "kube", []string{"prod (namespaces shop, team-a)"}, []string{"payments", "dev"}},
		{pay, "kube", []string{"prod (namespaces payments)", "dev"}, []string{"shop"}},
		{shop, "metrics", []string{"shop-prom"}, []string{"pay-prom"}},
		{pay, "metrics", []string{"pay-prom"}, []string{"shop-prom"}},
		{shop, "changes", []string{"infra"}, []string{"apps"}},
		{pay, "changes", nil, []string{"infra", "apps"}},
		{shop, "alerts", []string{"Not available in this channel: the Alertmanager is outside this channel's scope"}, nil},
		{pay, "alerts", nil, []string{"Not available"}},
	} {
		d := specOf(t, c.r, c.tool)
		for _, w := range c.want {
			if !strings.Contains(d, w) {
				t.Errorf("%s %s description lacks %q: %q", c.r.scope.Channel, c.tool, w, d)
			}
		}
		for _, n := range c.not {
			if strings.Contains(d, n) {
				t.Errorf("%s %s description names %q: %q", c.r.scope.Channel, c.tool, n, d)
			}
		}
	}
	if slicesHas(shop.Names(), "pd_page") || !slicesHas(pay.Names(), "pd_page") {
		t.Errorf("plugin tools: shop %v, pay %v", shop.Names(), pay.Names())
	}
	if _, b := shop.Propose("pd_page", json.RawMessage(`{}`)); b == nil || !strings.Contains(b.Message, "(plugin pd) is not available in this channel (slack:C1)") {
		t.Errorf("a hidden plugin tool: %+v", b)
	}
	for _, c := range []struct {
		r    *scopedRegistry
		args string
		want string // "" : allowed by the scope
	}{
		{shop, `{"action":"list","cluster":"prod","namespace":"payments","kind":"pod"}`, "namespace payments of cluster prod is not available"},
		{shop, `{"action":"list","cluster":"prod","namespace":"shop","kind":"pod"}`, ""},
		{shop, `{"action":"list","cluster":"prod","kind":"pod"}`, ""},
		{shop, `{"action":"list","cluster":"dev","kind":"pod"}`, "cluster dev is not available"},
		{shop, `{"action":"get","cluster":"prod","kind":"node","name":"n1"}`, "cluster prod as a whole is not available"},
		{pay, `{"action":"cordon","cluster":"dev","name":"n1"}`, ""},
	} {
		p, b := c.r.Propose("kube", json.RawMessage(c.args))
		switch {
		case c.want == "" && b != nil && strings.Contains(b.Message, "not available"):
			t.Errorf("%s %s refused: %v", c.r.scope.Channel, c.args, b)
		case c.want != "" && (b == nil || !strings.Contains(b.Message, c.want)):
			t.Errorf("%s %s = %+v, want %q", c.r.scope.Channel, c.args, b, c.want)
		case c.want == "" && b == nil && len(p.Reaches) == 0:
			t.Errorf("%s %s: the proposal carries no reaches for the gate", c.r.scope.Channel, c.args)
		}
	}
	if _, b := shop.Propose("metrics", json.RawMessage(`{"action":"query","query":"up","datasource":"pay-prom"}`)); b == nil ||
		!strings.Contains(b.Message, "datasource pay-prom is not available") {
		t.Errorf("out-of-scope datasource: %+v", b)
	}
	if _, b := shop.Propose("alerts", json.RawMessage(`{"action":"list"}`)); b == nil || !strings.Contains(b.Message, "datasource alertmanager") {
		t.Errorf("out-of-scope alertmanager: %+v", b)
	}
}

func slicesHas(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// A scope's query tool lists, searches and shows only what the scope
// holds, with what that runs inside.
func TestScopedQuery(t *testing.T) {
	inv, err := inventory.Parse([]byte(`resources:
  - {name: pve, kind: node, reach: local}
  - {name: media, kind: lxc, vmid: 101, parent: pve, labels: {team: media}}
  - {name: jelly, kind: docker_container, parent: media}
  - {name: db-1, kind: host, reach: local, labels: {team: payments}}
`))
	if err != nil {
		t.Fatal(err)
	}
	p := scopeParts{builtins: []tools.Tool{builtin.NewQueryTool(inv, nil)}, inv: inv}
	r, err := p.registry(&policy.Scope{Hosts: []string{"label:team=media"}})
	if err != nil {
		t.Fatal(err)
	}
	list := func(args string) string {
		t.Helper()
		prop, b := r.Propose("query", json.RawMessage(args))
		if b != nil {
			t.Fatal(b)
		}
		tl, _ := r.Get("query")
		return tl.Execute(context.Background(), prop).Envelope.JSON()
	}
	got := list(`{"action":"list"}`)
	for _, want := range []string{`"media"`, `"jelly"`, `"pve"`} {
		if !strings.Contains(got, want) {
			t.Errorf("list lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "db-1") {
		t.Errorf("list shows another team's host: %s", got)
	}
	if got := list(`{"action":"search","query":"db"}`); strings.Contains(got, "db-1") {
		t.Errorf("search finds another team's host: %s", got)
	}
}
