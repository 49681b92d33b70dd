package app

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
)

// TestDestinationMap: the table built from the configuration places each
// destination the classifier knows: datasources and the Alertmanager by
// their URLs' host:port, clusters by their API servers, inventory
// machines by name, alias and SSH host (with their labels and groups),
// and the other configured destinations as open; nothing else is known.
func TestDestinationMap(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://kube-prod.internal:6443"}
users:
- name: u
  user: {token: t}
contexts:
- name: prod-ctx
  context: {cluster: prod, user: u}
current-context: prod-ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "vigil.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
kubernetes:
  clusters:
    - {name: prod, kubeconfig: `+kubeconfig+`, context: prod-ctx}
observability:
  prometheus:
    - {name: main, url: "http://delly:9090"}
    - {name: longterm, url: "https://thanos.internal"}
  alertmanager: {url: "http://am.internal:9093"}
policy:
  read_destinations: [kafka-1:9092, "ceph=mon-1:6789", "kubernetes=kube-other.internal:6443"]
  http_read_urls: ["http://status.internal:8080/health"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Parse([]byte(`resources:
  - name: delly
    kind: node
    aliases: [pve]
    groups: [hypervisors]
    labels: {team: infra}
    reach:
      ssh: {host: 192.168.1.10, port: 22, user: root, key_file: /k, known_hosts: /h}
  - name: web
    kind: docker_container
    parent: delly
`))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	m := destinationMap(cfg, inv, policyRules(cfg, inv, log).Command, log)
	for _, c := range []struct {
		dest  string
		want  string // kind:name, "" none
		known bool
	}{
		{"delly:9090", "datasources:main", true},
		{"thanos.internal:443", "datasources:longterm", true},
		{"am.internal:9093", "datasources:alertmanager", true},
		{"kube-prod.internal:6443", "kubernetes:prod", true},
		{"delly:22", "hosts:delly", true},
		{"pve:9100", "hosts:delly", true},
		{"192.168.1.10:9100", "hosts:delly", true},
		{"web:80", "", false}, // a container is reached through its machine, never by name
		{"kafka-1:9092", "", true},
		{"mon-1:6789", "", true},
		{"status.internal:8080", "", true},
		{"kube-other.internal:6443", "", false}, // a kubernetes= server vigil cannot name a cluster for
		{"elsewhere.internal:443", "", false},
	} {
		d, err := command.ParseDestination(c.dest)
		if err != nil {
			t.Fatal(err)
		}
		rs, known := m.Place(d)
		got := ""
		if len(rs) > 0 {
			got = string(rs[0].Kind) + ":" + rs[0].Name
		}
		if got != c.want || known != c.known {
			t.Errorf("Place(%s) = %v, %v; want %q, %v", c.dest, rs, known, c.want, c.known)
		}
	}
	// The host reach carries what a scope matches on.
	sc := &policy.Scope{Hosts: []string{"label:team=infra"}}
	if b := sc.CheckDestinations(m, []command.Destination{{Host: "pve", Port: 22}}); b != nil {
		t.Errorf("a label scope refused its machine by alias: %v", b)
	}
	sc = &policy.Scope{Hosts: []string{"group:web*"}}
	if b := sc.CheckDestinations(m, []command.Destination{{Host: "pve", Port: 22}}); b == nil {
		t.Error("a group scope allowed another group's machine")
	}
	// kubectl --context prod-ctx names cluster prod.
	sc = &policy.Scope{Kubernetes: []string{"prod"}, Hosts: []string{"*"}}
	if b := sc.CheckCommandWords(m, "kubectl --context prod-ctx delete pod x"); b != nil {
		t.Errorf("the cluster of a context in scope: %v", b)
	}
}
