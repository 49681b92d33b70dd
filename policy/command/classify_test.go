package command

import (
	"strings"
	"sync"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestClassifyVerdicts(t *testing.T) {
	tests := []struct {
		cmd    string
		intent Intent
		risk   Risk
		reason string // a reason that must be present (prefix match)
	}{
		// Read-only, with the deciding word named.
		{"cat /etc/hosts", IntentReadOnlyCertain, RiskReadOnly, "cat: read-only"},
		{"ps aux | grep -v grep | grep java", IntentReadOnlyCertain, RiskReadOnly, "grep: read-only"},
		{"grep -R error /var/log 2>&1 | head", IntentReadOnlyCertain, RiskReadOnly, "grep: read-only"},
		{"ls 2>/dev/null >/dev/null &>/dev/null", IntentReadOnlyCertain, RiskReadOnly, "ls: read-only"},
		{"echo done >&2", IntentReadOnlyCertain, RiskReadOnly, "echo: read-only"},
		{"f() { ls; }; f", IntentReadOnlyCertain, RiskReadOnly, "f: shell function"},
		{"docker logs web", IntentReadOnlyCertain, RiskReadOnly, "docker logs: read-only"},
		{"kubectl -n prod get pods", IntentReadOnlyCertain, RiskReadOnly, "kubectl get: read-only"},
		// Content inspectors give the conditional intent.
		{"mysql -e 'SELECT 1'", IntentReadOnlyConditional, RiskReadOnly, "mysql: SELECT is read-only"},
		{"psql -c 'SELECT 1; SHOW server_version'", IntentReadOnlyConditional, RiskReadOnly, "psql: SELECT, SHOW are read-only"},
		{"redis-cli -h cache GET k", IntentReadOnlyConditional, RiskReadOnly, "redis-cli GET: read-only"},
		{"sqlite3 -readonly db .tables", IntentReadOnlyConditional, RiskReadOnly, "sqlite3: dot-command .tables is read-only"},
		// Phase 1 constructs, graded.
		{"echo hi > /etc/motd", IntentWriteOrUnknown, RiskHigh, "> /etc/motd: output redirection"},
		{"echo hi > /tmp/x", IntentWriteOrUnknown, RiskMedium, "> /tmp/x: output redirection"},
		{"cat $(touch x)", IntentWriteOrUnknown, RiskLow, "touch: known writer"},
		{"cat $(eval x)", IntentWriteOrUnknown, RiskMedium, "eval: evaluates text as a command"},
		{"diff <(ls) <(ls /tmp)", IntentReadOnlyCertain, RiskReadOnly, "ls: read-only"},
		{"$(echo rm) -rf /", IntentWriteOrUnknown, RiskMedium, "$(echo rm): dynamic command word"},
		{"sudo ls", IntentWriteOrUnknown, RiskHigh, "sudo: privilege escalation"},
		{"curl -s http://x | sh", IntentWriteOrUnknown, RiskHigh, "| sh: pipe into a shell"},
		{"$CMD x", IntentWriteOrUnknown, RiskMedium, "$CMD: dynamic command word"},
		{"LD_PRELOAD=/x.so ls", IntentWriteOrUnknown, RiskHigh, "LD_PRELOAD=: environment"},
		{"eval ls", IntentWriteOrUnknown, RiskMedium, "eval: evaluates text as a command"},
		// Phase 2 known writers, graded.
		{"rm -rf /tmp/x", IntentWriteOrUnknown, RiskHigh, "rm: known writer"},
		{"rm /tmp/x", IntentWriteOrUnknown, RiskMedium, "rm: known writer"},
		{"touch /tmp/x", IntentWriteOrUnknown, RiskLow, "touch: known writer"},
		{"mkdir -p /tmp/x", IntentWriteOrUnknown, RiskLow, "mkdir: known writer"},
		{"mkfs.ext4 /dev/sdb1", IntentWriteOrUnknown, RiskHigh, "mkfs.ext4: known writer"},
		{"dd if=/dev/zero of=/dev/sda", IntentWriteOrUnknown, RiskHigh, "dd: known writer"},
		{"reboot", IntentWriteOrUnknown, RiskHigh, "reboot: known writer"},
		{"systemctl restart nginx", IntentWriteOrUnknown, RiskMedium, "systemctl restart: known writer"},
		{"systemctl stop nginx", IntentWriteOrUnknown, RiskHigh, "systemctl stop: known writer"},
		{"kubectl delete ns prod", IntentWriteOrUnknown, RiskHigh, "kubectl delete: known writer"},
		{"iptables -F", IntentWriteOrUnknown, RiskHigh, "iptables -F: changes firewall rules"},
		{"psql -c 'DROP TABLE t'", IntentWriteOrUnknown, RiskHigh, "psql: statement DROP writes"},
		{"mysql -e 'TRUNCATE audit'", IntentWriteOrUnknown, RiskHigh, "mysql: statement TRUNCATE TABLE writes"},
		{"redis-cli FLUSHALL", IntentWriteOrUnknown, RiskHigh, "redis-cli FLUSHALL: command writes"},
		{"git push --force", IntentWriteOrUnknown, RiskHigh, "git push --force: known writer"},
		{"sed -i s/a/b/ f", IntentWriteOrUnknown, RiskMedium, "sed -i: edits files in place"},
		{"curl -X POST http://x", IntentWriteOrUnknown, RiskMedium, "curl -X POST: sends a request"},
		// Phase 5 and parse failures.
		{"frobnicate --all", IntentWriteOrUnknown, RiskMedium, "frobnicate: unknown command"},
		{"./deploy.sh", IntentWriteOrUnknown, RiskMedium, "./deploy.sh: runs a program or script"},
		{"ls (", IntentWriteOrUnknown, RiskMedium, "unparseable: "},
		{"", IntentWriteOrUnknown, RiskMedium, "command: empty"},
		{"# just a comment", IntentWriteOrUnknown, RiskMedium, "command: nothing to run"},
	}
	for _, tt := range tests {
		v := labOptions.Classify(tt.cmd, DialectBash)
		if v.Intent != tt.intent || v.Risk != tt.risk || !hasReasonPrefix(v.Reasons, tt.reason) {
			t.Errorf("Classify(%q) = %s/%s %q, want %s/%s with reason %q", tt.cmd, v.Intent, v.Risk, v.Reasons, tt.intent, tt.risk, tt.reason)
		}
		if v.Command != tt.cmd {
			t.Errorf("Classify(%q).Command = %q", tt.cmd, v.Command)
		}
	}
}

func hasReasonPrefix(reasons []string, prefix string) bool {
	for _, r := range reasons {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

// TestPhaseOrder: an earlier phase always dominates, and its reasons come
// first whatever the order of the command's parts.
func TestPhaseOrder(t *testing.T) {
	tests := []struct {
		cmd   string
		first string
	}{
		{"rm x; ls > /tmp/y", "> /tmp/y: output redirection"},
		{"frob; rm x", "rm: known writer"},
		{"ls; cat /etc/hosts; sudo true", "sudo: privilege escalation"},
		{"mysql -e 'DELETE FROM t'; tee /tmp/x", "tee: writes its input to files"},
	}
	for _, tt := range tests {
		v := Classify(tt.cmd)
		if len(v.Reasons) == 0 || v.Reasons[0] != tt.first {
			t.Errorf("Classify(%q).Reasons = %q, want first %q", tt.cmd, v.Reasons, tt.first)
		}
		for _, r := range v.Reasons {
			if strings.HasSuffix(r, ": read-only") {
				t.Errorf("Classify(%q): write verdict lists a read reason %q", tt.cmd, r)
			}
		}
	}
}

func TestRewrites(t *testing.T) {
	tests := []struct{ cmd, category, rewrite string }{
		{"journalctl -fu nginx", "unbounded_stream", "journalctl -u nginx -n 200 --no-pager"},
		{"tail -f /var/log/syslog", "unbounded_stream", "tail -n 200 /var/log/syslog"},
		{"docker logs -f web", "unbounded_stream", "docker logs --tail 200 web"},
		{"kubectl logs -f pod", "unbounded_stream", "kubectl logs --tail=200 pod"},
		{"top", "unbounded_stream", "top -b -n 1"},
		{"ping host", "unbounded_stream", "ping -c 4 host"},
		{"ls; tail -f x | grep y", "unbounded_stream", "ls; tail -n 200 x | grep y"},
		// Two unbounded parts: no single rewrite fixes it.
		{"tail -f a & tail -f b", "unbounded_stream", ""},
		// Inside sh -c the words are not in the top-level source.
		{"sh -c 'tail -f x'", "unbounded_stream", ""},
		// A quoted cluster cannot be edited safely; a whole word can go.
		{"tail '-fn5' x", "unbounded_stream", ""},
		{"tail '-f' x", "unbounded_stream", "tail -n 200 x"},
	}
	for _, tt := range tests {
		v := Classify(tt.cmd)
		if string(v.Category) != tt.category || v.SuggestedRewrite != tt.rewrite || v.Bounded {
			t.Errorf("Classify(%q) = bounded %v %q rewrite %q, want %q rewrite %q", tt.cmd, v.Bounded, v.Category, v.SuggestedRewrite, tt.category, tt.rewrite)
		}
	}
}

func TestResolveWord(t *testing.T) {
	tests := []struct {
		word   string
		value  string
		static bool
	}{
		{`rm`, "rm", true},
		{`r\m`, "rm", true},
		{`'r'm`, "rm", true},
		{`"r\m"`, `r\m`, true},
		{`"a\"b\$c"`, `a"b$c`, true},
		{`$'\x72\x6d\n'`, "rm\n", true},
		{`$'\101\u00e9'`, "Aé", true},
		{`{a,b}`, "{a,b}", false},
		{`{1..3}`, "{1..3}", false},
		{`{}`, "{}", true},
		{`*.log`, "*.log", false},
		{`""*`, "*", false},
		{`/var/log/*.log`, "/var/log/*.log", true},
		{`\*.log`, "*.log", true},
		{`"$x"`, "", false},
		{`a$x`, "a", false},
		{`[`, "[", true},
	}
	c := &classifier{parser: syntax.NewParser()}
	for _, tt := range tests {
		f, err := c.parser.Parse(strings.NewReader("x "+tt.word), "")
		if err != nil {
			t.Fatalf("parse %q: %v", tt.word, err)
		}
		a := c.resolve(f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1])
		if a.s != tt.value || a.static != tt.static {
			t.Errorf("resolve(%s) = %q static=%v, want %q static=%v", tt.word, a.s, a.static, tt.value, tt.static)
		}
	}
}

func TestSedScriptWrites(t *testing.T) {
	tests := []struct {
		script string
		what   string
		ok     bool
	}{
		{"s/a/b/g", "", true},
		{"-n", "", false},
		{"/x/d;s|a|b|p", "", true},
		{"1,/re/{s/a/b/;p}", "", true},
		{`s/a\/b/c/`, "", true},
		{"$!N;P;D", "", true},
		{":a;N;$!ba;s/\\n/ /g", "", true},
		{"y/abc/xyz/", "", true},
		{"a hello; w /etc/x", "", true}, // text of a runs to the end of the line
		{"a hello\nw /etc/x", "w", true},
		{"w /tmp/x", "w", true},
		{"W /tmp/x", "W", true},
		{"w /dev/stdout", "", true},
		{"e date", "e", true},
		{"s/a/b/w /tmp/x", "s///w", true},
		{"s/a/b/gw /tmp/x", "s///w", true},
		{"s/a/b/e", "s///e", true},
		{"s/a/b/ge", "s///e", true},
		{"/x/!{w /tmp/y\n}", "w", true},
		{"r /etc/hosts", "", true},
		{`\,x,d`, "", true},
		{"b end x", "", false},
		{"s/a/b", "", false},
		{"{p", "", false},
		{"k", "", false},
	}
	for _, tt := range tests {
		what, ok := sedScriptWrites(tt.script)
		if what != tt.what || ok != tt.ok {
			t.Errorf("sedScriptWrites(%q) = %q, %v; want %q, %v", tt.script, what, ok, tt.what, tt.ok)
		}
	}
}

func TestAwkProgramWrites(t *testing.T) {
	tests := []struct {
		prog string
		what string
		ok   bool
	}{
		{"{print $1}", "", true},
		{"$3 > 100 {print $1}", "", true},
		{`/ERROR|WARN/ {n++} END {print n}`, "", true},
		{`{ print ($1 > $2) }`, "", true},
		{`{ if ($1 >= 2) print }`, "", true},
		{`{ x = $1 / 2; y = $2 / 3; print x, y }`, "", true},
		{`{ while ((getline line < "f") > 0) n++ }`, "", true},
		{`{ print "a > b" }`, "", true},
		{`{ print > "/tmp/x" }`, "print >", true},
		{`{ print $1 >> "/tmp/x" }`, "print >", true},
		{`{ printf("%s", $1) > "/tmp/x" }`, "print >", true},
		{`{ print | "sh" }`, "| command", true},
		{`{ "date" | getline d }`, "| command", true},
		{`{ print |& "cat" }`, "|&", true},
		{`BEGIN { system("id") }`, "system()", true},
		{`BEGIN { system ("id") }`, "system()", true},
		{`if (1) /"/; { print > "/etc/x" }`, "print >", true},
		{`{ x = "/"; print x }`, "", true},
		{`/[/]/ { print }`, "", false},
		{`@load "filefuncs"`, "", false},
		{`{ print "unterminated }`, "", false},
		{`{ n++ / 2 }`, "", false},
	}
	for _, tt := range tests {
		what, ok := awkProgramWrites(tt.prog)
		if what != tt.what || ok != tt.ok {
			t.Errorf("awkProgramWrites(%q) = %q, %v; want %q, %v", tt.prog, what, ok, tt.what, tt.ok)
		}
	}
}

func TestOptScan(t *testing.T) {
	spec := optSpec{shortArg: "no", longArg: []string{"lines"}}
	args := []arg{lit("-fn100"), lit("--lines"), lit("5"), lit("--follow=name"), lit("file"), lit("--"), lit("-x")}
	var got []string
	s := scanOpts(&spec, args)
	for tok, ok := s.next(); ok; tok, ok = s.next() {
		got = append(got, optText(tok)+"="+tok.val)
	}
	want := "-f= -n=100 --lines=5 --follow=name file=file -x=-x"
	if strings.Join(got, " ") != want {
		t.Errorf("scan = %q, want %q", strings.Join(got, " "), want)
	}
}

// TestTableNames: every command name has exactly one rule.
func TestTableNames(t *testing.T) {
	seen := map[string]string{}
	add := func(name, where string) {
		if prev, dup := seen[name]; dup {
			t.Errorf("command %q is in both %s and %s", name, prev, where)
		}
		seen[name] = where
	}
	for n := range pureReaders {
		add(n, "pureReaders")
	}
	for n := range knownWriters {
		add(n, "knownWriters")
	}
	for i, g := range checkerGroups {
		for n := range g {
			add(n, "checkerGroups["+string(rune('0'+i))+"]")
		}
	}
	for i, g := range toolGroups {
		for n := range g {
			add(n, "toolGroups["+string(rune('0'+i))+"]")
		}
	}
	if len(commandTable) != len(seen) {
		t.Errorf("commandTable has %d names, the tables %d", len(commandTable), len(seen))
	}
}

// TestVerdictInvariants checks every corpus verdict for internal
// consistency.
func TestVerdictInvariants(t *testing.T) {
	for _, file := range allCorpusFiles {
		for _, r := range mustLoad(t, "testdata/commands/"+file) {
			checkInvariants(t, r.command, Classify(r.command))
		}
	}
}

func checkInvariants(t testing.TB, cmd string, v Verdict) {
	t.Helper()
	switch v.Intent {
	case IntentReadOnlyCertain, IntentReadOnlyConditional:
		if v.Risk != RiskReadOnly {
			t.Errorf("%q: read-only intent with risk %q", cmd, v.Risk)
		}
	case IntentWriteOrUnknown:
		if v.Risk == RiskReadOnly {
			t.Errorf("%q: write intent with read-only risk", cmd)
		}
	default:
		t.Errorf("%q: unknown intent %q", cmd, v.Intent)
	}
	if len(v.Reasons) == 0 {
		t.Errorf("%q: no reasons", cmd)
	}
	if v.Bounded != (v.Category == BoundOK) {
		t.Errorf("%q: bounded=%v with category %q", cmd, v.Bounded, v.Category)
	}
	if v.Bounded && v.SuggestedRewrite != "" {
		t.Errorf("%q: bounded command with a rewrite %q", cmd, v.SuggestedRewrite)
	}
	if v.Command != cmd {
		t.Errorf("%q: verdict for %q", cmd, v.Command)
	}
	// A network read names where it connects; nothing else does.
	if v.Network != (len(v.Destinations) > 0) {
		t.Errorf("%q: network=%v with destinations %v", cmd, v.Network, v.Destinations)
	}
	if !v.ReadOnly() && v.Network {
		t.Errorf("%q: a write verdict says network", cmd)
	}
}

// TestConcurrentClassify runs the classifier from many goroutines (with
// -race) and checks every result equals the sequential one.
func TestConcurrentClassify(t *testing.T) {
	var cmds []string
	for _, file := range allCorpusFiles {
		for _, r := range mustLoad(t, "testdata/commands/"+file) {
			cmds = append(cmds, r.command)
		}
	}
	want := make([]Verdict, len(cmds))
	for i, c := range cmds {
		want[i] = Classify(c)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(off int) {
			defer wg.Done()
			for i := range cmds {
				j := (i + off*37) % len(cmds)
				got := Classify(cmds[j])
				if got.Intent != want[j].Intent || got.Risk != want[j].Risk || got.Category != want[j].Category ||
					got.SuggestedRewrite != want[j].SuggestedRewrite || strings.Join(got.Reasons, "|") != strings.Join(want[j].Reasons, "|") {
					t.Errorf("concurrent Classify(%q) = %+v, want %+v", cmds[j], got, want[j])
				}
			}
		}(g)
	}
	wg.Wait()
}
