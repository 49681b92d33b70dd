package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// Observability configures the datasources of the metrics and alerts
// tools.
type Observability struct {
	// Prometheus lists Prometheus-compatible HTTP APIs by name; the first
	// is the default the metrics tool queries.
	Prometheus   []Prometheus `mapstructure:"prometheus"`
	Alertmanager Alertmanager `mapstructure:"alertmanager"`
}

// HTTPAuth is how vigil authenticates to a datasource. Secrets are never
// written in the file: it names the environment variables that hold them.
type HTTPAuth struct {
	// BearerTokenEnv names the environment variable holding a bearer token.
	BearerTokenEnv string    `mapstructure:"bearer_token_env"`
	BasicAuth      BasicAuth `mapstructure:"basic_auth"`
	// TLSCA is a PEM file of the CA certificates to trust for https URLs
	// (instead of the system's, as Prometheus reads tls_config.ca_file).
	TLSCA string `mapstructure:"tls_ca"`
	// The keys below are in datasource.go.
	DatasourceHTTP `mapstructure:",squash"`
}

// BasicAuth is HTTP basic authentication; the password comes from the
// environment variable PasswordEnv names.
type BasicAuth struct {
	Username    string `mapstructure:"username"`
	PasswordEnv string `mapstructure:"password_env"`
}

// BearerToken reads the bearer token from the environment.
func (a HTTPAuth) BearerToken() Secret { return envSecret(a.BearerTokenEnv) }

// Password reads the basic-auth password from the environment.
func (b BasicAuth) Password() Secret { return envSecret(b.PasswordEnv) }

func envSecret(name string) Secret {
	if name == "" {
		return ""
	}
	return Secret(os.Getenv(name))
}

// Prometheus is one named Prometheus datasource.
type Prometheus struct {
	Name     string `mapstructure:"name"`
	URL      string `mapstructure:"url"`
	HTTPAuth `mapstructure:",squash"`
	// Timeout bounds each API call (default 30s).
	Timeout time.Duration `mapstructure:"timeout"`
}

// Alertmanager is the Alertmanager (API v2) the alerts tool reads and
// silences through. An empty URL leaves the tool unconfigured.
type Alertmanager struct {
	URL      string `mapstructure:"url"`
	HTTPAuth `mapstructure:",squash"`
	// Timeout bounds each API call.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxSilence is the longest silence the alerts tool may create.
	MaxSilence time.Duration `mapstructure:"max_silence"`
}

// Kubernetes configures the clusters the kube tool reaches.
type Kubernetes struct {
	Clusters []KubeCluster `mapstructure:"clusters"`
	// DiscoveryRefresh is how often the deployments, pods and nodes people
	// can @mention are listed again.
	DiscoveryRefresh time.Duration `mapstructure:"discovery_refresh"`
	// Timeout bounds each API call.
	Timeout time.Duration `mapstructure:"timeout"`
}

// KubeCluster is one cluster: through a kubeconfig file and context, or
// the service account vigil runs under (in_cluster).
type KubeCluster struct {
	Name       string `mapstructure:"name"`
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
	InCluster  bool   `mapstructure:"in_cluster"`
	// Namespaces is the allowlist; empty allows every namespace.
	Namespaces []string `mapstructure:"namespaces"`
}

// Changes configures the changes tool.
type Changes struct {
	// GitRepos are configuration repositories on vigil's machine whose
	// commits belong on every timeline.
	GitRepos []GitRepo `mapstructure:"git_repos"`
}

// GitRepo is one repository the changes tool reads the log of.
type GitRepo struct {
	Name string `mapstructure:"name"`
	Path string `mapstructure:"path"`
}

// Defaults of the observability settings.
const (
	DefaultDatasourceTimeout = 30 * time.Second
	DefaultMaxSilence        = 24 * time.Hour
	DefaultDiscoveryRefresh  = 2 * time.Minute
)

var (
	datasourceName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	envName        = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validateObservability checks observability.*, kubernetes.* and
// changes.*; bad reports one problem with the key, the bad value, where it
// came from and an example.
func (c *Config) validateObservability(bad func(key, format string, args ...any)) {
	seen := map[string]bool{}
	for i, p := range c.Observability.Prometheus {
		key := fmt.Sprintf("observability.prometheus[%d]", i)
		switch {
		case !datasourceName.MatchString(p.Name):
			bad(key+".name", "must be a short lower-case name like main or eu-west (letters, digits, - and _)")
		case seen[p.Name]:
			bad(key+".name", "is listed twice; give each datasource its own name")
		}
		seen[p.Name] = true
		c.checkURL(bad, key+".url", p.URL)
		c.checkAuth(bad, key, p.HTTPAuth)
		if p.Timeout < 0 {
			bad(key+".timeout", "must not be negative (0 means 30s)")
		}
	}
	am := c.Observability.Alertmanager
	if am.URL != "" {
		c.checkURL(bad, "observability.alertmanager.url", am.URL)
		c.checkAuth(bad, "observability.alertmanager", am.HTTPAuth)
	}
	if am.MaxSilence > 30*24*time.Hour {
		bad("observability.alertmanager.max_silence", "is longer than 720h; a silence that long hides an outage")
	}

	seen = map[string]bool{}
	for i, k := range c.Kubernetes.Clusters {
		key := fmt.Sprintf("kubernetes.clusters[%d]", i)
		switch {
		case !datasourceName.MatchString(k.Name):
			bad(key+".name", "must be a short lower-case name like prod or staging (letters, digits, - and _)")
		case seen[k.Name]:
			bad(key+".name", "is listed twice; give each cluster its own name")
		}
		seen[k.Name] = true
		switch {
		case k.InCluster && (k.Kubeconfig != "" || k.Context != ""):
			bad(key+".in_cluster", "cannot be combined with kubeconfig or context; use either in_cluster: true or kubeconfig with context")
		case !k.InCluster && k.Kubeconfig == "":
			bad(key+".kubeconfig", "is empty; set the kubeconfig path, or in_cluster: true")
		case !k.InCluster:
			if _, err := os.Stat(k.Kubeconfig); err != nil {
				bad(key+".kubeconfig", "%v; point it at a kubeconfig file", err)
			}
		}
		for j, ns := range k.Namespaces {
			if !dnsLabel.MatchString(ns) {
				bad(fmt.Sprintf("%s.namespaces[%d]", key, j), "is not a namespace name")
			}
		}
	}

	seen = map[string]bool{}
	for i, g := range c.Changes.GitRepos {
		key := fmt.Sprintf("changes.git_repos[%d]", i)
		switch {
		case !datasourceName.MatchString(g.Name):
			bad(key+".name", "must be a short lower-case name like infra or dns-zones")
		case seen[g.Name]:
			bad(key+".name", "is listed twice")
		}
		seen[g.Name] = true
		if !strings.HasPrefix(g.Path, "/") || strings.ContainsAny(g.Path, "\x00\n") {
			bad(key+".path", "must be an absolute path to a git work tree")
			continue
		}
		if fi, err := os.Stat(g.Path); err != nil || !fi.IsDir() {
			bad(key+".path", "is not a directory; clone the repository there or fix the path")
		}
	}
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func (c *Config) checkURL(bad func(key, format string, args ...any), key, raw string) {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key, "must be an http:// or https:// URL")
		return
	}
	if u.User != nil {
		bad(key, "carries credentials in the URL; put the user in basic_auth.username and the password in the environment variable named by basic_auth.password_env")
	}
}

func (c *Config) checkAuth(bad func(key, format string, args ...any), key string, a HTTPAuth) {
	checkEnv := func(k, name string) {
		switch {
		case !envName.MatchString(name):
			bad(k, "must name an environment variable")
		case os.Getenv(name) == "":
			bad(k, "names %s, which is unset or empty in vigil's environment; export it (%s=...)", name, name)
		}
	}
	if a.BearerTokenEnv != "" {
		checkEnv(key+".bearer_token_env", a.BearerTokenEnv)
	}
	if a.BasicAuth.Username != "" || a.BasicAuth.PasswordEnv != "" {
		if a.BearerTokenEnv != "" {
			bad(key+".basic_auth", "is set together with bearer_token_env; use one of them")
		}
		if a.BasicAuth.Username == "" {
			bad(key+".basic_auth.username", "is empty; name the user")
		}
		if a.BasicAuth.PasswordEnv == "" {
			bad(key+".basic_auth.password_env", "is empty; name the environment variable holding the password")
		} else {
			checkEnv(key+".basic_auth.password_env", a.BasicAuth.PasswordEnv)
		}
	}
	if a.TLSCA != "" {
		if _, err := os.Stat(a.TLSCA); err != nil {
			bad(key+".tls_ca", "%v; point it at a PEM file of CA certificates", err)
		}
	}
	c.checkDatasourceHTTP(bad, key, a)
}
