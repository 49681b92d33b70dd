package config

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestObservabilityLoads(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_PROM_TOKEN", "prom-secret-token")
	t.Setenv("TEST_AM_PASSWORD", "am-secret-password")
	c, err := Load(write(t, fmt.Sprintf(`
observability:
  prometheus:
    - name: main
      url: http://prometheus:9090
      bearer_token_env: TEST_PROM_TOKEN
    - name: eu-west
      url: https://prom.eu.example.org
      timeout: 5s
  alertmanager:
    url: http://alertmanager:9093
    basic_auth:
      username: vigil
      password_env: TEST_AM_PASSWORD
    max_silence: 4h
kubernetes:
  discovery_refresh: 1m
  clusters:
    - name: prod
      kubeconfig: %s
      context: prod-admin
      namespaces: [shop, payments]
    - name: local
      in_cluster: true
changes:
  git_repos:
    - name: infra
      path: %s
`, kc, dir)))
	if err != nil {
		t.Fatal(err)
	}
	o := c.Observability
	if len(o.Prometheus) != 2 || o.Prometheus[0].Name != "main" || o.Prometheus[1].Timeout != 5*time.Second {
		t.Fatalf("prometheus = %+v", o.Prometheus)
	}
	if got := o.Prometheus[0].BearerToken(); got.Reveal() != "prom-secret-token" || got.String() != "***" {
		t.Fatalf("bearer token = %q / %s", got.Reveal(), got)
	}
	if got := o.Alertmanager.BasicAuth.Password(); got.Reveal() != "am-secret-password" {
		t.Fatalf("basic auth password = %q", got.Reveal())
	}
	if o.Alertmanager.MaxSilence != 4*time.Hour || o.Alertmanager.Timeout != 30*time.Second {
		t.Fatalf("alertmanager = %+v", o.Alertmanager)
	}
	k := c.Kubernetes
	if len(k.Clusters) != 2 || k.Clusters[0].Context != "prod-admin" || len(k.Clusters[0].Namespaces) != 2 || !k.Clusters[1].InCluster ||
		k.DiscoveryRefresh != time.Minute {
		t.Fatalf("kubernetes = %+v", k)
	}
	if len(c.Changes.GitRepos) != 1 || c.Changes.GitRepos[0].Path != dir {
		t.Fatalf("changes = %+v", c.Changes)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "token", o.Prometheus[0].BearerToken(), "password", o.Alertmanager.BasicAuth.Password())
	if strings.Contains(logged.String(), "secret") {
		t.Fatalf("a secret was logged: %s", logged.String())
	}
}

func TestObservabilityDefaults(t *testing.T) {
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Observability.Alertmanager.MaxSilence != DefaultMaxSilence || c.Kubernetes.DiscoveryRefresh != DefaultDiscoveryRefresh ||
		len(c.Observability.Prometheus) != 0 || c.Observability.Alertmanager.URL != "" {
		t.Fatalf("defaults: %+v %+v", c.Observability, c.Kubernetes)
	}
}

// TestObservabilityErrors checks that each error names the key, the bad
// value, where it came from and an example of a good one.
func TestObservabilityErrors(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		env  map[string]string
		want []string
	}{
		{"prometheus url", "observability:\n  prometheus:\n    - name: main\n      url: prometheus:9090\n",
			nil, []string{"observability.prometheus[0].url", `"prometheus:9090"`, "vigil.yaml", "for example observability.prometheus[0].url: http://"}},
		{"duplicate datasource", "observability:\n  prometheus:\n    - {name: main, url: 'http://a:9090'}\n    - {name: main, url: 'http://b:9090'}\n",
			nil, []string{"observability.prometheus[1].name", `"main"`, "listed twice"}},
		{"token env unset", "observability:\n  prometheus:\n    - {name: main, url: 'http://a:9090', bearer_token_env: VIGIL_TEST_UNSET_TOKEN}\n",
			nil, []string{"observability.prometheus[0].bearer_token_env", "VIGIL_TEST_UNSET_TOKEN", "unset or empty", "export it"}},
		{"credentials in url", "observability:\n  alertmanager:\n    url: http://vigil:hunter2@am:9093\n",
			nil, []string{"observability.alertmanager.url", "basic_auth.username", "xxxxx"}},
		{"silence from env", "", map[string]string{"VIGIL_OBSERVABILITY_ALERTMANAGER_MAX_SILENCE": "0s"},
			[]string{"observability.alertmanager.max_silence", "0s", "environment variable VIGIL_OBSERVABILITY_ALERTMANAGER_MAX_SILENCE", "VIGIL_OBSERVABILITY_ALERTMANAGER_MAX_SILENCE=24h"}},
		{"silence without unit", "observability:\n  alertmanager:\n    max_silence: 3600\n",
			nil, []string{"observability.alertmanager.max_silence"}},
		{"kubeconfig missing", "kubernetes:\n  clusters:\n    - {name: prod, kubeconfig: /nonexistent/kubeconfig}\n",
			nil, []string{"kubernetes.clusters[0].kubeconfig", "/nonexistent/kubeconfig", "vigil.yaml", "for example kubernetes.clusters[0].kubeconfig: /etc/vigil/kubeconfig"}},
		{"in cluster and kubeconfig", "kubernetes:\n  clusters:\n    - {name: prod, in_cluster: true, kubeconfig: /x}\n",
			nil, []string{"kubernetes.clusters[0].in_cluster", "either in_cluster"}},
		{"bad namespace", "kubernetes:\n  clusters:\n    - {name: prod, in_cluster: true, namespaces: [Shop_1]}\n",
			nil, []string{"kubernetes.clusters[0].namespaces[0]", `"Shop_1"`, "namespaces[0]: shop"}},
		{"git path relative", "changes:\n  git_repos:\n    - {name: infra, path: infra-config}\n",
			nil, []string{"changes.git_repos[0].path", `"infra-config"`, "path: /srv/infra-config"}},
		{"secret in file", "observability:\n  prometheus:\n    - {name: main, url: 'http://a:9090', bearer_token: abc}\n",
			nil, []string{"unknown key", "bearer_token"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			path := ""
			if tc.yaml != "" {
				path = write(t, tc.yaml)
			}
			_, err := Load(path)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows a password: %v", err)
			}
		})
	}
}
