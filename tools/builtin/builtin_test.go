package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
	"github.com/vigilops/vigil/tools/transport/transporttest"
)

// propose proposes a call to tool the way the agent does: through a
// registry, which stamps the tool's declared kind.
func propose(t *testing.T, tool tools.Tool, args string) (tools.Proposal, *policy.Block) {
	t.Helper()
	r, err := tools.NewRegistry(tool)
	if err != nil {
		t.Fatal(err)
	}
	return r.Propose(tool.Spec().Name, json.RawMessage(args))
}

// mustPropose proposes and fails the test on a block.
func mustPropose(t *testing.T, tool tools.Tool, args string) tools.Proposal {
	t.Helper()
	p, b := propose(t, tool, args)
	if b != nil {
		t.Fatalf("Propose(%s): %v", args, b)
	}
	return authorized(p)
}

// authorized gives p the execution policy would: writes run unconfined in
// the classified shell, everything else in a best-effort sandbox (the
// tests' routers have no sandbox launcher unless they say so).
func authorized(p tools.Proposal) tools.Proposal {
	p.Execution = policy.Execution{Shell: p.Dialect, Confine: policy.ConfineBestEffort}
	if p.Kind == policy.KindWrite {
		p.Execution.Confine, p.Execution.Why = policy.ConfineNone, "a change runs unconfined"
	}
	return p
}

// dataOf decodes an envelope's data into a generic map.
func dataOf(t *testing.T, e tools.Envelope) map[string]any {
	t.Helper()
	b, err := json.Marshal(e.Data)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("data %s: %v", b, err)
	}
	return m
}

type proposeCase struct {
	name    string
	args    string
	kind    policy.Kind
	target  string
	command string
	runOn   string // for tools with a plan: where the command runs
	code    policy.Code
	msg     string
}

func checkProposal(t *testing.T, tc proposeCase, p tools.Proposal, b *policy.Block) {
	t.Helper()
	if tc.code != "" {
		if b == nil || b.Code != tc.code {
			t.Fatalf("block = %v, want %s", b, tc.code)
		}
		if !strings.Contains(b.Message, tc.msg) {
			t.Errorf("message = %q, want it to contain %q", b.Message, tc.msg)
		}
		return
	}
	if b != nil {
		t.Fatalf("unexpected block: %v", b)
	}
	if p.Kind != tc.kind || p.Target != tc.target || p.Command != tc.command {
		t.Errorf("proposal = kind %s, target %q, command %q\nwant kind %s, target %q, command %q",
			p.Kind, p.Target, p.Command, tc.kind, tc.target, tc.command)
	}
	if p.Summary == "" {
		t.Error("empty summary")
	}
}

func TestReadPropose(t *testing.T) {
	inv := loadExample(t)
	tool := NewReadTool(inv, nil)
	tests := []proposeCase{
		{name: "exec", args: `{"action":"exec","target":"delly","command":"uname -a"}`,
			kind: policy.KindRead, target: "delly", command: "uname -a", runOn: "delly"},
		{name: "file quotes a hostile path", args: `{"action":"file","target":"media","path":"/tmp/x'; rm -rf / #"}`,
			kind: policy.KindRead, target: "media", command: `head -n 200 '/tmp/x'\''; rm -rf / #'`, runOn: "media-server"},
		{name: "tail", args: `{"action":"tail","target":"delly","path":"/var/log/syslog","lines":50}`,
			kind: policy.KindRead, target: "delly", command: "tail -n 50 /var/log/syslog", runOn: "delly"},
		{name: "find", args: `{"action":"find","target":"delly","path":"/etc","command":"*.conf"}`,
			kind: policy.KindRead, target: "delly", command: "find /etc -maxdepth 3 -name '*.conf'", runOn: "delly"},
		{name: "find everything", args: `{"action":"find","target":"delly","path":"/etc/pve"}`,
			kind: policy.KindRead, target: "delly", command: "find /etc/pve -maxdepth 3", runOn: "delly"},
		{name: "journal", args: `{"action":"logs","target":"delly","command":"nginx.service","since":"2h"}`,
			kind: policy.KindRead, target: "delly", command: "journalctl --no-pager -n 200 -u nginx.service --since -2h", runOn: "delly"},
		{name: "docker logs run on the host", args: `{"action":"logs","target":"jellyfin","lines":20,"since":"1d"}`,
			kind: policy.KindRead, target: "jellyfin", command: "docker logs --tail 20 --since 24h jellyfin 2>&1", runOn: "media-server"},
		{name: "unknown target", args: `{"action":"exec","target":"jelyfin","command":"ls"}`,
			code: policy.CodeNotFound, msg: `did you mean jellyfin?`},
		{name: "exec needs command", args: `{"action":"exec","target":"delly"}`,
			code: policy.CodeInvalidInput, msg: `field "command": required for action exec`},
		{name: "relative path", args: `{"action":"file","target":"delly","path":"etc/hosts"}`,
			code: policy.CodeInvalidInput, msg: `field "path": must be an absolute path`},
		{name: "path with newline", args: `{"action":"tail","target":"delly","path":"/a\nb"}`,
			code: policy.CodeInvalidInput, msg: `field "path": must be a single line`},
		{name: "find pattern with slash", args: `{"action":"find","target":"delly","path":"/etc","command":"a/b"}`,
			code: policy.CodeInvalidInput, msg: `field "command": for find`},
		{name: "lines on exec", args: `{"action":"exec","target":"delly","command":"ls","lines":5}`,
			code: policy.CodeInvalidInput, msg: `field "lines": not used by action exec`},
		{name: "lines too many", args: `{"action":"tail","target":"delly","path":"/x","lines":99999}`,
			code: policy.CodeInvalidInput, msg: `field "lines": must be between 1 and 5000`},
		{name: "bad since", args: `{"action":"logs","target":"delly","since":"yesterday; reboot"}`,
			code: policy.CodeInvalidInput, msg: `field "since"`},
		{name: "unit with shell", args: `{"action":"logs","target":"delly","command":"nginx; reboot"}`,
			code: policy.CodeInvalidInput, msg: `field "command": for logs`},
		{name: "unknown action", args: `{"action":"write","target":"delly"}`,
			code: policy.CodeInvalidInput, msg: `field "action": want one of exec|file|find|tail|logs`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, b := propose(t, tool, tc.args)
			checkProposal(t, tc, p, b)
			if b == nil {
				pl, _ := (&ReadTool{inv: inv}).plan(p.Args.(ReadArgs))
				if pl.runOn.Name != tc.runOn {
					t.Errorf("runs on %s, want %s", pl.runOn.Name, tc.runOn)
				}
			}
		})
	}
}

// localTools builds a tool set over the default inventory and a real router.
func localRouter() (*inventory.Inventory, *transport.Router) {
	inv := inventory.Default()
	return inv, transport.NewRouter(inv, transport.RouterOptions{})
}

func TestReadExecuteLocal(t *testing.T) {
	inv, x := localRouter()
	tool := NewReadTool(inv, x)
	dir := t.TempDir()
	file := filepath.Join(dir, "it's a file.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }

	tests := []struct {
		name, args, want string
	}{
		{"exec", `{"action":"exec","target":"localhost","command":"uname -a"}`, "Linux"},
		{"file", `{"action":"file","target":"localhost","path":` + q(file) + `,"lines":2}`, "one\ntwo\n"},
		{"tail", `{"action":"tail","target":"localhost","path":` + q(file) + `,"lines":1}`, "three\n"},
		{"find", `{"action":"find","target":"localhost","path":` + q(dir) + `,"command":"*.txt"}`, file + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPropose(t, tool, tt.args)
			r := tool.Execute(t.Context(), p)
			if !r.Envelope.OK {
				t.Fatalf("envelope = %s", r.Envelope.JSON())
			}
			d := dataOf(t, r.Envelope)
			out, _ := d["output"].(string)
			if tt.name == "exec" {
				if !strings.HasPrefix(out, tt.want) {
					t.Errorf("output = %q, want prefix %q", out, tt.want)
				}
			} else if out != tt.want {
				t.Errorf("output = %q, want %q", out, tt.want)
			}
			if d["target"] != "localhost" || d["command"] != p.Command || d["exit_code"] != 0.0 || d["truncated"] != false {
				t.Errorf("data = %v", d)
			}
			if r.Output != out {
				t.Errorf("Result.Output = %q, want the output", r.Output)
			}
		})
	}
}

func TestReadExecuteFailureKeepsOutput(t *testing.T) {
	inv, x := localRouter()
	tool := NewReadTool(inv, x)
	p := mustPropose(t, tool, `{"action":"exec","target":"localhost","command":"echo partial; echo 'no such thing' >&2; exit 2"}`)
	r := tool.Execute(t.Context(), p)
	e := r.Envelope
	if e.OK || e.Error == nil || e.Error.Code != policy.CodeExecutionFailed || !e.Error.Failed {
		t.Fatalf("envelope = %s", e.JSON())
	}
	if !strings.Contains(e.Error.Message, "status 2: no such thing") || e.Error.Details["exit_code"] != 2 {
		t.Errorf("error = %+v", e.Error)
	}
	if d := dataOf(t, e); d["output"] != "partial\n" || d["exit_code"] != 2.0 {
		t.Errorf("data = %v, want the output still included", d)
	}
}

func TestExecuteRefusesAlteredProposal(t *testing.T) {
	inv, x := localRouter()
	tool := NewReadTool(inv, x)
	p := mustPropose(t, tool, `{"action":"file","target":"localhost","path":"/etc/hostname"}`)
	p.Command = "rm -rf /tmp/nothing"
	r := tool.Execute(t.Context(), p)
	if r.Envelope.OK || r.Envelope.Error.Code != policy.CodeExecutionFailed || !strings.Contains(r.Envelope.Error.Message, "did not make") {
		t.Fatalf("altered proposal ran: %s", r.Envelope.JSON())
	}
	r = tool.Execute(t.Context(), tools.Proposal{Args: "not args"})
	if r.Envelope.OK {
		t.Fatal("proposal with foreign args ran")
	}
}

func TestControlPropose(t *testing.T) {
	inv := loadExample(t)
	tool := NewControlTool(inv, nil)
	w := policy.KindWrite
	tests := []proposeCase{
		{name: "lxc restart reboots on the node", args: `{"action":"guest","target":"media-server","operation":"restart"}`,
			kind: w, target: "media-server", command: "pct reboot 141", runOn: "delly"},
		{name: "lxc by ID", args: `{"action":"guest","target":"lxc:delly:141","operation":"start"}`,
			kind: w, target: "lxc:delly:141", command: "pct start 141", runOn: "delly"},
		{name: "vm shutdown", args: `{"action":"guest","target":"builder","operation":"shutdown"}`,
			kind: w, target: "builder", command: "qm shutdown 203", runOn: "delly"},
		{name: "docker stop on its host", args: `{"action":"guest","target":"jellyfin","operation":"stop"}`,
			kind: w, target: "jellyfin", command: "docker stop jellyfin", runOn: "media-server"},
		{name: "docker reboot restarts", args: `{"action":"guest","target":"jellyfin","operation":"reboot"}`,
			kind: w, target: "jellyfin", command: "docker restart jellyfin", runOn: "media-server"},
		{name: "service", args: `{"action":"service","target":"media-server","operation":"restart","service":"docker.service"}`,
			kind: w, target: "media-server", command: "systemctl restart docker.service", runOn: "media-server"},
		{name: "command", args: `{"action":"command","target":"delly","command":"apt-get update"}`,
			kind: w, target: "delly", command: "apt-get update", runOn: "delly"},
		{name: "guest on a node", args: `{"action":"guest","target":"delly","operation":"reboot"}`,
			code: policy.CodeInvalidInput, msg: "guest control applies to lxc, vm and docker_container"},
		{name: "service shutdown", args: `{"action":"service","target":"delly","operation":"shutdown","service":"nginx"}`,
			code: policy.CodeInvalidInput, msg: "started, stopped or restarted"},
		{name: "hostile service", args: `{"action":"service","target":"delly","operation":"stop","service":"nginx; rm -rf /"}`,
			code: policy.CodeInvalidInput, msg: `field "service"`},
		{name: "service without unit", args: `{"action":"service","target":"delly","operation":"stop"}`,
			code: policy.CodeInvalidInput, msg: `field "service": required`},
		{name: "guest without operation", args: `{"action":"guest","target":"builder"}`,
			code: policy.CodeInvalidInput, msg: `field "operation": required`},
		{name: "bad operation", args: `{"action":"guest","target":"builder","operation":"destroy"}`,
			code: policy.CodeInvalidInput, msg: `field "operation": want one of start|stop|restart|shutdown|reboot`},
		{name: "command with operation", args: `{"action":"command","target":"delly","command":"x","operation":"stop"}`,
			code: policy.CodeInvalidInput, msg: `field "operation": not used`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, b := propose(t, tool, tc.args)
			checkProposal(t, tc, p, b)
			if b == nil {
				pl, _ := (&ControlTool{inv: inv}).plan(p.Args.(ControlArgs))
				if pl.runOn.Name != tc.runOn {
					t.Errorf("runs on %s, want %s", pl.runOn.Name, tc.runOn)
				}
			}
		})
	}
}

func TestControlExecute(t *testing.T) {
	inv, x := localRouter()
	tool := NewControlTool(inv, x)
	dir := t.TempDir()
	args, _ := json.Marshal(ControlArgs{Action: ControlCommand, Target: "localhost", Command: "cd " + transport.ShellQuote(dir) + " && echo made > made-by-control"})
	r := tool.Execute(t.Context(), mustPropose(t, tool, string(args)))
	if !r.Envelope.OK {
		t.Fatalf("envelope = %s", r.Envelope.JSON())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made-by-control")); err != nil || string(b) != "made\n" {
		t.Errorf("file = %q, %v", b, err)
	}

	// A guest operation runs the manager on the guest's host; a stand-in pct
	// on PATH reports what it was asked.
	rinv := transporttest.NestedInventory(t)
	tool = NewControlTool(rinv, transport.NewRouter(rinv, transport.RouterOptions{LocalEnv: transporttest.FakeManagers(t)}))
	r = tool.Execute(t.Context(), mustPropose(t, tool, `{"action":"guest","target":"media-server","operation":"stop"}`))
	if d := dataOf(t, r.Envelope); !r.Envelope.OK || d["output"] != "pct stop 141\n" {
		t.Errorf("guest stop = %s", r.Envelope.JSON())
	}
}

func TestFileEdit(t *testing.T) {
	inv, x := localRouter()
	tool := NewFileEditTool(inv, x)
	dir := t.TempDir()
	path := filepath.Join(dir, "app.conf")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }

	p := mustPropose(t, tool, `{"action":"write","target":"localhost","path":`+q(path)+`,"content":"new=1\n"}`)
	if p.Kind != policy.KindWrite || p.Command != "write 6 bytes to "+path || !strings.Contains(p.Summary, "6 bytes") {
		t.Errorf("write proposal = %+v", p)
	}
	if r := tool.Execute(t.Context(), p); !r.Envelope.OK {
		t.Fatalf("write: %s", r.Envelope.JSON())
	}
	fi, err := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "new=1\n" || err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after write: content %q, mode %v, err %v", b, fi.Mode(), err)
	}

	p = mustPropose(t, tool, `{"action":"append","target":"localhost","path":`+q(path)+`,"content":"more=2\n"}`)
	if p.Kind != policy.KindWrite || p.Command != "append 7 bytes to "+path {
		t.Errorf("append proposal = %+v", p.Action)
	}
	if r := tool.Execute(t.Context(), p); !r.Envelope.OK {
		t.Fatalf("append: %s", r.Envelope.JSON())
	}

	p = mustPropose(t, tool, `{"action":"read","target":"localhost","path":`+q(path)+`}`)
	if p.Kind != policy.KindRead || p.Command != "cat "+path {
		t.Errorf("read proposal = %+v", p.Action)
	}
	r := tool.Execute(t.Context(), p)
	if d := dataOf(t, r.Envelope); d["output"] != "new=1\nmore=2\n" {
		t.Errorf("read back = %s", r.Envelope.JSON())
	}

	created := filepath.Join(dir, "new file")
	r = tool.Execute(t.Context(), mustPropose(t, tool, `{"action":"write","target":"localhost","path":`+q(created)+`,"content":"x"}`))
	if d := dataOf(t, r.Envelope); d["created"] != true {
		t.Errorf("create = %s", r.Envelope.JSON())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("temporary files left behind: %v", entries)
	}

	for _, bad := range []string{
		`{"action":"write","target":"localhost","path":"/tmp/x"}`,
		`{"action":"read","target":"localhost","path":"/tmp/x","content":"y"}`,
		`{"action":"write","target":"localhost","path":"/tmp/","content":"y"}`,
		`{"action":"write","target":"localhost","path":"relative","content":"y"}`,
	} {
		if _, b := propose(t, tool, bad); b == nil || b.Code != policy.CodeInvalidInput {
			t.Errorf("Propose(%s) = %v, want INVALID_INPUT", bad, b)
		}
	}
}

func TestFileEditThroughNestedRoute(t *testing.T) {
	// media-server is reached through a stand-in pct on this machine, so the
	// content goes over stdin to `cat > path`, never through the command.
	inv := transporttest.NestedInventory(t)
	tool := NewFileEditTool(inv, transport.NewRouter(inv, transport.RouterOptions{LocalEnv: transporttest.FakeManagers(t)}))
	path := filepath.Join(t.TempDir(), "it's.conf")
	content := "a='$(reboot)'\n`id`\n"
	args, _ := json.Marshal(FileEditArgs{Action: FileWrite, Target: "media-server", Path: path, Content: content})
	if r := tool.Execute(t.Context(), mustPropose(t, tool, string(args))); !r.Envelope.OK {
		t.Fatalf("nested write: %s", r.Envelope.JSON())
	}
	args, _ = json.Marshal(FileEditArgs{Action: FileAppend, Target: "media-server", Path: path, Content: "tail\n"})
	if r := tool.Execute(t.Context(), mustPropose(t, tool, string(args))); !r.Envelope.OK {
		t.Fatalf("nested append: %s", r.Envelope.JSON())
	}
	if b, _ := os.ReadFile(path); string(b) != content+"tail\n" {
		t.Errorf("content = %q", b)
	}
}

func TestKnowledge(t *testing.T) {
	tool := NewKnowledgeTool(NewMemoryStore())
	p := mustPropose(t, tool, `{"action":"remember","key":"backup-schedule","content":"media-server backs up nightly at 02:00 to the NAS","tags":["media-server","Backup"]}`)
	if p.Kind != policy.KindWrite || p.Target != "" || p.Command != "" {
		t.Errorf("remember proposal = %+v", p.Action)
	}
	if r := tool.Execute(t.Context(), p); !r.Envelope.OK {
		t.Fatalf("remember: %s", r.Envelope.JSON())
	}
	mustExec := func(args string) map[string]any {
		t.Helper()
		r := tool.Execute(t.Context(), mustPropose(t, tool, args))
		if !r.Envelope.OK {
			t.Fatalf("%s: %s", args, r.Envelope.JSON())
		}
		return dataOf(t, r.Envelope)
	}
	mustExec(`{"action":"note","content":"jellyfin transcodes on the iGPU"}`)

	p = mustPropose(t, tool, `{"action":"search","query":"backup nightly"}`)
	if p.Kind != policy.KindRead {
		t.Errorf("search kind = %s", p.Kind)
	}
	d := mustExec(`{"action":"search","query":"backup nightly"}`)
	ms, _ := d["memories"].([]any)
	if len(ms) != 1 || ms[0].(map[string]any)["key"] != "backup-schedule" {
		t.Errorf("search = %v", d)
	}
	if tags := ms[0].(map[string]any)["tags"]; !slices.Equal(toStrings(tags), []string{"media-server", "backup"}) {
		t.Errorf("tags = %v, want lower-cased", tags)
	}
	d = mustExec(`{"action":"recall","key":"backup-schedule"}`)
	if d["count"] != 1.0 {
		t.Errorf("recall by key = %v", d)
	}
	d = mustExec(`{"action":"recall","query":"igpu"}`)
	if ms, _ := d["memories"].([]any); len(ms) != 1 || !strings.HasPrefix(ms[0].(map[string]any)["key"].(string), "note-") {
		t.Errorf("recall note = %v", d)
	}
	r := tool.Execute(t.Context(), mustPropose(t, tool, `{"action":"recall","key":"nope"}`))
	if r.Envelope.OK || r.Envelope.Error.Code != policy.CodeNotFound {
		t.Errorf("recall missing = %s", r.Envelope.JSON())
	}
	for _, bad := range []string{
		`{"action":"remember","content":"no key"}`,
		`{"action":"search"}`,
		`{"action":"save","key":"k","content":"c","tags":["bad tag"]}`,
		`{"action":"recall"}`,
	} {
		if _, b := propose(t, tool, bad); b == nil || b.Code != policy.CodeInvalidInput {
			t.Errorf("Propose(%s) = %v, want INVALID_INPUT", bad, b)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestMemoryStoreEvictsOldest(t *testing.T) {
	s := NewMemoryStore()
	s.max = 2
	for _, k := range []string{"a", "b", "c"} {
		if err := s.Remember(t.Context(), Memory{Key: k, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	ms, _ := s.Search(t.Context(), "", 10)
	if len(ms) != 2 || ms[0].Key != "c" || ms[1].Key != "b" {
		t.Errorf("after eviction = %+v", ms)
	}
}

func TestQuery(t *testing.T) {
	inv := loadExample(t)
	tool := NewQueryTool(inv, transport.NewRouter(inv, transport.RouterOptions{}))
	exec := func(args string) tools.Result {
		t.Helper()
		p := mustPropose(t, tool, args)
		if p.Kind != policy.KindResolve {
			t.Errorf("%s: kind %s, want resolve", args, p.Kind)
		}
		return tool.Execute(t.Context(), p)
	}
	ids := func(rs []policy.Resource) []policy.ResourceID {
		var out []policy.ResourceID
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}

	r := exec(`{"action":"search","query":"media"}`)
	if !r.Envelope.OK || r.Explicit || !slices.Contains(ids(r.Resolved), "lxc:delly:141") {
		t.Errorf("search = %s, resolved %v", r.Envelope.JSON(), ids(r.Resolved))
	}

	r = exec(`{"action":"get","resource":"jellyfin"}`)
	if !r.Envelope.OK || !r.Explicit || !slices.Equal(ids(r.Resolved), []policy.ResourceID{"docker_container:media-server:jellyfin"}) {
		t.Fatalf("get = %s, explicit %v, resolved %v", r.Envelope.JSON(), r.Explicit, ids(r.Resolved))
	}
	res := dataOf(t, r.Envelope)["resource"].(map[string]any)
	wantRouting := "jellyfin (docker_container:media-server:jellyfin) -> media-server (lxc:delly:141) -> delly (node:delly)"
	if res["routing"] != wantRouting || res["target"] != "jellyfin" || res["reach"] != "via parent media-server (docker exec jellyfin)" {
		t.Errorf("get resource = %v", res)
	}
	if r.Resolved[0].Target != "jellyfin" || r.Resolved[0].Parent != "lxc:delly:141" {
		t.Errorf("resolved = %+v", r.Resolved[0])
	}

	r = exec(`{"action":"list","query":"lxc"}`)
	if !slices.Equal(ids(r.Resolved), []policy.ResourceID{"lxc:delly:141"}) {
		t.Errorf("list lxc = %v", ids(r.Resolved))
	}
	r = exec(`{"action":"list"}`)
	if len(r.Resolved) != inv.Len() {
		t.Errorf("list = %d resources, want %d", len(r.Resolved), inv.Len())
	}
	if _, b := propose(t, tool, `{"action":"list","query":"servers"}`); b == nil || !strings.Contains(b.Message, "for list, a kind") {
		t.Errorf("list with a bad kind: %v", b)
	}

	r = exec(`{"action":"topology"}`)
	tree := dataOf(t, r.Envelope)["tree"].([]any)
	if len(tree) != 2 || len(r.Resolved) != inv.Len() {
		t.Errorf("topology: %d roots, %d resolved", len(tree), len(r.Resolved))
	}
	delly := tree[1].(map[string]any)
	kids := delly["children"].([]any)
	if delly["name"] != "delly" || len(kids) != 2 || kids[0].(map[string]any)["children"].([]any)[0].(map[string]any)["name"] != "jellyfin" {
		t.Errorf("topology tree = %v", tree)
	}
	r = exec(`{"action":"topology","resource":"media"}`)
	if got := ids(r.Resolved); !slices.Equal(got, []policy.ResourceID{"lxc:delly:141", "docker_container:media-server:jellyfin", "node:delly"}) {
		t.Errorf("topology of media = %v", got)
	}

	r = exec(`{"action":"get","resource":"jelyfin"}`)
	if r.Envelope.OK || r.Envelope.Error.Code != policy.CodeNotFound || !strings.Contains(r.Envelope.Error.Message, "did you mean jellyfin") {
		t.Errorf("get misspelt = %s", r.Envelope.JSON())
	}
	r = exec(`{"action":"search","query":"zzzz"}`)
	if r.Envelope.OK || r.Envelope.Error.Code != policy.CodeNotFound {
		t.Errorf("search nothing = %s", r.Envelope.JSON())
	}
}

func TestQueryHealth(t *testing.T) {
	inv, err := inventory.Parse([]byte(`
resources:
  - name: localhost
    kind: node
    reach: local
  - name: dead
    kind: host
    reach: {ssh: {host: 127.0.0.1, port: 1, key_file: /nonexistent/key}}
`))
	if err != nil {
		t.Fatal(err)
	}
	tool := NewQueryTool(inv, transport.NewRouter(inv, transport.RouterOptions{}))
	r := tool.Execute(t.Context(), mustPropose(t, tool, `{"action":"health","resource":"localhost"}`))
	if d := dataOf(t, r.Envelope); !r.Envelope.OK || d["status"] != "ok" || len(r.Resolved) != 1 {
		t.Errorf("health localhost = %s", r.Envelope.JSON())
	}
	r = tool.Execute(t.Context(), mustPropose(t, tool, `{"action":"health","resource":"dead"}`))
	if d := dataOf(t, r.Envelope); d["status"] != "failed" || !strings.Contains(d["error"].(string), "key") {
		t.Errorf("health dead = %s", r.Envelope.JSON())
	}
}

func TestDiscover(t *testing.T) {
	inv, x := localRouter()
	tool := NewDiscoverTool(inv, x)
	p := mustPropose(t, tool, `{"resource":"localhost"}`)
	if p.Kind != policy.KindResolve || p.Target != "localhost" {
		t.Errorf("proposal = %+v", p.Action)
	}
	r := tool.Execute(t.Context(), p)
	if !r.Envelope.OK || !r.Explicit || len(r.Resolved) != 1 || r.Resolved[0].ID != "node:localhost" {
		t.Fatalf("discover localhost = %s", r.Envelope.JSON())
	}
	d := dataOf(t, r.Envelope)
	sources := toStrings(d["sources"])
	errs, _ := d["probe_errors"].([]any)
	if len(sources)+len(errs) != 3 {
		t.Errorf("each probe should be a source or an error: sources %v, errors %v", sources, errs)
	}
	if _, err := os.Stat("/usr/bin/ss"); err == nil && !slices.Contains(sources, "probe:ss") {
		t.Errorf("ss is installed but not probed: %v", d)
	}
	for _, k := range []string{"ports", "services", "config_paths", "log_paths", "bind_mounts"} {
		if _, ok := d[k].([]any); !ok {
			t.Errorf("%s is not a list: %v", k, d[k])
		}
	}

	// A container: static facts only, with its bind mounts and route.
	ex := loadExample(t)
	tool = NewDiscoverTool(ex, nil) // nothing may run: no probe for a remote resource
	r = tool.Execute(t.Context(), mustPropose(t, tool, `{"resource":"jellyfin"}`))
	d = dataOf(t, r.Envelope)
	mounts := d["bind_mounts"].([]any)
	if len(mounts) != 2 || mounts[0].(map[string]any)["source"] != "/opt/jellyfin/config" {
		t.Errorf("bind mounts = %v", mounts)
	}
	if chain := d["routing_chain"].([]any); len(chain) != 3 {
		t.Errorf("routing chain = %v", chain)
	}
	if !slices.Equal(toStrings(d["sources"]), []string{"inventory"}) {
		t.Errorf("sources = %v", d["sources"])
	}
	r = tool.Execute(t.Context(), mustPropose(t, tool, `{"resource":"nothing"}`))
	if r.Envelope.OK || r.Envelope.Error.Code != policy.CodeNotFound {
		t.Errorf("discover unknown = %s", r.Envelope.JSON())
	}
}

func TestParseProbes(t *testing.T) {
	ports, listeners := parseSS("LISTEN 0 4096 127.0.0.53%lo:53 0.0.0.0:*\nLISTEN 0 128 [::]:22 [::]:*\nLISTEN 0 511 *:80 *:*\ngarbage\n")
	if !slices.Equal(ports, []string{"53/tcp", "22/tcp", "80/tcp"}) || len(listeners) != 3 {
		t.Errorf("parseSS = %v, %v", ports, listeners)
	}
	if got := sortPorts([]string{"8096/tcp", "22/tcp", "8096/tcp", "443/tcp"}); !slices.Equal(got, []string{"22/tcp", "443/tcp", "8096/tcp"}) {
		t.Errorf("sortPorts = %v", got)
	}
	units := parseUnits("ssh.service loaded active running OpenBSD Secure Shell server\ncron.service loaded active running Regular background program processing daemon\n")
	if !slices.Equal(units, []string{"ssh.service", "cron.service"}) {
		t.Errorf("parseUnits = %v", units)
	}
}

// exampleInventory is the inventory the README documents.
const exampleInventory = "../../configs/inventory.example.yaml"

func loadExample(t *testing.T) *inventory.Inventory {
	t.Helper()
	inv, err := inventory.Load(exampleInventory)
	if err != nil {
		t.Fatalf("inventory.Load(example): %v", err)
	}
	return inv
}
