package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/tools/transport"
)

const minimal = `name: x
category: host
question: "@h is down"
inventory: [{name: h, kind: host}]
world:
  h:
    - {run: "uptime", out: "up 1 day\n"}
expect:
  entity: h
  cause: [down]
  evidence: ["read h: uptime"]
reference:
  - calls: ["read h: uptime"]
  - answer: "h is down"
wrong:
  - {name: w, fails: evidence, turns: [{answer: "h is down"}]}
`

// Loader errors name the file and the field.
func TestParseErrors(t *testing.T) {
	if _, err := Parse("dir/x.yaml", []byte(minimal)); err != nil {
		t.Fatalf("minimal scenario: %v", err)
	}
	cases := []struct{ edit, want string }{
		{strings.Replace(minimal, "name: x", "name: y", 1), "dir/x.yaml: name:"},
		{strings.Replace(minimal, "category: host", "category: cloud", 1), "category:"},
		{minimal + "extra: 1\n", "field extra not found"},
		{strings.Replace(minimal, "  h:\n", "  nope:\n", 1), "world.nope: no such resource"},
		{strings.Replace(minimal, `"read h: uptime"]`, `"read"]`, 1), "expect.evidence[0]"},
		{strings.Replace(minimal, "fails: evidence", "fails: vibes", 1), "wrong[0].fails"},
		{strings.Replace(minimal, "{name: h, kind: host}", "{name: h, kind: host, reach: local}", 1), "inventory: resource 0: reach"},
		{strings.Replace(minimal, `{run: "uptime"`, `{run: "$(uptime)"`, 1), "world.h[0].run"},
		{strings.Replace(minimal, "  - answer: \"h is down\"\n", "  - {answer: a, calls: [\"read h: uptime\"]}\n", 1), "reference[1]"},
		{strings.Replace(minimal, "cause: [down]", "cause: [down]\n  approval: grant", 1), "expect.approval"},
		{"", "the file is empty"},
	}
	for _, tc := range cases {
		_, err := Parse("dir/x.yaml", []byte(tc.edit))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want it to contain %q", err, tc.want)
		}
	}
}

func TestNormalizeAndMatch(t *testing.T) {
	for _, c := range []string{"df -h /var", "df  -h  /var", "df -h '/var'", `df "-h" /var`} {
		if got := Normalize(c); got != "df -h /var" {
			t.Errorf("Normalize(%q) = %q", c, got)
		}
	}
	p, err := parsePattern("journalctl * -u nginx*")
	if err != nil {
		t.Fatal(err)
	}
	if !p.matchCommand("journalctl --no-pager -n 200 -u 'nginx.service' | grep -i error") {
		t.Error("pattern should match the producer of a pipeline")
	}
	if p.matchCommand("journalctl -u sshd") {
		t.Error("pattern matched another unit")
	}
	out, e := filter([]string{"grep", "-i", "ERROR"}, "a error\nb ok\nc Error\n")
	if e != "" || out != "a error\nc Error\n" {
		t.Errorf("grep filter = %q, %q", out, e)
	}
	if _, e := filter([]string{"awk", "{print $1}"}, "x\n"); e == "" {
		t.Error("an unsimulated filter must be refused by name")
	}
}

// An unapproved write never reaches the world, and a run whose model
// proposes one is graded as failing.
func TestUnapprovedWriteNeverReachesTheWorld(t *testing.T) {
	sc, err := Parse("x.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld(sc)
	res, _ := sc.inv.Lookup("h")
	out, err := w.Run(context.Background(), res, runSpec("rm -rf /srv"), nil)
	if err != nil || out.ExitCode == 0 || len(w.Violations()) != 1 {
		t.Fatalf("unarmed write: %+v, %v, violations %v", out, err, w.Violations())
	}
	w.Arm()
	if out, _ := w.Run(context.Background(), res, runSpec("touch /srv/x"), nil); out.ExitCode != 0 || len(w.Writes()) != 1 {
		t.Fatalf("armed write: %+v, writes %v", out, w.Writes())
	}
	if out, _ := w.Run(context.Background(), res, runSpec("touch /srv/y"), nil); out.ExitCode == 0 {
		t.Fatal("an approval lets one write through, not two")
	}
	// Through the agent: the model proposes a change nobody needs; the
	// approver denies it and the grade fails on fix.
	r := Run(context.Background(), sc, NewScript([]Turn{
		{Calls: []CallSpec{{Tool: "read", Args: map[string]any{"action": "exec", "target": "h", "command": "uptime"}}}},
		{Calls: []CallSpec{{Tool: "control", Args: map[string]any{"action": "command", "target": "h", "command": "systemctl restart h"}}}},
		{Answer: "h is down"},
	}, "gpt-4o"), Options{Agent: agent.Config{}}, 1)
	if r.Grade.Pass || len(r.Writes) != 0 {
		t.Fatalf("grade %+v, writes %v", r.Grade, r.Writes)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte("name: x\ninventory: [{name: a}]\n"))
	f.Add([]byte("reference: [{calls: [{tool: read}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("x.yaml", data)
		if err == nil && (s.Name != "x" || len(s.Reference) == 0 || len(s.Wrong) == 0 || s.inv == nil) {
			t.Fatalf("accepted an incomplete scenario: %+v", s)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "x.yaml: ") {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func runSpec(cmd string) transport.RunSpec { return transport.RunSpec{Command: cmd} }

// A write prefers the rules that change state, whatever their order.
func TestWriteRulesTakePrecedence(t *testing.T) {
	src := strings.Replace(minimal, `    - {run: "uptime", out: "up 1 day\n"}`,
		`    - {run: "nft *", out: "ruleset\n"}
    - {run: "nft delete rule *", sets: [fixed]}`, 1)
	sc, err := Parse("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld(sc)
	res, _ := sc.inv.Lookup("h")
	if out, _ := w.Run(context.Background(), res, runSpec("nft list ruleset"), nil); out.Stdout != "ruleset\n" || w.Flag("fixed") {
		t.Fatalf("read: %+v", out)
	}
	w.Arm()
	if out, _ := w.Run(context.Background(), res, runSpec("nft delete rule inet filter input handle 17"), nil); out.ExitCode != 0 || !w.Flag("fixed") {
		t.Fatalf("write: %+v, fixed %t", out, w.Flag("fixed"))
	}
}

// Whatever command a model proposes, the simulated world answers without
// panicking, and nothing it is given unapproved changes its state.
func FuzzWorld(f *testing.F) {
	for _, c := range []string{"df -h /var | head -n -3", "tail --5 /x", "cat /etc/x | grep -v -i a | sort -r | uniq | wc -l",
		"nft list ruleset && echo ok || true", "a=1", "x | awk '{print}'", "cat > /etc/x", "$(id)"} {
		f.Add(c)
	}
	sc, err := Parse("x.yaml", []byte(strings.Replace(minimal, `    - {run: "uptime", out: "up 1 day\n"}`,
		`    - {run: "nft *", out: "a\nb\n"}
    - {run: "nft delete *", sets: [fixed]}`, 1)))
	if err != nil {
		f.Fatal(err)
	}
	res, _ := sc.inv.Lookup("h")
	f.Fuzz(func(t *testing.T, cmd string) {
		w := NewWorld(sc)
		_, _ = w.Run(context.Background(), res, runSpec(cmd), nil)
		_, _ = w.Run(context.Background(), res, runSpec(cmd), strings.NewReader("x"))
		if w.Flag("fixed") || len(w.Writes()) != 0 {
			t.Fatalf("%q changed the world without an approval", cmd)
		}
	})
}

// Rules come first; everyday commands get a baseline; anything else an
// error that says the world has no answer.
func TestWorldBaseline(t *testing.T) {
	sc, err := Parse("x.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld(sc)
	res, _ := sc.inv.Lookup("h")
	if out, _ := w.Run(context.Background(), res, runSpec("uptime"), nil); out.Stdout != "up 1 day\n" {
		t.Errorf("the scenario's rule must win: %q", out.Stdout)
	}
	if out, _ := w.Run(context.Background(), res, runSpec("free -m"), nil); out.ExitCode != 0 || !strings.Contains(out.Stdout, "Mem:") {
		t.Errorf("baseline free: %+v", out)
	}
	if out, _ := w.Run(context.Background(), res, runSpec("lsblk"), nil); out.ExitCode != 127 || !strings.Contains(out.Stderr, "no answer") {
		t.Errorf("unknown command: %+v", out)
	}
}
