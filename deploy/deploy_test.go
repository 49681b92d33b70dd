// Package deploy holds vigil's deployment artifacts. These tests check that
// they parse and agree with each other: the image runs as a non-root user,
// the compose file wires Redis and the probes, the systemd unit is
// hardened, and the Helm chart lints and renders (through Helm's own
// packages, helm_test.go).
package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/vigilops/vigil/internal/config"
)

// opsPort is server.listen's port in every artifact.
const opsPort = 8080

// --- Dockerfile ---

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDockerfile(t *testing.T) {
	ins := readDockerfile(t)
	var stages [][]instruction
	for _, in := range ins {
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) > 0 {
			stages[len(stages)-1] = append(stages[len(stages)-1], in)
		}
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a multi-stage build", len(stages))
	}
	if from := stages[0][0].args; !strings.HasPrefix(from, "golang:") || !strings.Contains(from, " AS ") {
		t.Errorf("first stage FROM %q, want a named golang builder", from)
	}
	var build string
	for _, in := range stages[0] {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-X main.version=$VERSION`, "./cmd/vigil"} {
		if !strings.Contains(build, want) {
			t.Errorf("go build step %q lacks %q", build, want)
		}
	}

	// Every base image is pinned by digest, not by a tag alone.
	for _, st := range stages {
		image, _, _ := strings.Cut(st[0].args, " ")
		if !pinnedImage.MatchString(image) {
			t.Errorf("FROM %s: pin the base image by digest (name:tag@sha256:<64 hex>)", image)
		}
	}

	final := stages[len(stages)-1]
	// The local transport runs reads with bash unless a resource says
	// `shell: sh` (tools/transport_local.go): the image must have it.
	var packages []string
	for _, in := range final {
		if in.cmd == "RUN" {
			for _, cmd := range strings.Split(in.args, "&&") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(cmd), "apk add "); ok {
					packages = append(packages, strings.Fields(rest)...)
				}
			}
		}
	}
	for _, want := range []string{"bash", "ca-certificates"} {
		if !slices.Contains(packages, want) {
			t.Errorf("final stage installs %q, which lacks %s", packages, want)
		}
	}
	var user, expose, entry string
	var env []string
	for _, in := range final {
		switch in.cmd {
		case "ENV":
			env = append(env, in.args)
		case "USER":
			user = in.args
		case "EXPOSE":
			expose = in.args
		case "ENTRYPOINT":
			entry = in.args
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("final stage USER %q, want a numeric non-root uid (Kubernetes runAsNonRoot needs a number)", user)
	}
	if want := "VIGIL_SERVER_LISTEN=:" + strconv.Itoa(opsPort); !slices.Contains(env, want) {
		t.Errorf("final stage ENV %q lacks %s (EXPOSE and HEALTHCHECK rely on it)", env, want)
	}
	if expose != strconv.Itoa(opsPort) {
		t.Errorf("EXPOSE %q, want %d", expose, opsPort)
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry), &argv); err != nil {
		t.Fatalf("ENTRYPOINT %q is not exec form: %v", entry, err)
	}
	if want := []string{"/vigil", "run", "--config", "/etc/vigil/vigil.yaml"}; !slices.Equal(argv, want) {
		t.Errorf("ENTRYPOINT %q, want %q", argv, want)
	}
}

// pinnedImage is an image reference with a tag and a digest.
var pinnedImage = regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)

// --- docker-compose.yml ---

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       map[string]any    `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		ReadOnly bool `yaml:"read_only"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func TestCompose(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	vigil, ok := c.Services["vigil"]
	if !ok {
		t.Fatal("no vigil service")
	}
	redis, ok := c.Services["redis"]
	if !ok {
		t.Fatal("no redis service")
	}

	if vigil.Build["dockerfile"] != "deploy/Dockerfile" || vigil.Build["context"] != ".." {
		t.Errorf("vigil build = %v, want context .. and deploy/Dockerfile", vigil.Build)
	}
	wantEnv := map[string]string{
		"VIGIL_LLM_MODEL":        "${VIGIL_LLM_MODEL:-gpt-4o-mini}",
		"VIGIL_SLACK_ENABLED":    "${VIGIL_SLACK_ENABLED:-true}",
		"VIGIL_STORE_BACKEND":    "redis",
		"VIGIL_STORE_REDIS_ADDR": "redis:6379",
		"VIGIL_SERVER_LISTEN":    ":" + strconv.Itoa(opsPort),
	}
	for k, v := range wantEnv {
		if got := vigil.Environment[k]; got != v {
			t.Errorf("vigil env %s = %q, want %q", k, got, v)
		}
	}
	// Secrets come from the caller's environment, never literal values.
	for _, k := range []string{"VIGIL_LLM_API_KEY", "VIGIL_SLACK_BOT_TOKEN", "VIGIL_SLACK_APP_TOKEN", "VIGIL_MATRIX_ACCESS_TOKEN"} {
		if got, want := vigil.Environment[k], "${"+k+":-}"; got != want {
			t.Errorf("vigil env %s = %q, want %q", k, got, want)
		}
	}
	if !slices.ContainsFunc(vigil.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/etc/vigil/vigil.yaml:ro") }) {
		t.Errorf("vigil volumes %q do not mount the config read-only at /etc/vigil/vigil.yaml", vigil.Volumes)
	}
	if hc := strings.Join(vigil.Healthcheck.Test, " "); !strings.Contains(hc, "127.0.0.1:"+strconv.Itoa(opsPort)+"/healthz") {
		t.Errorf("vigil healthcheck %q does not probe /healthz on port %d", hc, opsPort)
	}
	if vigil.DependsOn["redis"].Condition != "service_healthy" {
		t.Errorf("vigil depends_on redis = %+v, want condition service_healthy", vigil.DependsOn["redis"])
	}
	if !vigil.ReadOnly {
		t.Error("vigil container root filesystem is writable; want read_only: true")
	}
	if !strings.HasPrefix(redis.Image, "redis:7") {
		t.Errorf("redis image %q, want redis:7", redis.Image)
	}
	if len(redis.Healthcheck.Test) == 0 {
		t.Error("redis has no healthcheck (vigil waits for service_healthy)")
	}
	if len(redis.Ports) != 0 {
		t.Errorf("redis publishes ports %q; it must stay on the compose network", redis.Ports)
	}
	// Redis asks for a password, which compose requires from the caller
	// (${VAR:?...} refuses to start without it) and hands to both sides.
	const pw = "VIGIL_STORE_REDIS_PASSWORD"
	required := regexp.MustCompile(`^\$\{` + pw + `:\?.+\}$`)
	if got := vigil.Environment[pw]; !required.MatchString(got) {
		t.Errorf("vigil env %s = %q, want it required from the caller (${%s:?...})", pw, got, pw)
	}
	if got := redis.Environment[pw]; !required.MatchString(got) {
		t.Errorf("redis env %s = %q, want it required from the caller", pw, got)
	}
	if got := redis.Environment["REDISCLI_AUTH"]; !strings.HasPrefix(got, "${"+pw+":?") {
		t.Errorf("redis env REDISCLI_AUTH = %q, want the password (the healthcheck's redis-cli needs it)", got)
	}
	if cmd := strings.Join(redis.Command, " "); !strings.Contains(cmd, `--requirepass "$$`+pw+`"`) {
		t.Errorf("redis command %q does not set --requirepass from %s", cmd, pw)
	}
}

// --- systemd ---

func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("systemd", "vigil.service"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string][]string{}
	var sec string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			sec = strings.Trim(line, "[]")
			sections[sec] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || sec == "" {
				t.Fatalf("vigil.service:%d: not a key=value line in a section: %q", i+1, line)
			}
			sections[sec][k] = append(sections[sec][k], v)
		}
	}
	svc := sections["Service"]
	want := map[string]string{
		"NoNewPrivileges":       "yes",
		"ProtectSystem":         "strict",
		"ProtectHome":           "yes",
		"PrivateTmp":            "yes",
		"Restart":               "on-failure",
		"EnvironmentFile":       "/etc/vigil/vigil.env",
		"CapabilityBoundingSet": "",
	}
	for k, v := range want {
		if got, ok := svc[k]; !ok || got[len(got)-1] != v {
			t.Errorf("[Service] %s = %q, want %q", k, got, v)
		}
	}
	// Reads such as `ip addr` and `ss` ask the kernel over netlink.
	if fams := strings.Fields(strings.Join(svc["RestrictAddressFamilies"], " ")); !slices.Contains(fams, "AF_NETLINK") {
		t.Errorf("[Service] RestrictAddressFamilies = %q lacks AF_NETLINK: `ip addr` would fail as a read", fams)
	}
	if svc["DynamicUser"] == nil && svc["User"] == nil {
		t.Error("[Service] runs as root: want DynamicUser=yes or User=vigil")
	}
	if got := svc["ExecStart"]; len(got) != 1 || !strings.HasSuffix(got[0], " run --config /etc/vigil/vigil.yaml") {
		t.Errorf("[Service] ExecStart = %q", got)
	}
	if got := sections["Install"]["WantedBy"]; !slices.Equal(got, []string{"multi-user.target"}) {
		t.Errorf("[Install] WantedBy = %q", got)
	}
}

// --- Slack app manifest (SPEC B4) ---

func TestSlackManifestParses(t *testing.T) {
	top, _ := filepath.Glob("*manifest*")
	nested, _ := filepath.Glob("*/*manifest*")
	paths := append(top, nested...)
	var found bool
	for _, p := range paths {
		ext := filepath.Ext(p)
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			continue
		}
		found = true
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			DisplayInformation struct {
				Name string `yaml:"name" json:"name"`
			} `yaml:"display_information" json:"display_information"`
			Features map[string]any `yaml:"features" json:"features"`
			Settings map[string]any `yaml:"settings" json:"settings"`
		}
		// JSON is YAML, so one decoder reads both.
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if m.DisplayInformation.Name == "" || m.Features == nil || m.Settings == nil {
			t.Errorf("%s: want display_information.name, features and settings", p)
		}
	}
	if !found {
		t.Fatal("no Slack app manifest in deploy/ (want deploy/slack/manifest.yaml)")
	}
}

// --- Helm chart ---

const chart = "helm/vigil"

// object is one rendered Kubernetes manifest. An alias, not a named type:
// yaml decodes nested mappings into the type of the outermost one.
type object = map[string]any

func kindOf(o object) string { return str(o, "kind") }
func nameOf(o object) string { return str(o, "metadata", "name") }

// get walks maps by key and slices by index.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }

func render(t *testing.T, args ...string) ([]object, error) {
	t.Helper()
	out, err := helmTemplate(args...)
	if err != nil {
		return nil, err
	}
	var objs []object
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var o object
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("helm template output: %v", err)
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

func mustRender(t *testing.T, args ...string) []object {
	t.Helper()
	objs, err := render(t, args...)
	if err != nil {
		t.Fatalf("helm template %q: %v", args, err)
	}
	return objs
}

func find(objs []object, kind, name string) object {
	for _, o := range objs {
		if kindOf(o) == kind && nameOf(o) == name {
			return o
		}
	}
	return nil
}

func kinds(objs []object) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, kindOf(o)+"/"+nameOf(o))
	}
	slices.Sort(ks)
	return ks
}

// vigilConfig decodes the vigil.yaml the chart renders.
func vigilConfig(t *testing.T, objs []object) map[string]any {
	t.Helper()
	cm := find(objs, "ConfigMap", "vigil")
	if cm == nil {
		t.Fatalf("no ConfigMap vigil in %q", kinds(objs))
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(str(cm, "data", "vigil.yaml")), &cfg); err != nil {
		t.Fatalf("rendered vigil.yaml: %v", err)
	}
	return cfg
}

func TestHelmDefaults(t *testing.T) {
	objs := mustRender(t)
	want := []string{
		"ConfigMap/vigil", "Deployment/vigil", "PodDisruptionBudget/vigil",
		"Secret/vigil", "Service/vigil", "ServiceAccount/vigil",
	}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Errorf("default objects = %q, want %q", got, want)
	}

	d := find(objs, "Deployment", "vigil")
	if r := get(d, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %v, want 2", r)
	}
	pod := get(d, "spec", "template", "spec")
	if get(pod, "securityContext", "runAsNonRoot") != true {
		t.Error("pod securityContext.runAsNonRoot is not true")
	}
	c := get(pod, "containers", 0)
	if get(c, "securityContext", "readOnlyRootFilesystem") != true {
		t.Error("container securityContext.readOnlyRootFilesystem is not true")
	}
	if get(c, "securityContext", "allowPrivilegeEscalation") != false {
		t.Error("container allows privilege escalation")
	}
	if str(c, "livenessProbe", "httpGet", "path") != "/healthz" || str(c, "readinessProbe", "httpGet", "path") != "/readyz" {
		t.Errorf("probes: liveness %v, readiness %v", get(c, "livenessProbe"), get(c, "readinessProbe"))
	}
	if get(c, "ports", 0, "containerPort") != opsPort {
		t.Errorf("containerPort = %v, want %d", get(c, "ports", 0, "containerPort"), opsPort)
	}
	if get(c, "resources", "requests") == nil || get(c, "resources", "limits") == nil {
		t.Error("container has no resource requests and limits")
	}
	if str(c, "envFrom", 0, "secretRef", "name") != "vigil" {
		t.Errorf("envFrom = %v, want the chart's Secret", get(c, "envFrom"))
	}
	if !slices.ContainsFunc(get(c, "env").([]any), func(e any) bool {
		return str(e, "name") == "VIGIL_SERVER_LISTEN" && str(e, "value") == ":"+strconv.Itoa(opsPort)
	}) {
		t.Errorf("env = %v, want VIGIL_SERVER_LISTEN on the chart's port", get(c, "env"))
	}
	if args := get(c, "args"); !slices.Equal(toStrings(args), []string{"run", "--config", "/etc/vigil/vigil.yaml"}) {
		t.Errorf("args = %v", args)
	}

	cfg := vigilConfig(t, objs)
	if got := str(cfg, "server", "listen"); got != ":"+strconv.Itoa(opsPort) {
		t.Errorf("server.listen = %q", got)
	}
	if str(cfg, "store", "backend") != "redis" || str(cfg, "store", "redis", "addr") != "redis:6379" {
		t.Errorf("store = %v, want redis at the default external address", get(cfg, "store"))
	}
	if get(cfg, "store", "redis", "password") != nil {
		t.Error("the Redis password is in the ConfigMap")
	}
	if find(objs, "Deployment", "vigil-redis") != nil {
		t.Error("in-chart Redis rendered while redis.enabled is false")
	}
	// Redis asks for a password by default: one is generated into the
	// chart's Secret, which vigil's environment comes from.
	if pw := str(find(objs, "Secret", "vigil"), "stringData", "VIGIL_STORE_REDIS_PASSWORD"); len(pw) < 32 {
		t.Errorf("default VIGIL_STORE_REDIS_PASSWORD = %q, want a generated password of 32 characters", pw)
	}
}

// TestHelmRedisAuth: the in-chart Redis asks for a password by default,
// the one vigil sends; a Secret you manage can hold it; only an explicit
// redis.auth.enabled=false runs Redis without one.
func TestHelmRedisAuth(t *testing.T) {
	redisContainer := func(objs []object) any {
		return get(find(objs, "Deployment", "vigil-redis"), "spec", "template", "spec", "containers", 0)
	}
	requirepass := func(c any) bool {
		return strings.Contains(strings.Join(toStrings(get(c, "args")), " "), "--requirepass $(REDIS_PASSWORD)")
	}
	passwordRef := func(envs any, name string) (secret, key string) {
		list, _ := envs.([]any)
		for _, e := range list {
			if str(e, "name") == name {
				return str(e, "valueFrom", "secretKeyRef", "name"), str(e, "valueFrom", "secretKeyRef", "key")
			}
		}
		return "", ""
	}

	objs := mustRender(t, "--set", "redis.enabled=true")
	rc := redisContainer(objs)
	if !requirepass(rc) {
		t.Errorf("in-chart Redis args %v, want --requirepass by default", get(rc, "args"))
	}
	if s, k := passwordRef(get(rc, "env"), "REDIS_PASSWORD"); s != "vigil" || k != "VIGIL_STORE_REDIS_PASSWORD" {
		t.Errorf("in-chart Redis password from %s/%s, want the chart's Secret's VIGIL_STORE_REDIS_PASSWORD", s, k)
	}
	if pw := str(find(objs, "Secret", "vigil"), "stringData", "VIGIL_STORE_REDIS_PASSWORD"); len(pw) < 32 {
		t.Errorf("generated password %q, want 32 characters", pw)
	}

	objs = mustRender(t, "--set", "redis.enabled=true", "--set", "redis.auth.existingSecret=redis-auth")
	if _, ok := get(find(objs, "Secret", "vigil"), "stringData").(map[string]any)["VIGIL_STORE_REDIS_PASSWORD"]; ok {
		t.Error("the chart's Secret holds a Redis password although redis.auth.existingSecret is set")
	}
	if s, k := passwordRef(get(redisContainer(objs), "env"), "REDIS_PASSWORD"); s != "redis-auth" || k != "redis-password" {
		t.Errorf("in-chart Redis password from %s/%s, want redis-auth/redis-password", s, k)
	}
	vc := get(find(objs, "Deployment", "vigil"), "spec", "template", "spec", "containers", 0)
	if s, k := passwordRef(get(vc, "env"), "VIGIL_STORE_REDIS_PASSWORD"); s != "redis-auth" || k != "redis-password" {
		t.Errorf("vigil's VIGIL_STORE_REDIS_PASSWORD from %s/%s, want redis-auth/redis-password", s, k)
	}

	objs = mustRender(t, "--set", "redis.enabled=true", "--set", "redis.auth.enabled=false")
	if requirepass(redisContainer(objs)) {
		t.Error("--requirepass although redis.auth.enabled=false")
	}
	if _, ok := get(find(objs, "Secret", "vigil"), "stringData").(map[string]any)["VIGIL_STORE_REDIS_PASSWORD"]; ok {
		t.Error("a Redis password in the Secret although redis.auth.enabled=false")
	}

	if _, err := render(t, "--set", "redis.password=x"); err == nil || !strings.Contains(err.Error(), "redis.auth.password") {
		t.Errorf("the old redis.password: err = %v, want it pointed to redis.auth.password", err)
	}
}

func TestHelmRedisAndServiceMonitor(t *testing.T) {
	objs := mustRender(t, "--set", "redis.enabled=true", "--set", "serviceMonitor.enabled=true",
		"--set", "redis.auth.password=hunter2", "--set", "secretEnv.VIGIL_LLM_API_KEY=sk-test")
	for _, k := range []string{"Deployment/vigil-redis", "Service/vigil-redis", "ServiceMonitor/vigil"} {
		if !slices.Contains(kinds(objs), k) {
			t.Errorf("missing %s in %q", k, kinds(objs))
		}
	}
	cfg := vigilConfig(t, objs)
	if got := str(cfg, "store", "redis", "addr"); got != "vigil-redis:6379" {
		t.Errorf("store.redis.addr = %q, want the in-chart Redis service", got)
	}
	sm := find(objs, "ServiceMonitor", "vigil")
	if str(sm, "spec", "endpoints", 0, "path") != "/metrics" || str(sm, "spec", "endpoints", 0, "port") != "http" {
		t.Errorf("ServiceMonitor endpoints = %v", get(sm, "spec", "endpoints"))
	}
	sec := find(objs, "Secret", "vigil")
	if str(sec, "stringData", "VIGIL_LLM_API_KEY") != "sk-test" || str(sec, "stringData", "VIGIL_STORE_REDIS_PASSWORD") != "hunter2" {
		t.Errorf("Secret stringData = %v", get(sec, "stringData"))
	}
	for _, o := range objs {
		if kindOf(o) == "Secret" {
			continue
		}
		b, _ := yaml.Marshal(o)
		if bytes.Contains(b, []byte("sk-test")) || bytes.Contains(b, []byte("hunter2")) {
			t.Errorf("%s/%s contains a secret value", kindOf(o), nameOf(o))
		}
	}
	rc := get(find(objs, "Deployment", "vigil-redis"), "spec", "template", "spec", "containers", 0)
	if str(rc, "env", 0, "valueFrom", "secretKeyRef", "key") != "VIGIL_STORE_REDIS_PASSWORD" {
		t.Errorf("in-chart Redis does not take its password from the Secret: %v", get(rc, "env"))
	}
}

func TestHelmExistingSecret(t *testing.T) {
	objs := mustRender(t, "--set", "existingSecret=my-vigil")
	if find(objs, "Secret", "vigil") != nil {
		t.Error("chart creates a Secret although existingSecret is set")
	}
	c := get(find(objs, "Deployment", "vigil"), "spec", "template", "spec", "containers", 0)
	if str(c, "envFrom", 0, "secretRef", "name") != "my-vigil" {
		t.Errorf("envFrom = %v, want my-vigil", get(c, "envFrom"))
	}
}

func TestHelmMemoryStore(t *testing.T) {
	objs := mustRender(t, "--set", "replicaCount=1", "--set", "redis.addr=")
	if got := str(vigilConfig(t, objs), "store", "backend"); got != "memory" {
		t.Errorf("store.backend = %q, want memory without Redis", got)
	}
	if find(objs, "PodDisruptionBudget", "vigil") != nil {
		t.Error("a PodDisruptionBudget with minAvailable 1 on one replica would block node drains")
	}

	_, err := render(t, "--set", "replicaCount=3", "--set", "redis.addr=")
	if err == nil || !regexp.MustCompile(`replicaCount > 1 needs Redis`).MatchString(err.Error()) {
		t.Errorf("3 replicas without Redis: err = %v, want a clear refusal", err)
	}
}

// Cluster nodes or Sentinels replace the single address, and the settings
// that cannot work together are refused when rendering.
func TestHelmClusterAndSentinel(t *testing.T) {
	cfg := vigilConfig(t, mustRender(t, "--set", "redis.addrs={redis-0:6379,redis-1:6379,redis-2:6379}"))
	if got := toStrings(get(cfg, "store", "redis", "addrs")); strings.Join(got, ",") != "redis-0:6379,redis-1:6379,redis-2:6379" {
		t.Errorf("store.redis.addrs = %q, want the three Cluster nodes", got)
	}
	if get(cfg, "store", "redis", "addr") != nil || get(cfg, "store", "redis", "master_name") != nil {
		t.Errorf("store.redis = %v: addr or master_name set beside the Cluster nodes", get(cfg, "store", "redis"))
	}

	cfg = vigilConfig(t, mustRender(t, "--set", "redis.addrs={sentinel:26379}", "--set", "redis.masterName=main"))
	if str(cfg, "store", "redis", "master_name") != "main" || str(cfg, "store", "redis", "addrs", 0) != "sentinel:26379" {
		t.Errorf("store.redis = %v, want master main via sentinel:26379", get(cfg, "store", "redis"))
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "redis.enabled=true", "--set", "redis.addrs={a:1,b:2}"}, "cannot be used with the in-chart Redis"},
		{[]string{"--set", "redis.masterName=main"}, "redis.masterName needs redis.addrs"},
	} {
		if _, err := render(t, bad.args...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: err = %v, want %q", bad.args, err, bad.want)
		}
	}
}

func toStrings(v any) []string {
	s, _ := v.([]any)
	out := make([]string, 0, len(s))
	for _, e := range s {
		out = append(out, str(e))
	}
	return out
}

// --- the artifacts against vigil's own config loader ---

// composeVar resolves a compose "${NAME:-default}" value to its default,
// or to secrets[NAME] when the test supplies one; "${NAME:?message}" (a
// value the caller must give) resolves to secrets[NAME] only.
var composeVar = regexp.MustCompile(`^\$\{(\w+):([-?])(.*)\}$`)

// dummySecrets stand in for the secrets an operator provides.
var dummySecrets = map[string]string{
	"VIGIL_LLM_API_KEY":          "sk-test",
	"VIGIL_SLACK_BOT_TOKEN":      "xoxb-test",
	"VIGIL_SLACK_APP_TOKEN":      "xapp-test",
	"VIGIL_STORE_REDIS_PASSWORD": "redis-test",
}

// setVigilEnv clears every VIGIL_* variable of the test process, then sets
// env, so only the artifact speaks to the loader.
func setVigilEnv(t *testing.T, env map[string]string) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "VIGIL_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

func TestComposeConfigLoads(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for k, v := range c.Services["vigil"].Environment {
		if m := composeVar.FindStringSubmatch(v); m != nil {
			s, ok := dummySecrets[m[1]]
			switch {
			case ok:
				v = s
			case m[2] == "?":
				t.Fatalf("compose requires %s, which the test does not supply", m[1])
			default:
				v = m[3]
			}
		}
		env[k] = v
	}
	setVigilEnv(t, env)
	// The compose file mounts VIGIL_CONFIG, by default the example config.
	cfg, err := config.Load(filepath.Join("..", "configs", "vigil.example.yaml"))
	if err != nil {
		t.Fatalf("vigil would not start under compose: %v", err)
	}
	if cfg.Store.Backend != "redis" || cfg.Store.Redis.Addr != "redis:6379" || cfg.Server.Listen != ":8080" {
		t.Errorf("compose config: store %+v, server %+v", cfg.Store, cfg.Server)
	}
	if cfg.Store.Redis.Password.Reveal() != dummySecrets["VIGIL_STORE_REDIS_PASSWORD"] {
		t.Error("the Redis password compose requires does not reach store.redis.password")
	}
	if !cfg.LLM.Configured() || !cfg.Slack.Enabled {
		t.Errorf("compose config: llm configured %v, slack enabled %v; want both", cfg.LLM.Configured(), cfg.Slack.Enabled)
	}
}

func TestHelmConfigLoads(t *testing.T) {
	for name, args := range map[string][]string{
		"defaults": nil,
		"redis":    {"--set", "redis.enabled=true", "--set", "redis.auth.password=hunter2"},
		"memory":   {"--set", "replicaCount=1", "--set", "redis.addr="},
	} {
		t.Run(name, func(t *testing.T) {
			for k, v := range dummySecrets {
				args = append(args, "--set", "secretEnv."+k+"="+v)
			}
			objs := mustRender(t, args...)
			// The pod's environment: the Secret's keys and the container's env.
			env := map[string]string{}
			for k, v := range get(find(objs, "Secret", "vigil"), "stringData").(map[string]any) {
				env[k] = v.(string)
			}
			c := get(find(objs, "Deployment", "vigil"), "spec", "template", "spec", "containers", 0)
			for _, e := range get(c, "env").([]any) {
				env[str(e, "name")] = str(e, "value")
			}
			setVigilEnv(t, env)
			path := filepath.Join(t.TempDir(), "vigil.yaml")
			cm := find(objs, "ConfigMap", "vigil")
			if err := os.WriteFile(path, []byte(str(cm, "data", "vigil.yaml")), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("vigil would not start with the chart's config: %v", err)
			}
			if cfg.Server.Listen != ":8080" {
				t.Errorf("server.listen = %q", cfg.Server.Listen)
			}
			if name == "redis" && cfg.Store.Redis.Password.Reveal() != "hunter2" {
				t.Error("the Redis password from the Secret does not reach store.redis.password")
			}
			if name == "defaults" && len(cfg.Store.Redis.Password.Reveal()) < 32 {
				t.Error("the generated Redis password does not reach store.redis.password")
			}
		})
	}
}

// values.schema.json: a misspelt key, a value of the wrong type or one
// outside its set fails `helm template` and `helm lint`, naming the value,
// instead of being ignored.
func TestHelmSchemaRejectsTypos(t *testing.T) {
	for _, tc := range []struct {
		set  string
		want string
	}{
		{"redis.enabeld=true", "enabeld"},
		{"replicaCont=3", "replicaCont"},
		{"serviceMonitor.enable=true", "enable"},
		{"rbac.kubeRead.enable=true", "enable"},
		{"replicaCount=two", "replicaCount"},
		{"service.type=Loadbalancer", "type"},
		{"server.port=0", "port"},
		{"serviceMonitor.interval=30", "interval"},
	} {
		if _, err := render(t, "--set", tc.set); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helm template --set %s: err = %v, want a schema error naming %q", tc.set, err, tc.want)
		}
	}
	if err := helmLint("--set", "redis.enabeld=true"); err == nil || !strings.Contains(err.Error(), "enabeld") {
		t.Errorf("helm lint --set redis.enabeld=true: err = %v, want a failure naming enabeld", err)
	}
	// vigil's own configuration is vigil's to check, not the schema's.
	mustRender(t, "--set", "config.log.level=debug")
}

// rbac.kubeRead: a ClusterRole that only reads, never Secrets, bound to
// vigil's service account, whose token is then mounted.
func TestHelmKubeReadRBAC(t *testing.T) {
	if objs := mustRender(t); find(objs, "ClusterRole", "vigil-kube-read") != nil {
		t.Fatal("ClusterRole rendered although rbac.kubeRead.enabled is false")
	}
	objs := mustRender(t, "--set", "rbac.kubeRead.enabled=true")
	role := find(objs, "ClusterRole", "vigil-kube-read")
	if role == nil {
		t.Fatalf("no ClusterRole vigil-kube-read in %q", kinds(objs))
	}
	read := []string{"get", "list", "watch"}
	var resources []string
	for _, r := range get(role, "rules").([]any) {
		for _, v := range toStrings(get(r, "verbs")) {
			if !slices.Contains(read, v) {
				t.Errorf("rule %v grants %q: the role must only read", r, v)
			}
		}
		for _, res := range toStrings(get(r, "resources")) {
			if res == "secrets" || res == "*" || strings.HasSuffix(res, "/exec") {
				t.Errorf("rule %v grants %q", r, res)
			}
			resources = append(resources, res)
		}
	}
	for _, want := range []string{"pods", "pods/log", "nodes", "events", "deployments", "statefulsets", "daemonsets"} {
		if !slices.Contains(resources, want) {
			t.Errorf("the role does not let the kube tool read %s: %q", want, resources)
		}
	}
	b := find(objs, "ClusterRoleBinding", "vigil-kube-read")
	if str(b, "roleRef", "name") != "vigil-kube-read" || str(b, "subjects", 0, "name") != "vigil" {
		t.Errorf("binding = %v, want vigil-kube-read bound to the vigil service account", b)
	}
	pod := get(find(objs, "Deployment", "vigil"), "spec", "template", "spec")
	if get(pod, "automountServiceAccountToken") != true {
		t.Error("the service account token is not mounted, so the role cannot be used")
	}
}

// With the in-chart Redis, a NetworkPolicy admits only vigil's pods, on
// the Redis port.
func TestHelmRedisNetworkPolicy(t *testing.T) {
	objs := mustRender(t, "--set", "redis.enabled=true")
	np := find(objs, "NetworkPolicy", "vigil-redis")
	if np == nil {
		t.Fatalf("no NetworkPolicy vigil-redis in %q", kinds(objs))
	}
	redisLabels := get(find(objs, "Deployment", "vigil-redis"), "spec", "template", "metadata", "labels")
	vigilLabels := get(find(objs, "Deployment", "vigil"), "spec", "template", "metadata", "labels").(map[string]any)
	sel := get(np, "spec", "podSelector", "matchLabels").(map[string]any)
	for k, v := range sel {
		if get(redisLabels, k) != v {
			t.Errorf("the policy selects %s=%v, which the Redis pod does not have (%v)", k, v, redisLabels)
		}
	}
	from := get(np, "spec", "ingress", 0, "from").([]any)
	if len(from) != 1 || len(get(np, "spec", "ingress").([]any)) != 1 {
		t.Fatalf("ingress = %v, want one rule from vigil's pods", get(np, "spec", "ingress"))
	}
	peer := get(from[0], "podSelector", "matchLabels").(map[string]any)
	if len(peer) == 0 {
		t.Fatalf("ingress from %v: want vigil's pods only", from[0])
	}
	for k, v := range peer {
		if vigilLabels[k] != v {
			t.Errorf("ingress admits %s=%v, which vigil's pods do not have (%v)", k, v, vigilLabels)
		}
	}
	if get(redisLabels, "app.kubernetes.io/component") == get(peer, "app.kubernetes.io/component") {
		t.Error("the ingress selector also matches the Redis pods themselves")
	}
	if get(np, "spec", "ingress", 0, "ports", 0, "port") != 6379 {
		t.Errorf("ports = %v, want 6379", get(np, "spec", "ingress", 0, "ports"))
	}
	if objs := mustRender(t, "--set", "redis.enabled=true", "--set", "redis.networkPolicy.enabled=false"); find(objs, "NetworkPolicy", "vigil-redis") != nil {
		t.Error("NetworkPolicy rendered although redis.networkPolicy.enabled=false")
	}
}

// rbac.impersonate: the service account may impersonate exactly the
// Kubernetes users and groups config.identities maps people to, and
// nothing else; without a mapping the chart refuses to render it.
func TestHelmImpersonateRBAC(t *testing.T) {
	if objs := mustRender(t); find(objs, "ClusterRole", "vigil-impersonate") != nil {
		t.Fatal("ClusterRole rendered although rbac.impersonate.enabled is false")
	}
	if _, err := render(t, "--set", "rbac.impersonate.enabled=true"); err == nil || !strings.Contains(err.Error(), "names no kube.user") {
		t.Fatalf("impersonation without a mapping: err = %v, want a refusal", err)
	}
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte(`rbac:
  impersonate:
    enabled: true
config:
  identities:
    unmapped: fallback
    fallback:
      kube: {user: vigil-viewer, groups: [view]}
    rules:
      - name: alice
        match: [U0123ALICE]
        kube: {user: alice@example.org, groups: [sre, oncall]}
      - name: oncall
        match: [usergroup:S0123ONCALL]
        kube: {user: oncall, groups: [oncall]}
      - name: ssh-only
        match: ["@bob:example.org"]
        ssh: {user: bob}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	objs := mustRender(t, "-f", values)
	role := find(objs, "ClusterRole", "vigil-impersonate")
	if role == nil {
		t.Fatalf("no ClusterRole vigil-impersonate in %q", kinds(objs))
	}
	names := map[string][]string{}
	for _, r := range get(role, "rules").([]any) {
		if v := toStrings(get(r, "verbs")); !slices.Equal(v, []string{"impersonate"}) {
			t.Errorf("rule %v grants %q, want impersonate only", r, v)
		}
		if g := toStrings(get(r, "apiGroups")); !slices.Equal(g, []string{""}) {
			t.Errorf("rule %v is for API groups %q", r, g)
		}
		res := toStrings(get(r, "resources"))
		if len(res) != 1 || (res[0] != "users" && res[0] != "groups") {
			t.Errorf("rule %v grants impersonating %q; want users or groups, by name", r, res)
			continue
		}
		if get(r, "resourceNames") == nil {
			t.Errorf("rule %v has no resourceNames: it would let vigil impersonate anyone", r)
		}
		names[res[0]] = toStrings(get(r, "resourceNames"))
	}
	if want := []string{"alice@example.org", "oncall", "vigil-viewer"}; !slices.Equal(names["users"], want) {
		t.Errorf("impersonable users = %q, want %q", names["users"], want)
	}
	if want := []string{"oncall", "sre", "view"}; !slices.Equal(names["groups"], want) {
		t.Errorf("impersonable groups = %q, want %q", names["groups"], want)
	}
	b := find(objs, "ClusterRoleBinding", "vigil-impersonate")
	if str(b, "roleRef", "name") != "vigil-impersonate" || str(b, "subjects", 0, "name") != "vigil" {
		t.Errorf("binding = %v, want vigil-impersonate bound to the vigil service account", b)
	}
	if get(find(objs, "Deployment", "vigil"), "spec", "template", "spec", "automountServiceAccountToken") != true {
		t.Error("the service account token is not mounted, so the role cannot be used")
	}
	if ids := get(vigilConfig(t, objs), "identities", "rules"); ids == nil {
		t.Error("config.identities does not reach vigil.yaml")
	}
	if _, err := render(t, "--set", "rbac.impersonate.enable=true"); err == nil || !strings.Contains(err.Error(), "enable") {
		t.Errorf("a misspelt rbac.impersonate key: err = %v", err)
	}
}
