package facts

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/builtin"
	"github.com/vigilops/vigil/tools/metrics"
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

// execCall is a read tool's exec call as the model writes it.
func execCall(id, target, cmd string) Call {
	args, _ := json.Marshal(map[string]string{"action": "exec", "target": target, "command": cmd})
	return CallOf(id, "read", string(args))
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

// Extraction reads what the model read: a secret redacted out of the
// result is not in any fact.
func TestExtractFacts(t *testing.T) {
	journal := strings.Join([]string{
		"Mar 04 11:00:01 web1 nginx[900]: 2025/03/04 11:00:01 [error] 900#900: *17 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.5",
		"Mar 04 11:00:02 web1 nginx[900]: GET / 200",
		"Mar 04 11:00:03 web1 nginx[900]: 2025/03/04 11:00:03 [error] 900#900: *18 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.6",
		"Mar 04 11:00:04 web1 kernel: Out of memory: Killed process 4242 (java)",
	}, "\n")
	cases := []struct {
		name    string
		call    Call
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
		{"not found is a negative marker", CallOf("c10", "query", `{"action":"get","resource":"nope"}`),
			tools.Envelope{Error: &tools.ErrorInfo{Code: policy.CodeNotFound, Failed: true, Message: `resource "nope" is not in the inventory`}}.JSON(),
			map[string]string{"not found: query nope": "not found"}, false},
		{"a policy block teaches nothing", execCall("c11", "web1", "rm -rf /"),
			tools.Blocked(&policy.Block{Code: policy.CodeFSMBlocked, Message: "no"}).JSON(), nil, true},
		{"resource identity and route", CallOf("c12", "query", `{"action":"get","resource":"jellyfin"}`),
			tools.OK(map[string]any{"resource": map[string]any{"id": "docker_container:media:jf", "name": "jellyfin", "kind": "docker_container"},
				"routing_chain": []any{map[string]any{"id": "docker_container:media:jf"}, map[string]any{"id": "lxc:delly:141"}, map[string]any{"id": "node:delly"}}}).JSON(),
			map[string]string{"resource jellyfin": "docker_container:media:jf (docker_container); route docker_container:media:jf -> lxc:delly:141 -> node:delly"}, false},
		{"discovery", CallOf("c13", "discover", `{"resource":"web1"}`),
			tools.OK(map[string]any{"resource": map[string]any{"id": "host:web1", "name": "web1", "kind": "host"},
				"ports": []any{"22/tcp", "443/tcp"}, "services": []any{"nginx", "sshd"}, "log_paths": []any{"/var/log/nginx"}}).JSON(),
			map[string]string{"ports web1": "22/tcp, 443/tcp", "services web1": "nginx, sshd", "logs web1": "/var/log/nginx"}, false},
		{"any other tool's scalars", CallOf("c14", "metrics", `{"target":"web1","metric":"cpu"}`),
			tools.OK(map[string]any{"metric": "cpu", "avg": 93.5, "summary": "cpu high"}).JSON(),
			map[string]string{"metrics web1": "avg=93.5, metric=cpu, summary=cpu high"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			facts := Extract(tc.call, tc.content)
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

// metricsRange is a real metrics range summary of one series that rises
// from about 0.2 to 0.93 over an hour with a spike, as the metrics tool
// returns it.
func metricsRange(t *testing.T, series int) (Call, string) {
	t.Helper()
	start := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	var ss []metrics.Series
	for s := range series {
		var pts []metrics.Point
		for i := range 61 {
			v := 0.2 + 0.012*float64(i) + 0.001*float64(s)
			if i == 40 {
				v = 0.97
			}
			pts = append(pts, metrics.Point{T: start.Add(time.Duration(i) * time.Minute), V: math.Round(v*1000) / 1000})
		}
		ss = append(ss, metrics.Series{Labels: map[string]string{"__name__": "cpu_busy", "instance": fmt.Sprintf("web%d:9100", s+1)}, Points: pts})
	}
	sum := metrics.SummarizeRange(`avg by (instance) (rate(node_cpu_seconds_total{mode!="idle"}[5m]))`, start, start.Add(time.Hour), time.Minute, ss, 20)
	args, _ := json.Marshal(map[string]string{"action": "range", "query": sum.Query, "start": "-1h", "step": "1m"})
	return CallOf("m1", "metrics", string(args)), tools.OK(sum).JSON()
}

// The facts of a structured result (the knowledge block) keep the values
// too: one fact per series with its last, min, max and trend.
func TestStructuredFactsKeepValues(t *testing.T) {
	call, content := metricsRange(t, 2)
	facts := Extract(call, content)
	var series []Fact
	for _, f := range facts {
		if strings.Contains(f.Key, "web1:9100") || strings.Contains(f.Key, "web2:9100") {
			series = append(series, f)
		}
	}
	if len(series) != 2 {
		t.Fatalf("facts = %+v, want one per series", facts)
	}
	for _, f := range series {
		for _, want := range []string{"trend.direction=rising", "largest_change.kind=spike", "last=", "min=", "max=", "avg="} {
			if !strings.Contains(f.Value, want) {
				t.Errorf("fact %q = %q lacks %q", f.Key, f.Value, want)
			}
		}
	}
}
