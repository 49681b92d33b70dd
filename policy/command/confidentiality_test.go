package command

import (
	"slices"
	"strings"
	"testing"
)

// Issue 22's classes that the corpus rows cannot state alone: what the
// zero Options know, vigil's own store under every name of its machine,
// the destinations a verdict names, nested execution and the reader
// table's justifications.

// TestStrictestOptions: with the zero Options (an empty configuration,
// vigil explain-command without flags) only the loopback is a known
// destination; no option the operator can set makes a read of them a
// write.
func TestStrictestOptions(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		read bool
	}{
		{"curl -s http://localhost:9090/-/healthy", true},
		{"curl -s http://127.0.0.1:9100/metrics", true},
		{"curl -sg 'http://[::1]:9100/metrics'", true},
		{"wget -qO- http://localhost:8080/metrics", true},
		{"nc -z localhost 5432", true},
		{"redis-cli INFO", true},
		{"psql -c 'SELECT 1'", true},
		{"dig +short example.com", true},
		{"etcdctl endpoint health", true},
		{"ssh localhost uptime", true},
		{"curl -s http://web1:9100/metrics", false},
		{"nc -z db 5432", false},
		{"ssh web1 uptime", false},
		{"kubectl get pods", false},
		{"helm list", false},
		{"ceph -s", false},
		{"aws sts get-caller-identity", false},
		{"argocd app list", false},
		{"ping -c 1 gateway", false},
		{"dig @10.0.0.1 example.com", false},
		// The command kubectl runs in a pod reaches that pod's loopback;
		// kubectl itself still needs a known API server.
		{"kubectl exec api-0 -- curl -s http://localhost:8080/healthz", false},
		{"docker exec web curl -s http://localhost/healthz", true},
	} {
		v := Options{}.Classify(tc.cmd, DialectBash)
		if v.ReadOnly() != tc.read {
			t.Errorf("%q with the zero Options: read=%v %v, want %v", tc.cmd, v.ReadOnly(), v.Reasons, tc.read)
		}
	}
}

// TestOptionsOnlyWiden: whatever the zero Options prove read-only, the
// lab's options do too, for every corpus command: an option only widens.
func TestOptionsOnlyWiden(t *testing.T) {
	for _, file := range allCorpusFiles {
		for _, r := range mustLoad(t, "testdata/commands/"+file) {
			if Classify(r.command).ReadOnly() && !labOptions.Classify(r.command, DialectBash).ReadOnly() {
				t.Errorf("%s: %q is read-only with the zero Options but not with labOptions", r.where, r.command)
			}
		}
	}
}

// TestVigilStore: no read reaches vigil's own Redis store, whatever name
// of its machine the command uses (SPEC R1, issue 22 §6).
func TestVigilStore(t *testing.T) {
	loop := Options{Forbidden: []Destination{mustDest("127.0.0.1:6379")}}
	remote := Options{
		Destinations: []Destination{mustDest("cache1"), mustDest("10.0.0.5")},
		Forbidden:    []Destination{mustDest("10.0.0.5:6379")},
		Aliases:      [][]string{{"cache1", "10.0.0.5"}},
	}
	for _, tc := range []struct {
		o    Options
		cmd  string
		read bool
	}{
		{loop, "redis-cli INFO", false},
		{loop, "redis-cli -h localhost KEYS '*'", false},
		{loop, "redis-cli -h 127.0.0.2 INFO", false},
		{loop, "redis-cli -h ::1 INFO", false},
		{loop, "redis-cli -h 0.0.0.0 INFO", false},
		{loop, "redis-cli -h ip6-localhost INFO", false},
		{loop, "redis-cli -u redis://localhost:6379 GET k", false},
		{loop, "valkey-cli -p 6379 GET k", false},
		{loop, "nc -z localhost 6379", false},
		{loop, "curl -s http://127.0.0.1:6379/healthz", false},
		{loop, "ssh localhost redis-cli INFO", false},
		{loop, "docker exec app redis-cli GET k", false},
		{loop, "redis-cli -h 127.0.0.1 -p 6380 INFO", true},
		{loop, "nc -z localhost 6380", true},
		{remote, "redis-cli -h cache1 INFO", false},
		{remote, "redis-cli -h 10.0.0.5 INFO", false},
		{remote, "nc -z cache1 6379", false},
		{remote, "redis-cli -h cache1 -p 6380 INFO", true},
		{remote, "nc -z cache1 22", true},
	} {
		v := tc.o.Classify(tc.cmd, DialectBash)
		if v.ReadOnly() != tc.read {
			t.Errorf("%q (store %v): read=%v %v, want %v", tc.cmd, tc.o.Forbidden, v.ReadOnly(), v.Reasons, tc.read)
			continue
		}
		if !tc.read && !hasReasonContaining(v.Reasons, "vigil's own store") {
			t.Errorf("%q: reasons %v do not name vigil's store", tc.cmd, v.Reasons)
		}
	}
}

// TestDestinationsNamed: a network read names every endpoint it
// connects to, host and port, for the sandbox to confine it to.
func TestDestinationsNamed(t *testing.T) {
	d := func(ss ...string) []Destination {
		var out []Destination
		for _, s := range ss {
			out = append(out, mustDest(s))
		}
		return out
	}
	for _, tc := range []struct {
		cmd  string
		want []Destination
	}{
		{"curl -s http://localhost:8080/healthz", d("localhost:8080")},
		{"curl -s https://web1/healthz http://db1:9100/metrics", d("web1:443", "db1:9100")},
		{"curl -s -x http://gateway:3128 http://web1:9100/metrics", d("gateway:3128", "web1:9100")},
		{"wget -qO- http://web1/metrics", d("web1:80")},
		{"ssh -J gateway -p 2222 web1 uptime", d("gateway:22", "web1:2222")},
		{"nc -z db 5432 6432", d("db:5432", "db:6432")},
		{"dig +short example.com", []Destination{resolverDest}},
		{"dig @10.0.0.1 example.com", d("10.0.0.1:53")},
		{"psql -h db1 -p 6432 -c 'SELECT 1'", d("db1:6432")},
		{"psql 'postgresql://db1,db2:5433/app' -c 'SELECT 1'", d("db1:5432", "db2:5433")},
		{"redis-cli -h cache INFO", d("cache:6379")},
		{"etcdctl endpoint health", d("127.0.0.1:2379")},
		{"kubectl get pods", d("kube-api.internal:6443")},
		{"ceph -s", d("mon1:3300", "mon1:6789")},
		{"ping -c 1 web1", []Destination{{Host: "web1"}}},
		{"git ls-remote https://git.internal/app.git", d("git.internal:443")},
		{"git ls-remote git@git.internal:app.git", d("git.internal:22")},
		{"openssl s_client -connect web1:443 </dev/null", d("web1:443")},
		// What a command run elsewhere connects to is not this host's
		// sandbox's business; only the client that takes it there is.
		{"ssh web1 'curl -s http://localhost:9100/metrics'", d("web1:22")},
		{"kubectl exec api-0 -- curl -s http://localhost:8080/healthz", d("kube-api.internal:6443")},
		{"docker exec web curl -s http://localhost/healthz", nil},
		{"nsenter -t 1 -n curl -s http://localhost:9100/metrics", d("localhost:9100")},
		// Local tools that look up the host names they are given ask the
		// host's resolver; without names they connect nowhere.
		{"tcpdump -c 10 -n host db1", []Destination{resolverDest}},
		{"tcpdump -c 10 -n -i eth0", nil},
		{"ss -tn dst db1", []Destination{resolverDest}},
		{"ss -tnp", nil},
		{"arp -n", nil},
		{"lsof -i @db1:5432", []Destination{resolverDest}},
		{"lsof -i :80", nil},
		{"ls -la", nil},
		{"psql -c 'SELECT 1'", nil},
		{"kubectl version --client", nil},
		{"curl file:///etc/hosts", nil},
	} {
		v := labOptions.Classify(tc.cmd, DialectBash)
		if !v.ReadOnly() {
			t.Errorf("%q: %s %v, want a read", tc.cmd, v.Intent, v.Reasons)
			continue
		}
		if !slices.Equal(v.Destinations, tc.want) || v.Network != (len(tc.want) > 0) {
			t.Errorf("%q: destinations %v network=%v, want %v", tc.cmd, v.Destinations, v.Network, tc.want)
		}
	}
}

// TestParseDestination: declared destinations are host[:port], [v6]:port
// or *.domain; anything a reader could misread is refused.
func TestParseDestination(t *testing.T) {
	good := map[string]Destination{
		"web1":                {Host: "web1"},
		"Kafka-1:9092":        {Host: "kafka-1", Port: 9092},
		"10.0.0.5":            {Host: "10.0.0.5"},
		"[::1]:6379":          {Host: "::1", Port: 6379},
		"fe80::1":             {Host: "fe80::1"},
		"*.amazonaws.com:443": {Host: "*.amazonaws.com", Port: 443},
		"db.internal.":        {Host: "db.internal"},
	}
	for in, want := range good {
		got, err := ParseDestination(in)
		if err != nil || got != want {
			t.Errorf("ParseDestination(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "web 1", "http://web1", "web1:0", "web1:65536", "web1:x",
		"user@web1", "*.10.0.0.1", "*", "a..b", "-web", "web1:22:33", "[::1", "[fe80::1%eth0]:22", "web1/x"} {
		if d, err := ParseDestination(in); err == nil {
			t.Errorf("ParseDestination(%q) = %v, want an error", in, d)
		}
	}
}

// TestNestedStrict: a command run on another machine, in a container or
// in another namespace may reach only that place's loopback, and the
// refusal says to use the read tool's target.
func TestNestedStrict(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		read bool
	}{
		{"ssh web1 'curl -s http://localhost:9100/metrics'", true},
		{"ssh web1 'curl -s http://web1:9100/metrics'", false},
		{"ssh web1 'kubectl get pods'", false},
		{"docker exec web curl -s http://localhost/healthz", true},
		{"docker exec web curl -s http://db1/healthz", false},
		{"kubectl exec api-0 -- curl -s http://localhost:8080/healthz", true},
		{"kubectl exec api-0 -- nc -z db 5432", false},
		{"nsenter -t 1 -n nc -z localhost 22", true},
		{"nsenter -t 1 -n nc -z web1 22", false},
		{"ip netns exec blue ping -c 1 10.0.0.1", false},
		{"chroot /srv/root dig @10.0.0.1 x", false},
		{"pct exec 101 -- curl -s http://localhost/healthz", true},
		{"lxc exec c1 -- curl -s http://web1/healthz", false},
	} {
		v := labOptions.Classify(tc.cmd, DialectBash)
		if v.ReadOnly() != tc.read {
			t.Errorf("%q: read=%v %v, want %v", tc.cmd, v.ReadOnly(), v.Reasons, tc.read)
			continue
		}
		if !tc.read && !hasReasonContaining(v.Reasons, "use the read tool's target") {
			t.Errorf("%q: reasons %v do not point to the read tool's target", tc.cmd, v.Reasons)
		}
	}
}

// TestPureReadersJustified: every entry of the pure-reader table says
// what the tool can do and why no form of it writes, runs a program or
// connects anywhere, so a reviewer can audit the table.
func TestPureReadersJustified(t *testing.T) {
	if len(pureReaders) < 100 {
		t.Fatalf("only %d pure readers", len(pureReaders))
	}
	for name, why := range pureReaders {
		if len(strings.Fields(why)) < 2 {
			t.Errorf("pure reader %q has no justification (%q)", name, why)
		}
		if r := commandTable[name]; r.class != ruleRead {
			t.Errorf("pure reader %q is not a read rule in the table (a later group overrides it)", name)
		}
	}
	// The tools the audit moved out of the table: each has an option that
	// runs a program or writes.
	for _, name := range []string{"jobs", "diff3", "lvs", "vgs", "pvs", "lvdisplay", "vgdisplay", "pvdisplay"} {
		if _, ok := pureReaders[name]; ok {
			t.Errorf("%s is a pure reader, but an option of it runs a program or names a log file", name)
		}
	}
}
