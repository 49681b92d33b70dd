package runbook

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/policy"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const checkoutRunbook = `---
title: Checkout API slow
match: {alertname: CheckoutLatencyHigh, service: "checkout*"}
keywords: [checkout, latency, upstream, pool]
resources: [checkout-api]
---
## Symptoms
p99 latency over 2s, upstream timed out in the nginx log.

## Fix
Raise the connection pool; restart the deployment.
`

const diskRunbook = `---
title: Disk full on a node
match: {alertname: NodeDiskFull}
keywords: [disk, space, full, df]
---
Find the biggest directories with du, rotate the logs.
`

const nginxRunbook = `---
title: Nginx returns 502
keywords: [nginx, "502", upstream, gateway]
resources: [web1]
---
Check that the upstream is up; the error log names the upstream that timed out.
`

const genericAlertRunbook = `---
title: Any latency alert
match: {alertname: "*Latency*"}
---
Look at the service's dashboards first.
`

func library(t *testing.T) (*Library, string) {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "checkout-slow.md", checkoutRunbook)
	write(t, dir, "disk-full.md", diskRunbook)
	write(t, dir, "web/nginx-502.md", nginxRunbook)
	write(t, dir, "latency.md", genericAlertRunbook)
	write(t, dir, "README.txt", "not a runbook")
	write(t, dir, "broken.md", "no front matter here")
	l, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l, dir
}

func paths(ms []Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Path
	}
	return out
}

func TestParse(t *testing.T) {
	rb, err := Parse("x.md", []byte(strings.ReplaceAll(checkoutRunbook, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	if rb.Title != "Checkout API slow" || rb.Match["service"] != "checkout*" || len(rb.Keywords) != 4 ||
		rb.Resources[0] != "checkout-api" || !strings.HasPrefix(rb.Body, "## Symptoms") {
		t.Fatalf("parsed %+v", rb)
	}
	for _, tc := range []struct {
		name, content string
		want          error
		mention       string
	}{
		{"no front matter", "# Title\n", ErrNoFrontMatter, ""},
		{"unclosed", "---\ntitle: x\n", ErrNoFrontMatter, ""},
		{"unknown key", "---\ntitle: x\nowner: me\n---\n", ErrInvalid, "owner"},
		{"no title", "---\nkeywords: [a]\n---\nbody", ErrInvalid, "no title"},
		{"bad pattern", "---\ntitle: x\nmatch: {alertname: \"[\"}\n---\n", ErrInvalid, "match.alertname"},
		{"wrong type", "---\ntitle: x\nkeywords: 3\n---\n", ErrInvalid, "keywords"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.md", []byte(tc.content))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "bad.md") || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("err = %v, want %v naming the file and %q", err, tc.want, tc.mention)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{checkoutRunbook, diskRunbook, "---\n---\n", "---\ntitle: x\n---", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rb, err := Parse("f.md", data)
		if err == nil && rb.Title == "" {
			t.Fatal("a runbook without a title parsed")
		}
	})
}

// An alert's runbook_url selects the file it points at, wherever the URL
// is hosted; then labels (the most specific first); then words.
func TestForAlert(t *testing.T) {
	l, dir := library(t)
	labels := map[string]string{"alertname": "CheckoutLatencyHigh", "service": "checkout-api", "severity": "page"}
	for _, tc := range []struct {
		name  string
		url   string
		first string
	}{
		{"labels alone", "", "checkout-slow.md"},
		{"git URL of another file", "https://git.example.org/ops/runbooks/-/blob/main/disk-full.md#steps", "disk-full.md"},
		{"nested file by URL", "https://wiki.example.org/runbooks/web/nginx-502.md", "web/nginx-502.md"},
		{"absolute path in the directory", filepath.Join(dir, "disk-full.md"), "disk-full.md"},
		{"file URL", "file://" + filepath.Join(dir, "disk-full.md"), "disk-full.md"},
		{"relative name", "disk-full.md", "disk-full.md"},
		{"URL of a file not in the directory", "https://example.org/other.md", "checkout-slow.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := l.ForAlert(labels, tc.url, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) == 0 || ms[0].Path != tc.first {
				t.Fatalf("selected %v, want %s first", paths(ms), tc.first)
			}
		})
	}
	ms, _ := l.ForAlert(labels, "", 0)
	if got := paths(ms); len(got) < 2 || got[0] != "checkout-slow.md" || got[1] != "latency.md" {
		t.Fatalf("label matches %v, want the two-label runbook before the one-label pattern", got)
	}
	if !strings.Contains(ms[0].Why, "labels alertname, service") {
		t.Fatalf("why = %q", ms[0].Why)
	}
	// A label that does not match rules the runbook out by labels.
	ms, _ = l.ForAlert(map[string]string{"alertname": "CheckoutLatencyHigh", "service": "cart"}, "", 0)
	for _, m := range ms {
		if m.Path == "checkout-slow.md" && strings.Contains(m.Why, "labels") {
			t.Fatalf("matched by labels with service=cart: %+v", m)
		}
	}
	if ms, _ := l.ForAlert(map[string]string{"alertname": "NodeDiskFull"}, "", 1); len(ms) != 1 || ms[0].Path != "disk-full.md" {
		t.Fatalf("limit 1: %v", paths(ms))
	}
}

func TestForQuestion(t *testing.T) {
	l, _ := library(t)
	for _, tc := range []struct {
		q         string
		resources []string
		first     string
		none      bool
	}{
		{q: "why is checkout so slow, p99 latency is 3s", first: "checkout-slow.md"},
		{q: "the disk on delly is full", first: "disk-full.md"},
		{q: "nginx gives 502 bad gateway", first: "web/nginx-502.md"},
		{q: "web1 is slow", resources: []string{"web1"}, first: "web/nginx-502.md"},
		{q: "what time is it", none: true},
		// One body word alone is not enough.
		{q: "rotate", none: true},
	} {
		t.Run(tc.q, func(t *testing.T) {
			ms, err := l.ForQuestion(tc.q, tc.resources, 0)
			if err != nil {
				t.Fatal(err)
			}
			if tc.none {
				if len(ms) != 0 {
					t.Fatalf("offered %v for an unrelated question", paths(ms))
				}
				return
			}
			if len(ms) == 0 || ms[0].Path != tc.first {
				t.Fatalf("offered %v, want %s first", paths(ms), tc.first)
			}
		})
	}
	offer := l.Offer(mustSelect(t, l, "why is checkout slow"))
	for _, want := range []string{"cite its path", filepath.ToSlash(filepath.Join(l.Dir(), "checkout-slow.md")), "Raise the connection pool"} {
		if !strings.Contains(offer, want) {
			t.Fatalf("offer lacks %q:\n%s", want, offer)
		}
	}
}

func mustSelect(t *testing.T, l *Library, q string) []Match {
	t.Helper()
	ms, err := l.ForQuestion(q, nil, 0)
	if err != nil || len(ms) == 0 {
		t.Fatalf("no match for %q: %v", q, err)
	}
	return ms
}

// Files added, changed or broken after Open are seen at the next selection.
func TestLibrarySeesChanges(t *testing.T) {
	l, dir := library(t)
	if ms, _ := l.ForQuestion("certificate expired on the ingress", nil, 0); len(ms) != 0 {
		t.Fatalf("matched before the runbook exists: %v", paths(ms))
	}
	write(t, dir, "tls.md", "---\ntitle: Certificate expired\nkeywords: [certificate, tls, ingress]\n---\nRenew it.\n")
	if ms, _ := l.ForQuestion("certificate expired on the ingress", nil, 0); len(ms) == 0 || ms[0].Path != "tls.md" {
		t.Fatalf("new runbook not found: %v", paths(ms))
	}
	write(t, dir, "tls.md", "---\ntitle: [broken\n---\n")
	if ms, _ := l.ForQuestion("certificate expired on the ingress", nil, 0); len(ms) != 0 {
		t.Fatalf("a runbook that no longer parses is still offered: %v", paths(ms))
	}
	all, _ := l.All()
	for _, rb := range all {
		if rb.Path == "broken.md" || rb.Path == "README.txt" {
			t.Fatalf("%s listed", rb.Path)
		}
	}
}

func TestOpenNeedsADirectory(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Fatal("opened a missing directory")
	}
}

func TestSave(t *testing.T) {
	l, dir := library(t)
	content, _ := Render(FrontMatter{Title: "Cache cold after deploy", Keywords: []string{"cache", "cold"}}, "Warm it.")
	for _, bad := range []string{"../x.md", "sub/x.md", "X.md", "x.txt", ".x.md", "", "x .md"} {
		if err := l.Save(bad, content); !errors.Is(err, ErrBadPath) {
			t.Fatalf("Save(%q) = %v, want ErrBadPath", bad, err)
		}
	}
	if err := l.Save("x.md", "not a runbook"); !errors.Is(err, ErrNoFrontMatter) {
		t.Fatalf("invalid content saved: %v", err)
	}
	if err := l.Save("cache-cold.md", content); err != nil {
		t.Fatal(err)
	}
	if err := l.Save("cache-cold.md", content); !errors.Is(err, ErrExists) {
		t.Fatalf("second save = %v, want ErrExists", err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "cache-cold.md"))
	if string(got) != content {
		t.Fatalf("saved %q", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".draft-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if ms, _ := l.ForQuestion("the cache is cold", nil, 0); len(ms) == 0 || ms[0].Path != "cache-cold.md" {
		t.Fatalf("saved runbook not found: %v", paths(ms))
	}
}

func resolvedRun() *agent.RunRecord {
	return &agent.RunRecord{
		ID: "run-1", Question: "why is @checkout-api slow?", Answered: true,
		Answer: "The checkout API is slow because its database connection pool is exhausted (64/64 busy).\n\n" +
			"I restarted it; latency is back to 80ms.",
		Wrote: true, Verified: true,
		Steps: []agent.Step{
			{CallID: "c1", Tool: "query", Action: "get", Kind: policy.KindResolve, Target: "checkout-api", Command: "get checkout-api", OK: true},
			{CallID: "c2", Tool: "read", Action: "logs", Kind: policy.KindRead, Target: "checkout-api", Command: "kubectl logs deploy/checkout-api --tail 200", OK: true},
			{CallID: "c3", Tool: "read", Action: "exec", Kind: policy.KindRead, Target: "checkout-api", Command: "cat /nope", OK: false, Code: "EXECUTION_FAILED"},
			{CallID: "c4", Tool: "control", Action: "command", Kind: policy.KindWrite, Target: "checkout-api", Command: "kubectl rollout restart deploy/checkout-api", OK: true},
			{CallID: "c5", Tool: "read", Action: "exec", Kind: policy.KindRead, Target: "checkout-api", Command: "curl -s -o /dev/null -w %{time_total} http://checkout/health", OK: true},
		},
	}
}

func TestDraft(t *testing.T) {
	l, _ := library(t)
	known := []facts.Fact{
		{Key: "errors checkout-api kubectl logs", Category: facts.Error, Value: `12× "pool exhausted: 64/64 busy"`, Source: "c2"},
		{Key: "errors other", Category: facts.Error, Value: "not this run", Source: "zz"},
	}
	d, err := l.Draft(resolvedRun(), known, time.Date(2025, 3, 4, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "why-is-checkout-api-slow.md" || d.Title != "Why is checkout-api slow" {
		t.Fatalf("name %q title %q", d.Name, d.Title)
	}
	rb, err := Parse(d.Name, []byte(d.Content))
	if err != nil {
		t.Fatalf("draft does not parse: %v\n%s", err, d.Content)
	}
	if rb.Resources[0] != "checkout-api" || !strings.Contains(rb.Source, "run-1") {
		t.Fatalf("front matter %+v", rb.FrontMatter)
	}
	sections := []string{"## Symptoms", `pool exhausted: 64/64 busy`, "## Evidence", "1. `query get` on `checkout-api`",
		"2. `read logs` on `checkout-api`: `kubectl logs deploy/checkout-api --tail 200`", "## Cause",
		"because its database connection pool is exhausted", "## Fix", "kubectl rollout restart deploy/checkout-api",
		"## Verification", "http://checkout/health", "## Answer given"}
	last := -1
	for _, s := range sections {
		i := strings.Index(d.Content, s)
		if i < 0 || i < last {
			t.Fatalf("draft lacks %q, or has it out of order:\n%s", s, d.Content)
		}
		last = i
	}
	for _, not := range []string{"not this run", "cat /nope"} {
		if strings.Contains(d.Content, not) {
			t.Fatalf("draft holds %q:\n%s", not, d.Content)
		}
	}
	if !strings.Contains(d.Summary, "Cause: The checkout API is slow because") || !strings.Contains(d.Summary, "rollout restart") {
		t.Fatalf("summary %q", d.Summary)
	}
	// The name is free at drafting time.
	if err := l.Save(d.Name, d.Content); err != nil {
		t.Fatal(err)
	}
	d2, _ := l.Draft(resolvedRun(), nil, time.Now())
	if d2.Name != "why-is-checkout-api-slow-2.md" {
		t.Fatalf("second draft name %q", d2.Name)
	}
	// The saved runbook answers a later question.
	if ms, _ := l.ForQuestion("checkout-api slow again", nil, 0); len(ms) == 0 || ms[0].Path != d.Name {
		t.Fatalf("later question offered %v", paths(ms))
	}
}

func TestEligible(t *testing.T) {
	ok := resolvedRun()
	noCause := resolvedRun()
	noCause.Answer = "Everything looks fine now."
	unverified := resolvedRun()
	unverified.Verified = false
	noAnswer := resolvedRun()
	noAnswer.Answered = false
	readOnly := resolvedRun()
	readOnly.Wrote, readOnly.Verified = false, false
	for _, tc := range []struct {
		rec  *agent.RunRecord
		want bool
	}{{ok, true}, {noCause, false}, {unverified, false}, {noAnswer, false}, {readOnly, true}, {nil, false}} {
		if got, why := Eligible(tc.rec); got != tc.want {
			t.Errorf("Eligible = %v (%s), want %v", got, why, tc.want)
		}
	}
	for _, s := range []string{"The root cause is a full disk.", "It failed due to an expired certificate.",
		"The pods crash because the config map is missing.", "The issue was a bad deploy."} {
		if !NamesCause(s) {
			t.Errorf("NamesCause(%q) = false", s)
		}
	}
	for _, s := range []string{"Disk usage is 45%.", "I restarted nginx.", "Load is low: 0.10."} {
		if NamesCause(s) {
			t.Errorf("NamesCause(%q) = true", s)
		}
	}
}
