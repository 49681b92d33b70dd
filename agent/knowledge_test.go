package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/inventory"
)

// cmdResult is the envelope of a command that ran, as the model reads it.
func cmdResult(target, cmd string, exit int, out, stderr string) string {
	env := tools.OK(builtin.CommandData{Target: target, Command: cmd, ExitCode: exit, Output: out, Stderr: stderr})
	if exit != 0 {
		env = tools.Envelope{Data: builtin.CommandData{Target: target, Command: cmd, ExitCode: exit, Output: out, Stderr: stderr},
			Error: &tools.ErrorInfo{Code: policy.CodeExecutionFailed, Failed: true, Message: fmt.Sprintf("command exited with status %d: %s", exit, stderr),
				Details: map[string]any{"exit_code": exit}}}
	}
	return env.JSON()
}

func execCall(id, target, cmd string) ToolCall {
	args, _ := json.Marshal(map[string]string{"action": "exec", "target": target, "command": cmd})
	return ToolCall{ID: id, Name: "read", Arguments: string(args)}
}

func factValue(t *testing.T, facts []Fact, key string) string {
	t.Helper()
	for _, f := range facts {
		if f.Key == key {
			return f.Value
		}
	}
	keys := make([]string, len(facts))
	for i, f := range facts {
		keys[i] = f.Key + " = " + f.Value
	}
	t.Fatalf("no fact %q among:\n%s", key, strings.Join(keys, "\n"))
	return ""
}

func TestExtractFacts(t *testing.T) {
	journal := strings.Join([]string{
		"Mar 04 11:00:01 web1 nginx[900]: 2025/03/04 11:00:01 [error] 900#900: *17 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.5",
		"Mar 04 11:00:02 web1 nginx[900]: GET / 200",
		"Mar 04 11:00:03 web1 nginx[900]: 2025/03/04 11:00:03 [error] 900#900: *18 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.6",
		"Mar 04 11:00:04 web1 kernel: Out of memory: Killed process 4242 (java)",
	}, "\n")
	cases := []struct {
		name    string
		call    ToolCall
		content string
		want    map[string]string // key -> substring of the value
		none    bool
	}{
		{"systemd status", execCall("c1", "web1", "systemctl status nginx"),
			cmdResult("web1", "systemctl status nginx", 0, "● nginx.service - A high performance web server\n     Loaded: loaded\n     Active: failed (Result: exit-code) since Tue 2025-03-04 09:12:01 UTC; 5min ago\n", ""),
			map[string]string{"service web1 nginx.service": "failed (Result: exit-code)", "exit web1 systemctl status nginx": "exit 0"}, false},
		{"version on stderr", execCall("c2", "web1", "nginx -v"),
			cmdResult("web1", "nginx -v", 0, "", "nginx version: nginx/1.25.3"),
			map[string]string{"version web1 nginx": "1.25.3"}, false},
		{"listening sockets", execCall("c3", "web1", "ss -ltnp"),
			cmdResult("web1", "ss -ltnp", 0, "State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"+
				`LISTEN 0 511 0.0.0.0:443 0.0.0.0:* users:(("nginx",pid=900,fd=6))`+"\n"+
				`LISTEN 0 128 [::]:22 [::]:* users:(("sshd",pid=1,fd=3))`+"\n", ""),
			map[string]string{"listening web1": "443 (nginx), 22 (sshd)"}, false},
		{"disk usage", execCall("c4", "web1", "df -h"),
			cmdResult("web1", "df -h", 0, "Filesystem Size Used Avail Use% Mounted on\n/dev/sda1 40G 37G 3G 93% /\n/dev/sdb1 200G 20G 180G 10% /data\n", ""),
			map[string]string{"disk web1": "over 85% used: / 93%"}, false},
		{"load and memory", execCall("c5", "web1", "uptime; free -m"),
			cmdResult("web1", "uptime; free -m", 0, " 10:00:00 up 3 days,  load average: 7.10, 6.20, 5.30\n              total used free\nMem:           7900 7600 300\n", ""),
			map[string]string{"load web1": "7.10, 6.20, 5.30", "memory web1": "total 7900, used 7600, free 300"}, false},
		{"pods table", execCall("c6", "k8s", "kubectl get pods -n shop"),
			cmdResult("k8s", "kubectl get pods -n shop", 0, "NAME                        READY   STATUS             RESTARTS   AGE\n"+
				"checkout-7d9f8b6c5d-x2x9z   0/1     CrashLoopBackOff   7          12m\n"+
				"cart-5f6d7c8b9a-abcde       1/1     Running            0          3d\n"+
				"web-6c7d8e9f0a-fghij        1/1     Running            0          3d\n", ""),
			map[string]string{"workload k8s checkout-7d9f8b6c5d-x2x9z": "CrashLoopBackOff, restarts 7",
				"workloads k8s kubectl get pods -n shop": "3 listed, 1 not healthy"}, false},
		{"docker ps", execCall("c7", "docker1", "docker ps -a"),
			cmdResult("docker1", "docker ps -a", 0, "CONTAINER ID   IMAGE          COMMAND   CREATED   STATUS                     PORTS   NAMES\n"+
				"0123456789ab   redis:7        \"redis\"   2 days    Exited (137) 5 minutes ago          cache\n"+
				"abcdef012345   nginx:1.25     \"nginx\"   2 days    Up 2 days                  80/tcp  web\n", ""),
			map[string]string{"workload docker1 cache": "Exited (137)"}, false},
		{"error lines counted and deduplicated", execCall("c8", "web1", "journalctl -u nginx -n 100"),
			cmdResult("web1", "journalctl -u nginx -n 100", 0, journal, ""),
			map[string]string{"errors web1 journalctl -u nginx -n 100": `2× "2025/03/04 11:00:01 [error] 900#900: *17 connect() failed`}, false},
		{"failed command has its exit code", execCall("c9", "web1", "systemctl is-active nginx"),
			cmdResult("web1", "systemctl is-active nginx", 3, "failed\n", ""),
			map[string]string{"exit web1 systemctl is-active nginx": "exit 3"}, false},
		{"not found is a negative marker", ToolCall{ID: "c10", Name: "query", Arguments: `{"action":"get","resource":"nope"}`},
			tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeNotFound, Failed: true, Message: `resource "nope" is not in the inventory`}}.JSON(),
			map[string]string{"not found: query nope": "not found"}, false},
		{"a policy block teaches nothing", execCall("c11", "web1", "rm -rf /"),
			tools.Blocked(&policy.Block{Code: policy.CodeFSMBlocked, Message: "no"}).JSON(), nil, true},
		{"resource identity and route", ToolCall{ID: "c12", Name: "query", Arguments: `{"action":"get","resource":"jellyfin"}`},
			tools.OK(map[string]any{"resource": map[string]any{"id": "docker_container:media:jf", "name": "jellyfin", "kind": "docker_container"},
				"routing_chain": []any{map[string]any{"id": "docker_container:media:jf"}, map[string]any{"id": "lxc:delly:141"}, map[string]any{"id": "node:delly"}}}).JSON(),
			map[string]string{"resource jellyfin": "docker_container:media:jf (docker_container); route docker_container:media:jf -> lxc:delly:141 -> node:delly"}, false},
		{"discovery", ToolCall{ID: "c13", Name: "discover", Arguments: `{"resource":"web1"}`},
			tools.OK(map[string]any{"resource": map[string]any{"id": "host:web1", "name": "web1", "kind": "host"},
				"ports": []any{"22/tcp", "443/tcp"}, "services": []any{"nginx", "sshd"}, "log_paths": []any{"/var/log/nginx"}}).JSON(),
			map[string]string{"ports web1": "22/tcp, 443/tcp", "services web1": "nginx, sshd", "logs web1": "/var/log/nginx"}, false},
		{"any other tool's scalars", ToolCall{ID: "c14", Name: "metrics", Arguments: `{"target":"web1","metric":"cpu"}`},
			tools.OK(map[string]any{"metric": "cpu", "avg": 93.5, "summary": "cpu high"}).JSON(),
			map[string]string{"metrics web1": "avg=93.5, metric=cpu, summary=cpu high"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			facts := extractFacts(callInfoOf(tc.call), tc.content)
			if tc.none {
				if len(facts) != 0 {
					t.Fatalf("want no facts, got %+v", facts)
				}
				return
			}
			for key, want := range tc.want {
				if v := factValue(t, facts, key); !strings.Contains(v, want) {
					t.Errorf("fact %q = %q, want it to contain %q", key, v, want)
				}
			}
			for _, f := range facts {
				if f.Source != tc.call.ID || f.Call == "" {
					t.Errorf("fact %q lacks its source call: %+v", f.Key, f)
				}
				if len(f.Value) > maxFactValue {
					t.Errorf("fact %q value is %d bytes, over %d", f.Key, len(f.Value), maxFactValue)
				}
			}
		})
	}
}

// Extraction reads what the model read: a secret redacted out of the
// result is not in any fact.
func TestExtractFactsSeeOnlyRedactedContent(t *testing.T) {
	raw := cmdResult("web1", "cat /etc/app.env", 1, "", "error: DB_PASSWORD=hunter2hunter2 rejected by server")
	a := &Agent{}
	content := a.modelContent(mustEnvelope(t, raw))
	for _, f := range extractFacts(callInfoOf(execCall("c1", "web1", "cat /etc/app.env")), content) {
		if strings.Contains(f.Value, "hunter2") {
			t.Fatalf("fact carries the secret: %+v", f)
		}
	}
}

func mustEnvelope(t *testing.T, raw string) tools.Envelope {
	t.Helper()
	var env tools.Envelope
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		t.Fatal(err)
	}
	return env
}

// The accumulator keeps its bounds; the newest observation of a key wins;
// eviction takes the least recently observed facts, sparing the current and
// the previous turn.
func TestKnowledgeBoundsAndEviction(t *testing.T) {
	k := &Knowledge{}
	for turn := 1; turn <= 12; turn++ {
		k.Turn = turn
		var facts []Fact
		for i := range 10 {
			facts = append(facts, Fact{Key: fmt.Sprintf("t%d-f%d", turn, i), Value: strings.Repeat("v", 20), Source: fmt.Sprintf("c%d", turn)})
		}
		k.add(facts)
		if len(k.Facts) > maxFacts {
			t.Fatalf("turn %d: %d facts, over %d", turn, len(k.Facts), maxFacts)
		}
		if c := k.chars(); c > maxFactChars {
			t.Fatalf("turn %d: %d characters, over %d", turn, c, maxFactChars)
		}
	}
	for _, turn := range []int{11, 12} {
		for i := range 10 {
			if _, ok := k.Lookup(fmt.Sprintf("t%d-f%d", turn, i)); !ok {
				t.Fatalf("fact of turn %d evicted while older ones remained", turn)
			}
		}
	}
	if _, ok := k.Lookup("t1-f0"); ok {
		t.Fatal("the oldest fact survived eviction")
	}
	// Observing a key again replaces it and makes it recent.
	k.Turn = 13
	k.add([]Fact{{Key: "t11-f0", Value: "new", Source: "c13"}})
	if f, _ := k.Lookup("t11-f0"); f.Value != "new" || f.Source != "c13" || f.Turn != 13 {
		t.Fatalf("dedup by key did not take the newest observation: %+v", f)
	}
	n := 0
	for _, f := range k.Facts {
		if f.Key == "t11-f0" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("key stored %d times", n)
	}
}

// When one turn alone overflows the bounds, the bounds still hold.
func TestKnowledgeHardBound(t *testing.T) {
	k := &Knowledge{Turn: 1}
	var facts []Fact
	for i := range 100 {
		facts = append(facts, Fact{Key: fmt.Sprintf("f%d", i), Value: strings.Repeat("x", 150)})
	}
	k.add(facts)
	if len(k.Facts) > maxFacts || k.chars() > maxFactChars {
		t.Fatalf("%d facts, %d characters", len(k.Facts), k.chars())
	}
}

func newTestAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	reg, err := tools.NewRegistry(builtin.Tools(inventory.Default(), nil, builtin.NewMemoryStore())...)
	if err != nil {
		t.Fatal(err)
	}
	return New(nil, reg, cfg)
}

// learn reads each new result once, numbering turns by tool-call turns.
func TestLearnFromHistory(t *testing.T) {
	a := newTestAgent(t, Config{})
	s := &Session{History: []Message{
		{Role: RoleUser, Content: "why is nginx down on web1?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{execCall("c1", "web1", "systemctl status nginx")}},
		{Role: RoleTool, ToolCallID: "c1", Name: "read", Content: cmdResult("web1", "systemctl status nginx", 0,
			"● nginx.service - web\n     Active: failed (Result: exit-code)\n", "")},
	}}
	a.learn(s)
	f, ok := s.Knowledge.Lookup("service web1 nginx.service")
	if !ok || f.Turn != 1 || f.Source != "c1" {
		t.Fatalf("fact %+v %v", f, ok)
	}
	s.History = append(s.History,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{execCall("c2", "web1", "systemctl status nginx")}},
		Message{Role: RoleTool, ToolCallID: "c2", Name: "read", Content: cmdResult("web1", "systemctl status nginx", 0,
			"● nginx.service - web\n     Active: active (running)\n", "")})
	a.learn(s)
	a.learn(s) // nothing new: no change
	f, _ = s.Knowledge.Lookup("service web1 nginx.service")
	if f.Value != "active (running)" || f.Turn != 2 || f.Source != "c2" {
		t.Fatalf("newer observation not taken: %+v", f)
	}
	block := s.Knowledge.Render()
	for _, want := range []string{knownFactsHeader, "from read exec on web1: systemctl status nginx (turn 2):", "- service web1 nginx.service: active (running)"} {
		if !strings.Contains(block, want) {
			t.Fatalf("block lacks %q:\n%s", want, block)
		}
	}
}
