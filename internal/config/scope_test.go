package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
)

const scopeInventory = `resources:
  - name: web-1
    kind: host
    reach: local
    groups: [web]
    labels: {team: shop}
  - name: db-1
    kind: host
    reach: local
    groups: [db]
    labels: {team: payments}
`

func scopeConfig(t *testing.T, channels string) string {
	t.Helper()
	dir := t.TempDir()
	inv := filepath.Join(dir, "inventory.yaml")
	if err := os.WriteFile(inv, []byte(scopeInventory), 0o600); err != nil {
		t.Fatal(err)
	}
	return write(t, `inventory:
  file: `+inv+`
observability:
  prometheus:
    - {name: main, url: "http://127.0.0.1:9090"}
    - {name: longterm, url: "http://127.0.0.1:9091"}
  alertmanager: {url: "http://127.0.0.1:9093"}
kubernetes:
  clusters:
    - {name: prod, kubeconfig: /dev/null, namespaces: [shop, payments, team-a]}
    - {name: dev, kubeconfig: /dev/null}
changes:
  git_repos:
    - {name: infra, path: /tmp}
channels:
`+channels)
}

func TestChannelScopes(t *testing.T) {
	path := scopeConfig(t, `  - match: slack:C0AAAAAAA
    control_level: read_only
    scope:
      hosts: [web-*, group:web, "label:team=shop"]
      kubernetes: [prod/shop, prod/team-*, dev]
      datasources: [main, alertmanager]
      repos: [infra]
  - match: slack:C0BBBBBBB
    control_level: read_only
    scope:
      hosts: [db-1]
      plugins: []
  - match: default
    control_level: read_only
`)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.ChannelPolicies()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := policy.LookupChannel(ps, "slack:C0AAAAAAA")
	b, _ := policy.LookupChannel(ps, "slack:C0BBBBBBB")
	d, _ := policy.LookupChannel(ps, "slack:C0CCCCCCC")
	if a.Scope == nil || b.Scope == nil || d.Scope != nil {
		t.Fatalf("scopes: %+v %+v %+v", a.Scope, b.Scope, d.Scope)
	}
	if !a.Scope.Allows(policy.ScopeHosts, "web-1", nil) || a.Scope.Allows(policy.ScopeHosts, "db-1", nil) {
		t.Error("channel A hosts")
	}
	if b.Scope.Allows(policy.ScopeKubernetes, "dev", nil) || b.Scope.Allows(policy.ScopeDatasources, "main", nil) {
		t.Error("channel B names no cluster and no datasource: it has none")
	}
	if !d.Scope.Allows(policy.ScopeRepos, "anything", nil) {
		t.Error("a channel without a scope reaches everything")
	}
	if a.Scope.Channel != "slack:C0AAAAAAA" {
		t.Errorf("scope channel = %q", a.Scope.Channel)
	}
}

func TestChannelScopeErrors(t *testing.T) {
	path := scopeConfig(t, `  - match: slack:C0AAAAAAA
    control_level: read_only
    scope:
      hosts:
        - web-2
        - group:cache
        - "label:team"
      kubernetes: [staging, prod/search, dev/team-*]
      datasources: [grafana]
      repos: [apps]
      plugins: [pagerduty]
`)
	_, err := Load(path)
	if err == nil {
		t.Fatal("want errors")
	}
	msg := err.Error()
	for _, want := range []string{
		path + `:20: channels[0].scope.hosts[0] = "web-2"`, `"web-2" is not in the inventory; did you mean web-1`,
		path + `:21: channels[0].scope.hosts[1] = "group:cache"`, `no inventory resource is in group "cache" (groups: db, web)`,
		`channels[0].scope.hosts[2] = "label:team"`, `write label:KEY=VALUE`,
		path + `:23: channels[0].scope.kubernetes[0] = "staging"`, `no cluster named "staging" in kubernetes.clusters (clusters: prod, dev)`,
		`channels[0].scope.kubernetes[1] = "prod/search"`, `namespace "search" is not one cluster prod allows`,
		`channels[0].scope.kubernetes[2] = "dev/team-*"`, `a namespace pattern needs the namespaces of cluster dev`,
		`channels[0].scope.datasources[0] = "grafana"`, `(observability.prometheus names, and alertmanager when observability.alertmanager.url is set: main, longterm, alertmanager)`,
		`channels[0].scope.repos[0] = "apps"`, `no repository named "apps" in changes.git_repos (infra)`,
		`channels[0].scope.plugins[0] = "pagerduty"`, `no plugin named "pagerduty" in plugins (none configured)`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors lack %q:\n%s", want, msg)
		}
	}
}
