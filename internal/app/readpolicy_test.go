package app

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
)

// TestCommandOptions: the gate's classifier knows the inventory's
// machines (by name, alias and SSH host), the clusters' API servers (for
// kubectl, per context too) and the configuration's destinations, and
// never vigil's own store, under any name of its machine.
func TestCommandOptions(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://kube-prod.internal:6443"}
- name: lab
  cluster: {server: "https://kube-lab.internal"}
users:
- name: u
  user: {token: t}
contexts:
- name: prod
  context: {cluster: prod, user: u}
- name: lab
  context: {cluster: lab, user: u}
current-context: lab
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "vigil.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
kubernetes:
  clusters:
    - {name: prod, kubeconfig: `+kubeconfig+`, context: prod}
store:
  backend: redis
  redis: {addr: "192.168.1.10:6379"}
policy:
  read_destinations: [kafka-1:9092]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Parse([]byte(`resources:
  - name: localhost
    kind: node
    reach: local
  - name: delly
    kind: node
    aliases: [pve]
    reach:
      ssh: {host: 192.168.1.10, port: 22, user: root, key_file: /k, known_hosts: /h}
  - name: web
    kind: docker_container
    parent: delly
`))
	if err != nil {
		t.Fatal(err)
	}
	rules := policyRules(cfg, inv, slog.New(slog.DiscardHandler))
	for _, tc := range []struct {
		cmd  string
		read bool
	}{
		{"curl -s http://delly:9100/metrics", true},
		{"curl -s http://pve:9100/metrics", true},
		{"curl -s http://192.168.1.10:9100/metrics", true},
		{"curl -s http://web:9100/metrics", false}, // a container, reached through its parent
		{"ssh delly uptime", true},
		{"nc -z kafka-1 9092", true},
		{"kubectl get pods", true},
		{"kubectl --context prod get pods", true},
		{"kubectl --context lab get pods", false},
		{"redis-cli -h 192.168.1.10 -p 6379 INFO", false},
		{"redis-cli -h delly -p 6379 INFO", false},
		{"redis-cli -h pve -p 6379 INFO", false},
		{"redis-cli -h delly -p 6380 INFO", true},
	} {
		if v := rules.Command.Classify(tc.cmd, command.DialectBash); v.ReadOnly() != tc.read {
			t.Errorf("%q: read=%v %v, want %v", tc.cmd, v.ReadOnly(), v.Reasons, tc.read)
		}
	}
	v := rules.Command.Classify("kubectl get pods", command.DialectBash)
	if len(v.Destinations) != 1 || v.Destinations[0] != (command.Destination{Host: "kube-prod.internal", Port: 6443}) {
		t.Errorf("kubectl's destinations = %v, want the prod API server", v.Destinations)
	}
}
