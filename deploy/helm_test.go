package deploy

// The chart is linted and rendered by Helm's own packages (the ones `helm
// lint` and `helm template` run), linked into this test instead of a helm
// binary built for it: the library shares vigil's Kubernetes packages, so a
// cold `make test` compiles about 60 packages for it instead of building
// the whole helm command (about four minutes on 2 cores).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
)

// The release `helm template vigil helm/vigil` renders.
const (
	releaseName      = "vigil"
	releaseNamespace = "default"
)

// setValues parses helm's command-line value flags as helm does: values
// files (-f, in order, each merged over the ones before), then --set.
func setValues(args []string) (map[string]any, error) {
	vals := map[string]any{}
	for i := 0; i < len(args); i += 2 {
		if i+1 == len(args) {
			return nil, fmt.Errorf("helm flags: %q has no value", args[i])
		}
		switch flag, v := args[i], args[i+1]; flag {
		case "-f", "--values":
			file, err := chartutil.ReadValuesFile(v)
			if err != nil {
				return nil, fmt.Errorf("-f %s: %w", v, err)
			}
			vals = mergeValues(vals, file)
		case "--set":
			if err := strvals.ParseInto(v, vals); err != nil {
				return nil, fmt.Errorf("--set %s: %w", v, err)
			}
		default:
			return nil, fmt.Errorf("helm flags: only -f FILE and --set KEY=VALUE are supported here, got %q", flag)
		}
	}
	return vals, nil
}

// mergeValues merges over into base, recursing into maps; over wins.
func mergeValues(base, over map[string]any) map[string]any {
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := base[k].(map[string]any); ok {
				base[k] = mergeValues(bm, vm)
				continue
			}
		}
		base[k] = v
	}
	return base
}

// helmTemplate renders the chart as `helm template vigil helm/vigil ARGS`
// does: values from the chart and --set, checked against
// values.schema.json, then every template except the notes and partials,
// in name order.
func helmTemplate(args ...string) (string, error) {
	vals, err := setValues(args)
	if err != nil {
		return "", err
	}
	ch, err := loader.Load(chart)
	if err != nil {
		return "", err
	}
	opts := chartutil.ReleaseOptions{Name: releaseName, Namespace: releaseNamespace, Revision: 1, IsInstall: true}
	rv, err := chartutil.ToRenderValues(ch, vals, opts, chartutil.DefaultCapabilities.Copy())
	if err != nil {
		return "", err
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var out strings.Builder
	for _, name := range names {
		body := strings.TrimSpace(files[name])
		if body == "" || strings.HasSuffix(name, "NOTES.txt") {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", name, body)
	}
	return out.String(), nil
}

// helmLint lints the chart as `helm lint --strict helm/vigil ARGS` does:
// any warning or error fails.
func helmLint(args ...string) error { return helmLintDir(chart, args...) }

func helmLintDir(dir string, args ...string) error {
	vals, err := setValues(args)
	if err != nil {
		return err
	}
	linter := lint.AllWithKubeVersionAndSchemaValidation(dir, vals, releaseNamespace, nil, false)
	var errs []error
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			errs = append(errs, fmt.Errorf("%s: %w", m.Path, m.Err))
		}
	}
	return errors.Join(errs...)
}

// The chart lints clean, as `helm lint --strict` wants it, with the default
// values and with the optional parts switched on.
func TestHelmLintStrict(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--set", "redis.enabled=true", "--set", "serviceMonitor.enabled=true"},
		{"--set", "rbac.kubeRead.enabled=true"},
	} {
		if err := helmLint(args...); err != nil {
			t.Errorf("helm lint --strict %q:\n%v", args, err)
		}
	}
}

// The in-test lint is strict, as --strict is: a value the schema refuses
// (an error) fails it, and so does a chart whose only finding is a warning
// (a copy of the chart with an object whose name is not a DNS name,
// which helm lint reports as a warning).
func TestHelmLintFailsOnWarningsAndErrors(t *testing.T) {
	if err := helmLint("--set", "redis.enabeld=true"); err == nil || !strings.Contains(err.Error(), "enabeld") {
		t.Errorf("helm lint with a misspelt value: err = %v, want a failure naming enabeld", err)
	}
	if err := helmLint("--sett", "x=1"); err == nil {
		t.Error("an unsupported flag was accepted")
	}
	dir := filepath.Join(t.TempDir(), "vigil")
	if err := os.CopyFS(dir, os.DirFS(chart)); err != nil {
		t.Fatal(err)
	}
	bad := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_DNS_Name\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-bad.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err := helmLintDir(dir)
	if err == nil || !strings.Contains(err.Error(), "Not_A_DNS_Name") {
		t.Fatalf("helm lint of a chart with an invalid object name: err = %v, want a warning naming Not_A_DNS_Name", err)
	}
}
