package config

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"

	promconfig "github.com/prometheus/common/config"
)

// DatasourceHTTP is the rest of how vigil reaches a Prometheus or an
// Alertmanager, the settings operators know from Prometheus's own
// http_config: a tenant header, a client certificate, a proxy.
type DatasourceHTTP struct {
	// Headers are sent with every request, e.g. X-Scope-OrgID: tenant-a
	// for a Mimir, Cortex or Thanos tenant. They are written in the file,
	// so they are not for secrets (use bearer_token_env or basic_auth).
	Headers map[string]string `mapstructure:"headers"`
	// TLSCert and TLSKey are a client certificate and its key (PEM files)
	// for a server that asks for one (mutual TLS).
	TLSCert string `mapstructure:"tls_cert"`
	TLSKey  string `mapstructure:"tls_key"`
	// ProxyURL sends the requests through an HTTP proxy.
	ProxyURL string `mapstructure:"proxy_url"`
}

func init() {
	maps.Copy(examples, map[string]string{
		"plugins[].url":                        "http://127.0.0.1:8811/mcp",
		"llm.api_type":                         "azure",
		"llm.api_version":                      "2024-10-21",
		"llm.headers":                          "{OpenAI-Organization: org-ops}",
		"observability.prometheus[].headers":   "{X-Scope-OrgID: tenant-a}",
		"observability.prometheus[].tls_cert":  "/etc/vigil/client.pem",
		"observability.prometheus[].tls_key":   "/etc/vigil/client-key.pem",
		"observability.prometheus[].proxy_url": "http://proxy.internal:3128",
		"observability.alertmanager.headers":   "{X-Scope-OrgID: tenant-a}",
		"observability.alertmanager.tls_cert":  "/etc/vigil/client.pem",
		"observability.alertmanager.tls_key":   "/etc/vigil/client-key.pem",
		"observability.alertmanager.proxy_url": "http://proxy.internal:3128",
	})
	maps.Copy(defaults, map[string]any{
		"llm.api_type":                         "openai",
		"llm.api_version":                      "",
		"observability.alertmanager.tls_cert":  "",
		"observability.alertmanager.tls_key":   "",
		"observability.alertmanager.proxy_url": "",
	})
}

// HTTPClientConfig is the datasource's HTTP settings as prometheus/common's
// HTTPClientConfig, which builds the client (authentication, TLS, proxy,
// headers) the way Prometheus builds its own. Secrets are read from the
// environment here. Redirects are not followed: the authentication is
// added to every request, so a redirect to another host would carry it
// there.
func (a HTTPAuth) HTTPClientConfig() (promconfig.HTTPClientConfig, error) {
	c := promconfig.HTTPClientConfig{
		FollowRedirects: false,
		EnableHTTP2:     true,
		TLSConfig: promconfig.TLSConfig{
			CAFile: a.TLSCA, CertFile: a.TLSCert, KeyFile: a.TLSKey,
			MinVersion: promconfig.TLSVersion(0x0303), // TLS 1.2
		},
	}
	if tok := a.BearerToken(); tok != "" {
		c.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: promconfig.Secret(tok.Reveal())}
	}
	if a.BasicAuth.Username != "" {
		c.BasicAuth = &promconfig.BasicAuth{Username: a.BasicAuth.Username, Password: promconfig.Secret(a.BasicAuth.Password().Reveal())}
	}
	if a.ProxyURL != "" {
		u, err := url.Parse(a.ProxyURL)
		if err != nil {
			return c, fmt.Errorf("proxy_url: %w", err)
		}
		c.ProxyURL = promconfig.URL{URL: u}
	}
	if len(a.Headers) > 0 {
		h := &promconfig.Headers{Headers: map[string]promconfig.Header{}}
		for k, v := range a.Headers {
			h.Headers[http.CanonicalHeaderKey(k)] = promconfig.Header{Values: []string{v}}
		}
		c.HTTPHeaders = h
	}
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

// checkDatasourceHTTP checks the keys of DatasourceHTTP under key.
func (c *Config) checkDatasourceHTTP(bad func(key, format string, args ...any), key string, a HTTPAuth) {
	if (a.TLSCert == "") != (a.TLSKey == "") {
		bad(key+".tls_cert", "and tls_key go together: set both (the client certificate and its key) or neither")
	}
	for k, f := range map[string]string{".tls_cert": a.TLSCert, ".tls_key": a.TLSKey} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			bad(key+k, "%v; point it at a PEM file", err)
		}
	}
	if a.ProxyURL != "" {
		u, err := url.Parse(a.ProxyURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") || u.Host == "" {
			bad(key+".proxy_url", "must be an http://, https:// or socks5:// proxy URL")
		}
	}
	if len(a.Headers) > 0 {
		h := promconfig.Headers{Headers: map[string]promconfig.Header{}}
		for k, v := range a.Headers {
			h.Headers[http.CanonicalHeaderKey(k)] = promconfig.Header{Values: []string{v}}
		}
		if err := h.Validate(); err != nil {
			bad(key+".headers", "%v; authentication goes in bearer_token_env or basic_auth", err)
		}
	}
}
