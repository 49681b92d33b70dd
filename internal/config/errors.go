package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/vigilops/vigil/textmatch"
)

// Error is one configuration problem, worded so that it can be fixed
// without reading the code: which key, the value it has, where that value
// came from, what is wrong with it, and an example of a good one.
type Error struct {
	// Key is the key as in the file: "policy.approval_ttl",
	// "plugins[0].timeout".
	Key string
	// Value is the value as written, quoted if it is a string; "***" for
	// secrets; "(not set)" when nothing set it.
	Value string
	// Source is where Value came from: "file PATH", "environment variable
	// VIGIL_…" or "built-in default". Empty for a Config built in code.
	Source string
	// Problem says what is wrong.
	Problem string
	// Example is a good value for the key ("10m"); empty for an unknown
	// key, whose Problem names the closest known one instead.
	Example string
	// Unknown marks a key vigil does not have.
	Unknown bool
	// Env is the environment variable that sets a secret key, which is
	// best kept out of the file: the example names both places.
	Env string
	// File and Line place a problem that has no key: the file is not
	// valid YAML there.
	File string
	Line int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	if e.Key == "" && e.File != "" {
		if e.Line > 0 {
			return fmt.Sprintf("config: %s:%d: %s", e.File, e.Line, e.Problem)
		}
		return "config: " + e.File + ": " + e.Problem
	}
	b.WriteString(scopeKeyLine(e))
	if e.Unknown {
		b.WriteString("unknown key ")
	}
	b.WriteString(e.Key)
	if e.Value != "" {
		b.WriteString(" = " + e.Value)
	}
	if e.Source != "" {
		b.WriteString(" (from " + e.Source + ")")
	}
	b.WriteString(": " + e.Problem)
	if e.Example != "" && e.Env != "" && !strings.HasPrefix(e.Source, "environment variable ") {
		// A secret: the environment is the better place, the file works
		// too.
		b.WriteString("; set " + e.Env + "=" + e.Example + " in the environment, or " + e.Key + ": " + e.Example + " in the file")
	} else if e.Example != "" {
		b.WriteString("; for example ")
		if env, ok := strings.CutPrefix(e.Source, "environment variable "); ok {
			b.WriteString(env + "=" + e.Example)
		} else {
			b.WriteString(e.Key + ": " + e.Example)
		}
	}
	return b.String()
}

// origin remembers how a Config was loaded, so that errors can show the
// value a key had and where it came from.
type origin struct {
	v    *viper.Viper
	path string
}

// EnvName is the environment variable that overrides key
// (llm.api_key → VIGIL_LLM_API_KEY).
func EnvName(key string) string {
	return "VIGIL_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// source says where key's value came from.
func (o *origin) source(key string) string {
	if o == nil {
		return ""
	}
	top := key
	if i := strings.IndexByte(top, '['); i >= 0 {
		top = top[:i]
	}
	if _, ok := defaults[top]; ok {
		// viper ignores an empty variable, so only a non-empty one counts.
		if v := os.Getenv(EnvName(top)); v != "" {
			return "environment variable " + EnvName(top)
		}
	}
	if o.path != "" && o.v.InConfig(top) {
		return "file " + o.path
	}
	return "built-in default"
}

// value shows key's value as it was written.
func (o *origin) value(key string) string {
	if o == nil {
		return ""
	}
	raw, ok := rawValue(o.v, key)
	if !ok {
		return "(not set)"
	}
	return showValue(key, raw)
}

// showValue renders a raw value: strings quoted, secrets masked.
func showValue(key string, raw any) string {
	if isSecret(key) {
		if s, ok := raw.(string); ok && s == "" {
			return `""`
		}
		return "***"
	}
	switch x := raw.(type) {
	case nil:
		return "(not set)"
	case string:
		// A URL may carry a password (http://user:pass@host): never
		// repeat it.
		if u, err := url.Parse(x); err == nil && u.User != nil {
			x = u.Redacted()
		}
		return strconv.Quote(x)
	case map[string]any:
		return "(a section)"
	}
	return fmt.Sprint(raw)
}

// problem builds the Error for key.
func (o *origin) problem(key, problem string) *Error {
	e := &Error{Key: key, Value: o.value(key), Source: o.source(key), Problem: problem, Example: exampleFor(key)}
	if _, ok := defaults[key]; ok && isSecret(key) {
		e.Env = EnvName(key)
	}
	return e
}

// examples are good values for keys whose default does not show one
// (empty strings, zeros that mean "off"). Any other key's example is its
// default.
var examples = map[string]string{
	"llm.base_url":                         "https://api.openai.com/v1",
	"llm.model":                            "gpt-4o-mini",
	"llm.api_key":                          "sk-…",
	"llm.max_tokens":                       "4096",
	"llm.run_token_budget":                 "200000",
	"llm.daily_token_budget":               "5000000",
	"llm.instructions":                     `"Our services run under systemd."`,
	"knowledge.runbooks_dir":               "/var/lib/vigil/runbooks",
	"store.redis.password":                 "…",
	"channels[].allow_self_approval":       "false",
	"inventory.file":                       "configs/inventory.example.yaml",
	"store.redis.pool_size":                "64",
	"store.redis.addrs":                    "[10.0.0.1:6379, 10.0.0.2:6379, 10.0.0.3:6379]",
	"store.redis.master_name":              "mymaster",
	"store.redis.sentinel_password":        "…",
	"server.listen":                        `":9090"`,
	"audit.file":                           "/var/lib/vigil/audit.jsonl",
	"audit.key":                            "$(openssl rand -hex 32)",
	"audit.key_file":                       "/etc/vigil/audit.key",
	"audit.previous_key_files":             "[/etc/vigil/audit-2025.key]",
	"audit.previous_key_files[]":           "/etc/vigil/audit-2025.key",
	"state_dir":                            "/var/lib/vigil",
	"slack.bot_token":                      "xoxb-…",
	"slack.app_token":                      "xapp-…",
	"slack.signing_secret":                 "…",
	"slack.api_url":                        "https://slack.com/api/",
	"matrix.homeserver":                    "https://matrix.example.org",
	"matrix.user_id":                       `"@vigil:example.org"`,
	"matrix.access_token":                  "syt_…",
	"matrix.password":                      "…",
	"matrix.device_id":                     "VIGILBOT",
	"matrix.rooms":                         `["!abcdef:example.org"]`,
	"matrix.state_dir":                     "/var/lib/vigil/matrix",
	"channels":                             "[{match: console, control_level: controlled}]",
	"channels[].match":                     "slack:C0123456789",
	"channels[].control_level":             "controlled",
	"channels[].approvers":                 "[U0AAAAAAA, usergroup:S0BBBBBBB]",
	"channels[].operators":                 "[U0AAAAAAA]",
	"channels[].viewers":                   "[U0AAAAAAA]",
	"channels[].scope":                     "{hosts: [web-*, group:web], kubernetes: [prod/shop], datasources: [main]}",
	"plugins[].name":                       "tickets",
	"plugins[].command":                    "/usr/local/bin/tickets-mcp",
	"plugins[].args":                       `["--stdio"]`,
	"plugins[].env":                        `["TICKETS_URL=https://tickets.example.org"]`,
	"plugins[].env[]":                      "TICKETS_URL=https://tickets.example.org",
	"plugins[].timeout":                    "30s",
	"plugins[].max_response":               "65536",
	"plugins[].read_only_tools":            "[search_tickets, get_ticket]",
	"plugins[].read_only_tools[]":          "search_tickets",
	"policy.read_only_commands":            `["mytool status", {command: "kafka-topics --describe", network: true}]`,
	"policy.read_only_commands[]":          `"mytool status"`,
	"policy.read_only_commands[].command":  `"kafka-topics --describe"`,
	"policy.read_only_commands[].network":  "true",
	"policy.read_only_commands[].hosts":    `["kafka-1:9092"]`,
	"policy.read_only_commands[].hosts[]":  "kafka-1:9092",
	"policy.read_destinations":             `["10.0.0.5", "kafka-1:9092", "ceph=mon1:3300", "aws=*.amazonaws.com:443"]`,
	"policy.read_destinations[]":           "ceph=mon1:3300",
	"policy.http_read_urls":                `["http://localhost:9090/api/v1/", /readyz]`,
	"policy.http_read_urls[]":              "http://localhost:9090/metrics",
	"eval.judge.base_url":                  "https://api.openai.com/v1",
	"eval.judge.model":                     "gpt-4o",
	"eval.judge.api_key":                   "sk-…",
	"eval.prices":                          "[{model: gpt-4o-mini, prompt_per_million: 0.15, completion_per_million: 0.60}]",
	"eval.prices[].model":                  "gpt-4o-mini",
	"eval.prices[].prompt_per_million":     "0.15",
	"eval.prices[].completion_per_million": "0.60",

	"observability.prometheus":                           "[{name: main, url: http://prometheus.monitoring:9090}]",
	"observability.prometheus[].name":                    "main",
	"observability.prometheus[].url":                     "http://prometheus.monitoring:9090",
	"observability.prometheus[].bearer_token_env":        "PROMETHEUS_TOKEN",
	"observability.prometheus[].basic_auth.username":     "vigil",
	"observability.prometheus[].basic_auth.password_env": "PROMETHEUS_PASSWORD",
	"observability.prometheus[].tls_ca":                  "/etc/vigil/ca.pem",
	"observability.alertmanager.url":                     "http://alertmanager.monitoring:9093",
	"observability.alertmanager.bearer_token_env":        "ALERTMANAGER_TOKEN",
	"observability.alertmanager.basic_auth.username":     "vigil",
	"observability.alertmanager.basic_auth.password_env": "ALERTMANAGER_PASSWORD",
	"observability.alertmanager.tls_ca":                  "/etc/vigil/ca.pem",
	"kubernetes.clusters":                                "[{name: prod, kubeconfig: /etc/vigil/kubeconfig, context: prod}]",
	"kubernetes.clusters[].name":                         "prod",
	"kubernetes.clusters[].kubeconfig":                   "/etc/vigil/kubeconfig",
	"kubernetes.clusters[].context":                      "prod",
	"kubernetes.clusters[].in_cluster":                   "true",
	"kubernetes.clusters[].namespaces":                   "[shop, payments]",
	"kubernetes.clusters[].namespaces[]":                 "shop",
	"changes.git_repos":                                  "[{name: infra, path: /srv/infra-config}]",
	"changes.git_repos[].name":                           "infra",
	"changes.git_repos[].path":                           "/srv/infra-config",
	"alerts.enabled":                                     "true",
	"alerts.token":                                       "$(openssl rand -hex 32)",
	"alerts.pagerduty.secret":                            "…",
	"alerts.routes":                                      `[{match: {team: db}, channel: "slack:C0123456789", prompt: "Check replication lag first."}]`,
	"alerts.routes[].match":                              "{team: db, severity: page}",
	"alerts.routes[].match_re":                           `{service: "checkout|cart"}`,
	"alerts.routes[].channel":                            `"matrix:!ops:example.org"`,
	"alerts.routes[].investigate":                        "false",
	"alerts.routes[].prompt":                             `"Check replication lag first."`,
	"alerts.default":                                     "slack:C0123456789",
	"alerts.max_concurrent_investigations":               "4",
	"alerts.limits.open_groups":                          "25",
	"alerts.limits.new_threads_per_minute":               "10",
	"alerts.routes[].limits.open_groups":                 "50",
	"alerts.routes[].limits.new_threads_per_minute":      "20",
}

// exampleFor returns a good value for key: from examples, the duration
// rules, or else the key's default.
func exampleFor(key string) string {
	p := pattern(key)
	if ex, ok := examples[p]; ok {
		return ex
	}
	if ex, ok := identityExamples[p]; ok {
		return ex
	}
	if r, ok := durationRuleFor(p); ok {
		return r.example
	}
	if d, ok := defaults[p]; ok {
		switch x := d.(type) {
		case string:
			if x == "" {
				return ""
			}
			return x
		case bool:
			return "true"
		}
		return fmt.Sprint(d)
	}
	return ""
}

var invalidKeys = regexp.MustCompile(`'([^']*)' has invalid keys: ([^\n]+)`)

// explainDecodeError turns mapstructure's errors into *Error values: each
// names the key, its value, where it came from and an example.
func (o *origin) explainDecodeError(err error) error {
	var out []error
	if m := invalidKeys.FindAllStringSubmatch(err.Error(), -1); m != nil {
		var keys []string
		for _, g := range m {
			for _, k := range strings.Split(g[2], ", ") {
				full := strings.TrimSpace(k)
				if g[1] != "" {
					full = g[1] + "." + full
				}
				keys = append(keys, full)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, o.unknownKey(k))
		}
	}
	for _, de := range decodeErrors(err) {
		if strings.Contains(de.Error(), "has invalid keys") {
			continue // worded above
		}
		e := o.problem(de.Name(), decodeProblem(de))
		var ue *unitError
		if errors.As(de, &ue) {
			e.Example = ue.example()
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		where := "the configuration"
		if o.path != "" {
			where = o.path
		}
		return fmt.Errorf("config: %s: %w", where, err)
	}
	return errors.Join(out...)
}

// unknownKey words a key vigil does not have, naming the closest one.
func (o *origin) unknownKey(key string) *Error {
	e := &Error{Key: key, Value: o.value(key), Source: o.source(key), Unknown: true}
	if e.Value == "(not set)" {
		e.Value = ""
	}
	e.Problem = "vigil has no such key"
	if near, ok := closestKey(key); ok {
		e.Problem += "; did you mean " + near + "?"
	}
	e.Problem += " (every key is in configs/vigil.example.yaml)"
	return e
}

// closestKey suggests the known key nearest to an unknown one, keeping
// the unknown key's list indices. A key whose last part abbreviates a
// known one's (cmd for command) counts as near.
func closestKey(key string) (string, bool) {
	p := pattern(key)
	parent, last := splitKey(p)
	best, bestD := "", -1
	for _, k := range knownKeys() {
		d := textmatch.Distance(p, k)
		if kp, kl := splitKey(k); kp == parent && abbreviates(last, kl) {
			d = min(d, 1)
		}
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	if bestD < 0 || bestD > max(2, len(p)/3) {
		return "", false
	}
	// Put the unknown key's indices back: plugins[].command -> plugins[0].command.
	idx := regexp.MustCompile(`\[\d+\]`).FindAllString(key, -1)
	for _, ix := range idx {
		best = strings.Replace(best, "[]", ix, 1)
	}
	return best, true
}

// splitKey splits "a.b.c" into "a.b" and "c".
func splitKey(k string) (parent, last string) {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[:i], k[i+1:]
	}
	return "", k
}

// abbreviates reports whether a is b with letters left out, starting with
// b's first letter.
func abbreviates(a, b string) bool {
	if a == "" || a == b || a[0] != b[0] {
		return false
	}
	i := 0
	for j := 0; j < len(b) && i < len(a); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// decodeErrors collects every *mapstructure.DecodeError in err's tree that
// has no DecodeError below it (the one naming the innermost key).
func decodeErrors(err error) []*mapstructure.DecodeError {
	var out []*mapstructure.DecodeError
	var walk func(e error) bool
	walk = func(e error) bool {
		found := false
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				if walk(x) {
					found = true
				}
			}
		case interface{ Unwrap() error }:
			if x := u.Unwrap(); x != nil {
				found = walk(x)
			}
		}
		if de, ok := e.(*mapstructure.DecodeError); ok && !found {
			out = append(out, de)
			return true
		}
		return found
	}
	walk(err)
	return out
}

// decodeProblem words what mapstructure could not decode.
func decodeProblem(de *mapstructure.DecodeError) string {
	inner := de.Unwrap()
	var pe *mapstructure.ParseError
	var ue *mapstructure.UnconvertibleTypeError
	var expected reflect.Type
	switch {
	case errors.As(inner, &pe):
		expected = pe.Expected.Type()
	case errors.As(inner, &ue):
		expected = ue.Expected.Type()
	default:
		return inner.Error()
	}
	switch expected.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "not a whole number"
	case reflect.Float32, reflect.Float64:
		return "not a number"
	case reflect.Bool:
		return "not true or false"
	case reflect.String:
		return "not a single value (quote it if it is text)"
	case reflect.Slice:
		return "not a list"
	case reflect.Struct, reflect.Map:
		return "not a section of keys"
	}
	return inner.Error()
}
