package config

import (
	"fmt"
	"net/url"
	"os"
	"reflect"
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
	// TLSCA is a PEM file of CA certificates to trust for https URLs, in
	// addition to the system's.
	TLSCA string `mapstructure:"tls_ca"`
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

// observabilityDefaults are the embedded defaults of the scalar keys, so
// VIGIL_* environment variables can override them.
var observabilityDefaults = map[string]any{
	"observability.alertmanager.url":                     "",
	"observability.alertmanager.bearer_token_env":        "",
	"observability.alertmanager.basic_auth.username":     "",
	"observability.alertmanager.basic_auth.password_env": "",
	"observability.alertmanager.tls_ca":                  "",
	"observability.alertmanager.timeout":                 "30s",
	"observability.alertmanager.max_silence":             "24h",
	"kubernetes.discovery_refresh":                       "2m",
	"kubernetes.timeout":                                 "30s",
}

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
			bad(key+".name", "%q (%s) must be a short lower-case name like main or eu-west (letters, digits, - and _)", p.Name, c.origin(key))
		case seen[p.Name]:
			bad(key+".name", "%q (%s) is listed twice; give each datasource its own name", p.Name, c.origin(key))
		}
		seen[p.Name] = true
		c.checkURL(bad, key+".url", p.URL, "http://prometheus.monitoring:9090")
		c.checkAuth(bad, key, p.HTTPAuth)
		if p.Timeout < 0 {
			bad(key+".timeout", "%s (%s) must not be negative; e.g. 30s (0 means 30s)", p.Timeout, c.origin(key))
		}
	}
	am := c.Observability.Alertmanager
	if am.URL != "" {
		c.checkURL(bad, "observability.alertmanager.url", am.URL, "http://alertmanager.monitoring:9093")
		c.checkAuth(bad, "observability.alertmanager", am.HTTPAuth)
	}
	if am.Timeout <= 0 {
		bad("observability.alertmanager.timeout", "%s (%s) must be a positive duration with a unit, e.g. 30s", am.Timeout, c.origin("observability.alertmanager.timeout"))
	}
	if am.MaxSilence <= 0 || am.MaxSilence > 30*24*time.Hour {
		bad("observability.alertmanager.max_silence", "%s (%s) must be a duration with a unit between 1m and 720h, e.g. 24h",
			am.MaxSilence, c.origin("observability.alertmanager.max_silence"))
	}

	seen = map[string]bool{}
	for i, k := range c.Kubernetes.Clusters {
		key := fmt.Sprintf("kubernetes.clusters[%d]", i)
		switch {
		case !datasourceName.MatchString(k.Name):
			bad(key+".name", "%q (%s) must be a short lower-case name like prod or staging (letters, digits, - and _)", k.Name, c.origin(key))
		case seen[k.Name]:
			bad(key+".name", "%q (%s) is listed twice; give each cluster its own name", k.Name, c.origin(key))
		}
		seen[k.Name] = true
		switch {
		case k.InCluster && (k.Kubeconfig != "" || k.Context != ""):
			bad(key+".in_cluster", "true (%s) cannot be combined with kubeconfig or context; use either in_cluster: true or kubeconfig: ~/.kube/config with context: prod", c.origin(key))
		case !k.InCluster && k.Kubeconfig == "":
			bad(key+".kubeconfig", "is empty (%s); set the kubeconfig path, e.g. kubeconfig: /etc/vigil/kubeconfig, or in_cluster: true", c.origin(key))
		case !k.InCluster:
			if _, err := os.Stat(k.Kubeconfig); err != nil {
				bad(key+".kubeconfig", "%q (%s): %v; point it at a kubeconfig file, e.g. /etc/vigil/kubeconfig", k.Kubeconfig, c.origin(key), err)
			}
		}
		for j, ns := range k.Namespaces {
			if !dnsLabel.MatchString(ns) {
				bad(fmt.Sprintf("%s.namespaces[%d]", key, j), "%q (%s) is not a namespace name; e.g. shop", ns, c.origin(key))
			}
		}
	}
	if c.Kubernetes.DiscoveryRefresh < 10*time.Second {
		bad("kubernetes.discovery_refresh", "%s (%s) must be a duration with a unit of at least 10s, e.g. 2m",
			c.Kubernetes.DiscoveryRefresh, c.origin("kubernetes.discovery_refresh"))
	}
	if c.Kubernetes.Timeout <= 0 {
		bad("kubernetes.timeout", "%s (%s) must be a positive duration with a unit, e.g. 30s", c.Kubernetes.Timeout, c.origin("kubernetes.timeout"))
	}

	seen = map[string]bool{}
	for i, g := range c.Changes.GitRepos {
		key := fmt.Sprintf("changes.git_repos[%d]", i)
		switch {
		case !datasourceName.MatchString(g.Name):
			bad(key+".name", "%q (%s) must be a short lower-case name like infra or dns-zones", g.Name, c.origin(key))
		case seen[g.Name]:
			bad(key+".name", "%q (%s) is listed twice", g.Name, c.origin(key))
		}
		seen[g.Name] = true
		if !strings.HasPrefix(g.Path, "/") || strings.ContainsAny(g.Path, "\x00\n") {
			bad(key+".path", "%q (%s) must be an absolute path to a git work tree, e.g. /srv/infra-config", g.Path, c.origin(key))
			continue
		}
		if fi, err := os.Stat(g.Path); err != nil || !fi.IsDir() {
			bad(key+".path", "%q (%s) is not a directory; clone the repository there or fix the path, e.g. /srv/infra-config", g.Path, c.origin(key))
		}
	}
}

// durationUnitHook refuses a bare number where a duration is expected:
// "max_silence: 3600" would otherwise be read as 3.6 microseconds.
func durationUnitHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() {
		return data, nil
	}
	switch from.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if fmt.Sprint(data) == "0" {
			return time.Duration(0), nil
		}
		return nil, fmt.Errorf("%v is a number without a unit; write a duration such as %vs or 30m", data, data)
	}
	return data, nil
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

func (c *Config) checkURL(bad func(key, format string, args ...any), key, raw, example string) {
	u, err := url.Parse(raw)
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(key, "%q (%s) must be an http:// or https:// URL, e.g. %s", raw, c.origin(key), example)
		return
	}
	if u.User != nil {
		bad(key, "%q (%s) carries credentials in the URL; put the user in basic_auth.username and the password in the environment variable named by basic_auth.password_env",
			u.Redacted(), c.origin(key))
	}
}

func (c *Config) checkAuth(bad func(key, format string, args ...any), key string, a HTTPAuth) {
	checkEnv := func(k, name string) {
		switch {
		case !envName.MatchString(name):
			bad(k, "%q (%s) must name an environment variable, e.g. PROMETHEUS_TOKEN", name, c.origin(k))
		case os.Getenv(name) == "":
			bad(k, "names %s (%s), which is unset or empty in vigil's environment; export it, e.g. %s=...", name, c.origin(k), name)
		}
	}
	if a.BearerTokenEnv != "" {
		checkEnv(key+".bearer_token_env", a.BearerTokenEnv)
	}
	if a.BasicAuth.Username != "" || a.BasicAuth.PasswordEnv != "" {
		if a.BearerTokenEnv != "" {
			bad(key+".basic_auth", "is set (%s) together with bearer_token_env; use one of them", c.origin(key))
		}
		if a.BasicAuth.Username == "" {
			bad(key+".basic_auth.username", "is empty (%s); e.g. username: vigil", c.origin(key))
		}
		if a.BasicAuth.PasswordEnv == "" {
			bad(key+".basic_auth.password_env", "is empty (%s); name the environment variable holding the password, e.g. password_env: PROMETHEUS_PASSWORD", c.origin(key))
		} else {
			checkEnv(key+".basic_auth.password_env", a.BasicAuth.PasswordEnv)
		}
	}
	if a.TLSCA != "" {
		if _, err := os.Stat(a.TLSCA); err != nil {
			bad(key+".tls_ca", "%q (%s): %v; point it at a PEM file of CA certificates, e.g. /etc/vigil/ca.pem", a.TLSCA, c.origin(key), err)
		}
	}
}

// origin says where key's value came from, for error messages: the
// environment variable that set it, the file, or the embedded defaults.
// Keys inside lists can only come from the file.
func (c *Config) origin(key string) string {
	if o, ok := c.origins[key]; ok {
		return o
	}
	if strings.Contains(key, "[") && c.path != "" {
		return "from " + c.path
	}
	if c.path != "" {
		return "from " + c.path + " or the defaults"
	}
	return "from the defaults"
}

// originKeys are the scalar keys whose origin Load records.
func originKeys() []string {
	keys := make([]string, 0, len(observabilityDefaults))
	for k := range observabilityDefaults {
		keys = append(keys, k)
	}
	return keys
}

// envKey is the VIGIL_* variable that overrides key.
func envKey(key string) string {
	return "VIGIL_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}
