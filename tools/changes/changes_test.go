package changes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func TestMerge(t *testing.T) {
	a := []Event{
		{At: ago(10 * time.Minute), Source: "journal", Kind: "unit_started", Subject: "x.service", Detail: "Finished x"},
		{At: ago(20 * time.Minute), Source: "journal", Kind: "unit_started", Subject: "x.service", Detail: "Finished   x"},
		{At: ago(30 * time.Minute), Source: "journal", Kind: "unit_started", Subject: "x.service", Detail: "Finished x"},
		{At: ago(7 * time.Hour), Source: "journal", Kind: "unit_failed", Subject: "old.service"},
		{At: now.Add(time.Minute), Source: "journal", Kind: "unit_failed", Subject: "future.service"},
	}
	b := []Event{{At: ago(15 * time.Minute), Source: "git:infra", Kind: "commit", Subject: "infra", Detail: "abc by bob: raise limits"}}
	got, omitted := Merge(ago(6*time.Hour), now, 10, a, b)
	if len(got) != 2 || omitted != 0 {
		t.Fatalf("merged = %+v", got)
	}
	if got[0].Kind != "unit_started" || got[0].Count != 3 || got[0].At != ago(30*time.Minute) || got[0].Until != ago(10*time.Minute) {
		t.Fatalf("merged duplicates = %+v, want one entry ×3 from 30m to 10m ago", got[0])
	}
	if got[1].Kind != "commit" {
		t.Fatalf("order = %+v", got)
	}
	var many []Event
	for i := range 30 {
		many = append(many, Event{At: ago(time.Duration(i) * time.Minute), Source: "s", Kind: "k", Subject: fmt.Sprint(i)})
	}
	got, omitted = Merge(ago(time.Hour), now, 5, many)
	if len(got) != 5 || omitted != 25 || got[0].Subject != "0" || got[4].Subject != "4" {
		t.Fatalf("capped = %+v, omitted %d; want the 5 newest", got, omitted)
	}
}

func TestParseHostFixture(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "host-debian.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := parseHost(string(raw))
	evs, _ := Merge(ago(6*time.Hour), now, 100, r.events)
	byKind := map[string][]Event{}
	for _, e := range evs {
		byKind[e.Kind] = append(byKind[e.Kind], e)
	}
	if f := byKind["unit_failed"]; len(f) != 1 || f[0].Subject != "nginx.service" || f[0].At != ago(5*time.Minute) || !strings.Contains(f[0].Detail, "result: failed") {
		t.Fatalf("unit_failed = %+v", f)
	}
	if up := byKind["package_upgrade"]; len(up) != 1 || up[0].Subject != "nginx:amd64" || up[0].At != ago(80*time.Minute-12*time.Second) ||
		up[0].Detail != "upgraded from 1.22.1-9 to 1.22.1-9+deb12u1" {
		t.Fatalf("dpkg upgrade (local time +0100) = %+v", up)
	}
	if len(byKind["package_remove"]) != 0 {
		t.Fatal("a removal outside the window was kept")
	}
	if s := byKind["unit_started"]; len(s) != 1 || s[0].Count != 3 {
		t.Fatalf("repeated timer runs = %+v, want one entry ×3", s)
	}
	if b := byKind["boot"]; len(b) != 1 || b[0].Source != "boot" || !strings.Contains(b[0].Detail, "Startup finished") {
		t.Fatalf("boots = %+v, want the journal's start-up entry only (the kernel's boot time is the same boot)", b)
	}
	for _, k := range []string{"shutdown", "oom_kill", "unit_restart_scheduled", "unit_reloaded", "unit_stopped", "package_install"} {
		if len(byKind[k]) != 1 {
			t.Errorf("%s: %+v", k, byKind[k])
		}
	}
	var js SourceStatus
	for _, s := range r.statuses {
		if s.Source == "journal" {
			js = s
		}
	}
	if js.Status != "partial" || js.Events != 10 {
		t.Fatalf("journal status = %+v, want partial (one bad line) with 10 events", js)
	}
}

// TestHostScriptIsAProvableRead holds the host script to policy: it must
// be classified read-only and bounded in both shells it may run in.
func TestHostScriptIsAProvableRead(t *testing.T) {
	for _, unit := range []string{"", "nginx.service"} {
		for _, d := range []command.Dialect{command.DialectBash, command.DialectPOSIX} {
			v := command.ClassifyAs(hostScript(6*time.Hour, unit), d)
			if !v.ReadOnly() || !v.Bounded || v.Network {
				t.Errorf("host script (unit %q, %s) = %+v", unit, d, v)
			}
		}
	}
	v := command.ClassifyAs(gitCommand(Repo{Name: "infra", Path: "/srv/it's"}, time.Hour), command.DialectBash)
	if !v.ReadOnly() || !v.Bounded || v.Network {
		t.Errorf("git command = %+v", v)
	}
}

// commit is one commit gitRepo makes.
type commit struct {
	msg string
	at  time.Time
}

// gitRepo creates a repository with commits at known times, in order.
func gitRepo(t *testing.T, commits ...commit) string {
	t.Helper()
	dir := t.TempDir()
	git := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), append([]string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}, env...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(nil, "init", "-q", "-b", "main")
	for _, c := range commits {
		msg, at := c.msg, c.at
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(msg), 0o600); err != nil {
			t.Fatal(err)
		}
		date := at.Format(time.RFC3339)
		env := []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date, "GIT_AUTHOR_NAME=Bob Ops", "GIT_AUTHOR_EMAIL=bob@example.org",
			"GIT_COMMITTER_NAME=Bob Ops", "GIT_COMMITTER_EMAIL=bob@example.org"}
		git(env, "add", "f")
		git(env, "commit", "-q", "-m", msg)
	}
	return dir
}

// fixtureHost answers the host script with a recorded output and runs
// everything on vigil's own machine (the git log) for real.
type fixtureHost struct {
	real    transport.Executor
	fixture string
	scripts []string
}

func (f *fixtureHost) Run(ctx context.Context, res inventory.Resource, spec transport.RunSpec, stdin io.Reader) (transport.ExecResult, error) {
	if res.ID == vigilHost.ID {
		return f.real.Run(ctx, res, spec, stdin)
	}
	f.scripts = append(f.scripts, spec.Command)
	return transport.ExecResult{Stdout: f.fixture}, nil
}

func testInventory(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.Parse([]byte(`resources:
  - {name: web1, kind: host, reach: local}
  - {name: nginx, kind: service, parent: web1, uid: nginx.service}
`))
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestTimelineFromTheJournalFixtureAndARealGitRepository(t *testing.T) {
	// Real commit times: git reads them relative to the real clock.
	real := time.Now().UTC().Truncate(time.Second)
	repo := gitRepo(t,
		commit{"initial config", real.Add(-30 * 24 * time.Hour)},
		commit{"raise nginx worker_connections", real.Add(-30 * time.Minute)},
	)
	raw, _ := os.ReadFile(filepath.Join("testdata", "host-debian.txt"))
	// Shift the fixture's clock (12:00Z) to now, so both sources share one.
	host := &fixtureHost{real: transport.NewRouter(testInventory(t), transport.RouterOptions{}), fixture: shift(t, string(raw), real.Sub(now))}
	tool := New(Config{Inventory: testInventory(t), Executor: host, GitRepos: []Repo{{Name: "infra", Path: repo}}, Now: func() time.Time { return real }})

	p, b := tool.Propose(json.RawMessage(`{"target":"web1"}`))
	if b != nil {
		t.Fatal(b)
	}
	if p.Target != "web1" || p.Command != hostScript(6*time.Hour, "") || tool.Spec().Kinds.KindOf("") != policy.KindRead {
		t.Fatalf("proposal = %+v", p)
	}
	// The gate must let it through as a bounded read, confined.
	s := policy.NewSessionState()
	s.Context.Add(policy.Resource{ID: "host:web1", Name: "web1"}, time.Now())
	s.FSM.OnToolSuccess(policy.KindResolve, "query", "")
	p.Kind = policy.KindRead
	dec := policy.NewGate(policy.Rules{}).Authorize(s, p.Action, policy.LevelControlled, policy.Requester{User: "alice", Operator: true}, time.Now())
	if !dec.Allow || dec.Execution.Confine == policy.ConfineNone {
		t.Fatalf("gate decision = %+v", dec)
	}
	p.Execution = dec.Execution
	r := tool.Execute(context.Background(), p)
	if !r.Envelope.OK {
		t.Fatalf("envelope = %s", r.Envelope.JSON())
	}
	var d struct {
		Events  []Event        `json:"events"`
		Sources []SourceStatus `json:"sources"`
	}
	raw2, _ := json.Marshal(r.Envelope.Data)
	if err := json.Unmarshal(raw2, &d); err != nil {
		t.Fatal(err)
	}
	var commits []Event
	for _, e := range d.Events {
		if e.Kind == "commit" {
			commits = append(commits, e)
		}
	}
	if len(commits) != 1 || commits[0].Source != "git:infra" || !strings.Contains(commits[0].Detail, "by Bob Ops: raise nginx worker_connections") ||
		!commits[0].At.Equal(real.Add(-30*time.Minute)) {
		t.Fatalf("commits = %+v, want the recent one only; sources %+v", commits, d.Sources)
	}
	if d.Events[0].Kind != "unit_failed" || d.Events[0].Subject != "nginx.service" {
		t.Fatalf("newest event = %+v, want nginx failing 5 minutes ago", d.Events[0])
	}
	for i := 1; i < len(d.Events); i++ {
		last := func(e Event) time.Time {
			if !e.Until.IsZero() {
				return e.Until
			}
			return e.At
		}
		if last(d.Events[i]).After(last(d.Events[i-1])) {
			t.Fatalf("not newest first at %d: %+v", i, d.Events)
		}
	}
	if !strings.Contains(r.Output, "git:infra") || !strings.Contains(r.Output, "nginx.service") {
		t.Errorf("trace output = %s", r.Output)
	}

	// A service target reads its host's journal for the unit only.
	p, b = tool.Propose(json.RawMessage(`{"target":"nginx","since":"2h"}`))
	if b != nil {
		t.Fatal(b)
	}
	if !strings.Contains(p.Command, " -u nginx.service ") || !strings.Contains(p.Command, "--since -120m") {
		t.Fatalf("service command = %s", p.Command)
	}
}

// shift moves every timestamp of the fixture by d.
func shift(t *testing.T, fixture string, d time.Duration) string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(fixture, "\n") {
		switch {
		case strings.HasPrefix(l, "btime "):
			var n int64
			fmt.Sscan(strings.TrimPrefix(l, "btime "), &n)
			l = fmt.Sprintf("btime %d", time.Unix(n, 0).Add(d).Unix())
		case strings.HasPrefix(l, "{"):
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil {
				var us int64
				if _, err := fmt.Sscan(fmt.Sprint(m["__REALTIME_TIMESTAMP"]), &us); err == nil {
					m["__REALTIME_TIMESTAMP"] = fmt.Sprint(time.UnixMicro(us).Add(d).UnixMicro())
					b, _ := json.Marshal(m)
					l = string(b)
				}
			}
		case len(l) > 19 && l[4] == '-' && l[10] == ' ':
			if at, err := time.Parse("2006-01-02 15:04:05", l[:19]); err == nil {
				l = at.Add(d).Format("2006-01-02 15:04:05") + l[19:]
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// TestHostScriptRunsHere runs the real script on this machine through the
// real local transport, under the execution policy decides: it must run to
// the end whatever this machine lacks (rpm, a journal).
func TestHostScriptRunsHere(t *testing.T) {
	inv := testInventory(t)
	x := transport.NewRouter(inv, transport.RouterOptions{})
	tool := New(Config{Inventory: inv, Executor: x})
	p, b := tool.Propose(json.RawMessage(`{"target":"web1","since":"30m"}`))
	if b != nil {
		t.Fatal(b)
	}
	p.Execution = policy.Execution{Confine: policy.ConfineBestEffort, Shell: command.DialectBash}
	r := tool.Execute(context.Background(), p)
	if !r.Envelope.OK || r.Sandbox == nil {
		t.Fatalf("envelope = %s (sandbox %v)", r.Envelope.JSON(), r.Sandbox)
	}
	raw, _ := json.Marshal(r.Envelope.Data)
	for _, src := range []string{`"source":"packages"`, `"source":"journal"`} {
		if !strings.Contains(string(raw), src) {
			t.Errorf("no %s status in %s", src, raw)
		}
	}
}

func TestArgumentsAndTargets(t *testing.T) {
	tool := New(Config{Inventory: testInventory(t)})
	for args, want := range map[string]string{
		`{}`:                              `"target": required`,
		`{"target":"web1","since":"8d"}`:  "longer than the 7d",
		`{"target":"web1","since":"6"}`:   "want a number and a unit",
		`{"target":"web1\nx"}`:            "single line",
		`{"target":"web2"}`:               "did you mean web1",
		`{"target":"checkout"}`:           "neither an inventory resource nor a known Kubernetes object",
		`{"target":"web1","window":"6h"}`: "unknown field",
	} {
		_, b := tool.Propose(json.RawMessage(args))
		if b == nil || !strings.Contains(b.Message, want) {
			t.Errorf("%s: block = %+v, want %q", args, b, want)
		}
	}
}
