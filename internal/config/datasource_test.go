package config

import (
	"strings"
	"testing"
)

// The datasource HTTP keys load from the file, and mistakes in them are
// named with the key.
func TestDatasourceHTTPKeys(t *testing.T) {
	cfg, err := Load(write(t, "observability:\n  prometheus:\n    - name: mimir\n      url: http://mimir:8080/prometheus\n"+
		"      headers: {X-Scope-OrgID: tenant-a}\n      proxy_url: http://proxy.internal:3128\n"+
		"  alertmanager:\n    url: http://mimir:8080/alertmanager\n    headers: {X-Scope-OrgID: tenant-a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Observability.Prometheus[0]
	hc, err := p.HTTPClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if h := hc.HTTPHeaders.Headers["X-Scope-Orgid"].Values; len(h) != 1 || h[0] != "tenant-a" {
		t.Errorf("headers = %+v", hc.HTTPHeaders)
	}
	if hc.ProxyURL.String() != "http://proxy.internal:3128" || hc.FollowRedirects {
		t.Errorf("proxy %s, follow redirects %v", hc.ProxyURL.String(), hc.FollowRedirects)
	}
	if cfg.Observability.Alertmanager.Headers["x-scope-orgid"] != "tenant-a" {
		t.Errorf("alertmanager headers = %v", cfg.Observability.Alertmanager.Headers)
	}

	for yaml, want := range map[string][]string{
		"observability:\n  alertmanager:\n    url: http://am:9093\n    tls_cert: /etc/client.pem\n":                                            {"observability.alertmanager.tls_cert", "tls_key go together"},
		"observability:\n  prometheus:\n    - {name: main, url: 'http://a:9090', proxy_url: 'proxy:3128'}\n":                                   {"observability.prometheus[0].proxy_url", "proxy URL"},
		"observability:\n  prometheus:\n    - {name: main, url: 'http://a:9090', headers: {Authorization: Bearer x}}\n":                        {"observability.prometheus[0].headers", "Authorization", "bearer_token_env"},
		"observability:\n  prometheus:\n    - {name: main, url: 'http://a:9090', tls_cert: /nonexistent/c.pem, tls_key: /nonexistent/k.pem}\n": {"observability.prometheus[0].tls_key", "/nonexistent/k.pem"},
	} {
		_, err := Load(write(t, yaml))
		if err == nil {
			t.Errorf("loaded:\n%s", yaml)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error lacks %q:\n%v", w, err)
			}
		}
	}
}

// The model's Azure and header keys load from the file and the
// environment.
func TestModelEndpointKeys(t *testing.T) {
	t.Setenv("VIGIL_LLM_API_VERSION", "2024-10-21")
	cfg, err := Load(write(t, "llm:\n  api_type: azure\n  headers: {OpenAI-Organization: org-ops}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLM.APIType != "azure" || cfg.LLM.APIVersion != "2024-10-21" || cfg.LLM.Headers["openai-organization"] != "org-ops" {
		t.Fatalf("llm = %+v", cfg.LLM.Config)
	}
	if cfg, err := Load(""); err != nil || cfg.LLM.APIType != "openai" {
		t.Fatalf("default api_type = %q, %v", cfg.LLM.APIType, err)
	}
}

// A plugin is started (command) or reached (url), never both nor neither.
func TestPluginURL(t *testing.T) {
	cfg, err := Load(write(t, "plugins:\n  - {name: remote, url: 'http://127.0.0.1:8811/mcp'}\n"))
	if err != nil || cfg.Plugins[0].URL != "http://127.0.0.1:8811/mcp" {
		t.Fatalf("%+v %v", cfg, err)
	}
	for yaml, want := range map[string]string{
		"plugins:\n  - {name: remote}\n":                                       "plugins[0].command",
		"plugins:\n  - {name: remote, command: /bin/x, url: 'http://h/mcp'}\n": "plugins[0].url",
	} {
		if _, err := Load(write(t, yaml)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", yaml, err, want)
		}
	}
}
