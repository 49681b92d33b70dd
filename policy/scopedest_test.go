package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/command"
)

// shellScopeGate is a gate whose classifier knows an admin host, an
// out-of-scope database host, two datasources, two clusters' API
// servers, a declared read destination and a non-Kubernetes service, with
// the one DestinationMap the app builds from the same configuration.
func shellScopeGate(t testing.TB) *Gate {
	t.Helper()
	dest := func(s string) command.Destination {
		d, err := command.ParseDestination(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	opts := command.Options{
		Destinations: []command.Destination{dest("admin"), dest("db-9"), dest("db9.internal"),
			dest("prometheus-main:9090"), dest("prometheus-other:9090"), dest("status.example.com:443")},
		Services: map[string][]command.Destination{
			"kubernetes":       {dest("api.prod:6443"), dest("api.stage:6443")},
			"kubernetes/prod":  {dest("api.prod:6443")},
			"kubernetes/stage": {dest("api.stage:6443")},
			"ceph":             {dest("mon-1:6789")},
		},
		Aliases: [][]string{{"db-9", "db9.internal"}},
	}
	m := NewDestinationMap()
	for _, e := range []struct{ name, dest string }{{"main", "prometheus-main:9090"}, {"other", "prometheus-other:9090"}} {
		if err := m.AddDatasource(e.name, dest(e.dest)); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.AddCluster("prod", "prod", dest("api.prod:6443")); err != nil {
		t.Fatal(err)
	}
	if err := m.AddCluster("stage", "stage", dest("api.stage:6443")); err != nil {
		t.Fatal(err)
	}
	m.AddHost("admin", Reach{Kind: ScopeHosts, Name: "admin"})
	m.AddHost("db-9", Reach{Kind: ScopeHosts, Name: "db-9", Aliases: []string{"db9.internal"}})
	m.AddHost("db9.internal", Reach{Kind: ScopeHosts, Name: "db-9", Aliases: []string{"db9.internal"}})
	for _, d := range opts.Destinations {
		m.AddOpen(d)
	}
	m.AddOpen(dest("mon-1:6789"))
	return NewGate(Rules{ReadSandbox: SandboxOff, Command: opts}).WithScopes(fakeScopes{
		"admin": {{Kind: ScopeHosts, Name: "admin"}},
	}).WithDestinations(m)
}

func TestGateShellScope(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := shellScopeGate(t)
	s := NewSessionState()
	s.Context.Add(Resource{ID: "node:admin", Kind: "node", Name: "admin"}, now)
	whole := &Scope{Hosts: []string{"admin"}, Kubernetes: []string{"prod"}, Datasources: []string{"main"}, Channel: "slack:CW"}
	nsOnly := &Scope{Hosts: []string{"admin"}, Kubernetes: []string{"prod/shop"}, Datasources: []string{"main"}, Channel: "slack:CN"}
	wide := &Scope{Hosts: []string{"*"}, Kubernetes: []string{"*"}, Datasources: []string{"*"}, Channel: "slack:CA"}
	read := func(sc *Scope, cmd string) Decision {
		return g.Authorize(s, Action{Tool: "read", Kind: KindRead, Target: "admin", Command: cmd},
			LevelControlled, Requester{User: "U1", Operator: true, Scope: sc}, now)
	}
	cases := []struct {
		name  string
		scope *Scope
		cmd   string
		want  string // "" allowed; else a part of the refusal
	}{
		// Kubernetes: the destination names the cluster, never the namespace.
		{"kubectl, whole cluster in scope", whole, "kubectl --context prod -n payments get pods", ""},
		{"kubectl, namespaces only", nsOnly, "kubectl --context prod -n shop get pods", "use the kube tool, which honours namespaces"},
		{"kubectl, other cluster", whole, "kubectl --context stage get pods", "(cluster stage as a whole) is not available in this channel (slack:CW)"},
		{"kubectl without context reaches every cluster", whole, "kubectl get pods", "cluster stage"},
		{"kubectl, everything in scope", wide, "kubectl -n payments get pods", ""},
		// Datasources by host:port.
		{"curl to the datasource in scope", whole, "curl -s 'http://prometheus-main:9090/api/v1/query?query=up'", ""},
		{"curl to a datasource outside", whole, "curl -s 'http://prometheus-other:9090/api/v1/query?query=up'", "(datasource other) is not available in this channel (slack:CW): it is outside the channel's scope (datasources: main)"},
		// Inventory hosts, by name and alias.
		{"ssh to a host outside", whole, "ssh -n db-9 uptime", "(host db-9) is not available"},
		{"psql to a host outside by alias", whole, "psql -h db9.internal -c 'select 1'", "host db-9"},
		{"redis-cli to a host outside", whole, "redis-cli -h db-9 ping", "host db-9"},
		{"ssh to a host in scope", wide, "ssh -n db-9 uptime", ""},
		// Open destinations and the loopback stay allowed.
		{"declared destination", whole, "curl -s https://status.example.com/healthz", ""},
		{"loopback", whole, "curl -s http://localhost:8080/health", ""},
		{"non-Kubernetes service", whole, "ceph status", ""},
		{"no network", nsOnly, "uptime", ""},
	}
	for _, c := range cases {
		d := read(c.scope, c.cmd)
		if c.want == "" {
			if d.Block != nil {
				t.Errorf("%s: %q refused: %s", c.name, c.cmd, d.Block.Message)
			}
			continue
		}
		if d.Block == nil {
			v := ""
			if d.Verdict != nil {
				v = strings.Join(d.Verdict.Reasons, "; ")
			}
			t.Errorf("%s: %q allowed (verdict %s), want a refusal with %q", c.name, c.cmd, v, c.want)
			continue
		}
		if d.Block.Code != CodeStrictResolution || !strings.Contains(d.Block.Message, c.want) {
			t.Errorf("%s: %q refused with %s %q, want %q", c.name, c.cmd, d.Block.Code, d.Block.Message, c.want)
		}
		// The same command without a scope is as before.
		if u := read(nil, c.cmd); u.Block != nil {
			t.Errorf("%s: no scope: %q refused: %s", c.name, c.cmd, u.Block.Message)
		}
	}
}

// An unplaceable destination in a scoped channel is refused (fail
// closed); a gate without a map lets a scoped command reach only the
// machine it runs on.
func TestGateShellScopeUnknownDestination(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d, _ := command.ParseDestination("api.prod:6443")
	g := NewGate(Rules{ReadSandbox: SandboxOff, Command: command.Options{
		Services: map[string][]command.Destination{"kubernetes": {d}}}}).WithScopes(fakeScopes{"admin": {{Kind: ScopeHosts, Name: "admin"}}})
	sc := &Scope{Hosts: []string{"*"}, Kubernetes: []string{"*"}}
	a := Action{Tool: "read", Kind: KindRead, Target: "admin", Command: "kubectl get pods"}
	s := NewSessionState()
	s.Context.Add(Resource{ID: "node:admin", Kind: "node", Name: "admin"}, now)
	got := g.Authorize(s, a, LevelControlled, Requester{User: "U1", Scope: sc}, now)
	if got.Block == nil || !strings.Contains(got.Block.Message, "destination api.prod:6443 is not available") {
		t.Fatalf("unplaceable destination = %+v", got.Block)
	}
	if got := g.Authorize(s, a, LevelControlled, Requester{User: "U1"}, now); got.Block != nil {
		t.Fatalf("no scope: %v", got.Block)
	}
	a.Command = "curl -s http://127.0.0.1:8080/health"
	if got := g.Authorize(s, a, LevelControlled, Requester{User: "U1", Scope: sc}, now); got.Block != nil {
		t.Fatalf("loopback without a map: %v", got.Block)
	}
}

// An approval cannot widen the scope: a change on the shell path is
// checked by what its words name, before it could wait for approval.
func TestGateShellScopeWrites(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := shellScopeGate(t)
	s := NewSessionState()
	s.Context.Add(Resource{ID: "node:admin", Kind: "node", Name: "admin"}, now)
	s.FSM.OnToolSuccess(KindResolve, "discover", "admin")
	whole := &Scope{Hosts: []string{"admin"}, Kubernetes: []string{"prod"}, Datasources: []string{"main"}}
	nsOnly := &Scope{Hosts: []string{"admin"}, Kubernetes: []string{"prod/shop"}}
	write := func(sc *Scope, cmd string) Decision {
		return g.Authorize(s, Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "admin", Command: cmd},
			LevelControlled, Requester{User: "U1", Operator: true, Scope: sc}, now)
	}
	for _, c := range []struct {
		scope     *Scope
		cmd, want string
	}{
		{whole, "systemctl restart nginx", ""},
		{whole, "kubectl --context prod -n payments delete pod x", ""},
		{whole, "kubectl --context=stage delete pod x", "cluster stage"},
		{whole, "kubectl delete pod x", "cluster stage"},
		{nsOnly, "kubectl --context prod -n shop rollout restart deploy/checkout", "use the kube tool"},
		{whole, "ssh db-9 sudo systemctl restart postgresql", "host db-9"},
		{whole, "redis-cli -h db9.internal FLUSHALL", "host db-9"},
		{whole, "curl -X POST http://prometheus-other:9090/-/reload", "datasource other"},
		{whole, "kubectl --context mystery delete pod x", `kubeconfig context "mystery"`},
		{whole, "kubectl --context=prod --kubeconfig /tmp/other delete pod x", "with --kubeconfig"},
		{whole, "KUBECONFIG=/tmp/other kubectl --context prod delete pod x", "with kubeconfig"},
		{whole, "/usr/local/bin/helm --kube-context stage uninstall shop", "cluster stage"},
		{whole, "kubectl --context prod --server https://api.stage:6443 delete pod x", "cluster stage"},
		{whole, "echo restarting; /usr/bin/ssh admin@db-9 true", "host db-9"},
		{whole, "curl -X POST http://prometheus-main:9090/-/reload", ""},
	} {
		d := write(c.scope, c.cmd)
		switch {
		case c.want == "" && (d.Block != nil || !d.NeedsApproval):
			t.Errorf("%q: want approval, got %+v", c.cmd, d.Block)
		case c.want != "" && (d.Block == nil || !strings.Contains(d.Block.Message, c.want)):
			t.Errorf("%q: want a refusal with %q, got %+v", c.cmd, c.want, d.Block)
		}
		if u := write(nil, c.cmd); u.Block != nil || !u.NeedsApproval {
			t.Errorf("%q without a scope: want approval as before, got %+v", c.cmd, u.Block)
		}
	}
}

// The one table: a datasource's or API server's host:port wins over the
// machine it runs on; every loopback spelling is one machine; open
// destinations (wildcards, any port) and the resolver are no scope kind;
// anything else is unknown.
func TestDestinationMapPlace(t *testing.T) {
	m := NewDestinationMap()
	mon := Reach{Kind: ScopeHosts, Name: "mon-1"}
	m.AddHost("mon-1", mon)
	m.AddHost("localhost", Reach{Kind: ScopeHosts, Name: "self"}) // ignored: the loopback is where the command runs
	if err := m.AddDatasource("main", command.Destination{Host: "mon-1", Port: 9090}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddDatasource("local", command.Destination{Host: "127.0.0.1", Port: 9091}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddCluster("prod", "", command.Destination{Host: "mon-1", Port: 6443}); err != nil {
		t.Fatal(err)
	}
	if err := m.AddDatasource("bad", command.Destination{Host: "mon-1"}); err == nil {
		t.Fatal("a datasource without a port was accepted")
	}
	m.AddOpen(command.Destination{Host: "*.example.com"})
	m.AddOpen(command.Destination{Host: "status.internal", Port: 443})
	for _, c := range []struct {
		dest  command.Destination
		want  string // kind:name, "" for none
		known bool
	}{
		{command.Destination{Host: "mon-1", Port: 9090}, "datasources:main", true},
		{command.Destination{Host: "MON-1", Port: 6443}, "kubernetes:prod", true},
		{command.Destination{Host: "mon-1", Port: 22}, "hosts:mon-1", true},
		{command.Destination{Host: "localhost", Port: 9091}, "datasources:local", true},
		{command.Destination{Host: "::1", Port: 9091}, "datasources:local", true},
		{command.Destination{Host: "127.0.0.1", Port: 8080}, "", true},
		{command.Destination{Host: "resolver", Port: 53}, "", true},
		{command.Destination{Host: "api.example.com", Port: 443}, "", true},
		{command.Destination{Host: "example.com", Port: 443}, "", false},
		{command.Destination{Host: "status.internal", Port: 443}, "", true},
		{command.Destination{Host: "status.internal", Port: 80}, "", false},
		{command.Destination{Host: "db-9", Port: 5432}, "", false},
	} {
		rs, known := m.Place(c.dest)
		got := ""
		if len(rs) > 0 {
			got = string(rs[0].Kind) + ":" + rs[0].Name
		}
		if got != c.want || known != c.known || len(rs) > 1 {
			t.Errorf("Place(%s) = %v, %v; want %s, %v", c.dest, rs, known, c.want, c.known)
		}
	}
	// A nil map knows only the loopback and the resolver.
	var none *DestinationMap
	if _, ok := none.Place(command.Destination{Host: "localhost", Port: 1}); !ok {
		t.Error("nil map: loopback unknown")
	}
	if _, ok := none.Place(command.Destination{Host: "mon-1", Port: 22}); ok {
		t.Error("nil map: mon-1 known")
	}
}

// A read allowed by policy.read_only_commands is checked by its declared
// hosts.
func TestGateShellScopeDeclared(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	db, err := ParseReadOnlyCommand("pgstat show", true, "db-9:5432")
	if err != nil {
		t.Fatal(err)
	}
	anywhere, err := ParseReadOnlyCommand("netcheck run", true)
	if err != nil {
		t.Fatal(err)
	}
	d9, _ := command.ParseDestination("db-9:5432")
	m := NewDestinationMap()
	m.AddHost("db-9", Reach{Kind: ScopeHosts, Name: "db-9"})
	g := NewGate(Rules{ReadSandbox: SandboxRequired, ReadOnlyCommands: []ReadOnlyCommand{db, anywhere},
		Command: command.Options{Destinations: []command.Destination{d9}}}).
		WithScopes(fakeScopes{"admin": {{Kind: ScopeHosts, Name: "admin"}}}).WithDestinations(m)
	s := NewSessionState()
	s.Context.Add(Resource{ID: "node:admin", Kind: "node", Name: "admin"}, now)
	read := func(sc *Scope, cmd string) Decision {
		return g.Authorize(s, Action{Tool: "read", Kind: KindRead, Target: "admin", Command: cmd}, LevelControlled,
			Requester{User: "U1", Scope: sc}, now)
	}
	adminOnly := &Scope{Hosts: []string{"admin"}, Channel: "slack:CX"}
	if d := read(adminOnly, "pgstat show"); d.Block == nil || !strings.Contains(d.Block.Message, "(host db-9) is not available in this channel (slack:CX)") {
		t.Errorf("declared command to an out-of-scope host = %+v", d.Block)
	}
	if d := read(&Scope{Hosts: []string{"admin", "db-*"}}, "pgstat show"); d.Block != nil || d.Execution.Declared == "" {
		t.Errorf("declared command in scope = %+v %+v", d.Block, d.Execution)
	}
	if d := read(adminOnly, "netcheck run"); d.Block == nil || !strings.Contains(d.Block.Message, "names no hosts") {
		t.Errorf("declared network command without hosts, scoped = %+v", d.Block)
	}
	for _, cmd := range []string{"pgstat show", "netcheck run"} {
		if d := read(nil, cmd); d.Block != nil {
			t.Errorf("%q without a scope: %v", cmd, d.Block)
		}
	}
}

// BenchmarkGateShellScope is what placing a shell command's destinations
// adds to the gate's decision: a network read (curl to a datasource)
// and a change (kubectl on a context), without a scope and with one.
func BenchmarkGateShellScope(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := shellScopeGate(b)
	s := NewSessionState()
	s.Context.Add(Resource{ID: "node:admin", Kind: "node", Name: "admin"}, now)
	s.FSM.OnToolSuccess(KindResolve, "discover", "admin")
	sc := &Scope{Hosts: []string{"admin", "web-*"}, Kubernetes: []string{"prod"}, Datasources: []string{"main"}}
	for _, c := range []struct {
		name string
		a    Action
	}{
		{"read", Action{Tool: "read", Kind: KindRead, Target: "admin", Command: "curl -s 'http://prometheus-main:9090/api/v1/query?query=up'"}},
		{"change", Action{Tool: "control", Name: "command", Kind: KindWrite, Target: "admin", Command: "kubectl --context prod -n shop rollout restart deploy/checkout"}},
	} {
		for _, sv := range []struct {
			name  string
			scope *Scope
		}{{"none", nil}, {"scoped", sc}} {
			b.Run(c.name+"/"+sv.name, func(b *testing.B) {
				who := Requester{User: "U1", Operator: true, Scope: sv.scope}
				b.ReportAllocs()
				for b.Loop() {
					if d := g.Authorize(s, c.a, LevelControlled, who, now); d.Block != nil {
						b.Fatal(d.Block)
					}
				}
			})
		}
	}
}
