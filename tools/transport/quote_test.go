package transport

import (
	"strings"
	"testing"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

func TestShellQuote(t *testing.T) {
	tests := map[string]string{
		"":                  "''",
		"/var/log/syslog":   "/var/log/syslog",
		"nginx.service":     "nginx.service",
		"a b":               "'a b'",
		"'; rm -rf / #":     `''\''; rm -rf / #'`,
		"$(reboot)":         "'$(reboot)'",
		"`id`":              "'`id`'",
		"*.conf":            "'*.conf'",
		"~root":             "'~root'",
		"it's":              `'it'\''s'`,
		"line1\nline2":      "'line1\nline2'",
		"--since=yesterday": "--since=yesterday",
	}
	for in, want := range tests {
		if got := ShellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
		if got := roundTrip(t, ShellQuote(in)); got != in {
			t.Errorf("shell reads shellQuote(%q) back as %q", in, got)
		}
	}
}

// roundTrip parses "echo <word>" with a real shell parser and returns what
// the word expands to, failing if it is not exactly one literal word.
func roundTrip(t testing.TB, word string) string {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader("echo "+word), "")
	if err != nil {
		t.Fatalf("parse %s: %v", word, err)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if len(f.Stmts) != 1 || !ok || len(call.Args) != 2 {
		t.Fatalf("%s is not one word of one command", word)
	}
	for _, part := range call.Args[1].Parts {
		switch part.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			t.Fatalf("%s has an expanding part %T", word, part)
		}
	}
	fields, err := expand.Fields(&expand.Config{}, call.Args[1])
	if err != nil {
		t.Fatalf("expand %s: %v", word, err)
	}
	if len(fields) != 1 {
		t.Fatalf("%s expands to %d fields", word, len(fields))
	}
	return fields[0]
}

func FuzzShellQuote(f *testing.F) {
	for _, s := range []string{"", "a", "'; rm -rf / #", "$(id)", "a'b'c", "\\", "\n", "é ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return // NUL cannot be an argument; the parser checking us needs UTF-8
		}
		q := ShellQuote(s)
		if isShellSafe(q) && q != s {
			t.Fatalf("bare quoting changed the value: %q -> %q", s, q)
		}
		if got := roundTrip(t, q); got != s {
			t.Fatalf("shellQuote(%q) = %s reads back as %q", s, q, got)
		}
	})
}
