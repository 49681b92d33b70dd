package command

import (
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// checkPlain fails when src takes the plain-word path and the tree built
// for it differs from the one mvdan.cc/sh's parser builds in either
// dialect, or when the verdicts with and without the path differ.
func checkPlain(t *testing.T, src string) bool {
	t.Helper()
	if !isPlain(src) {
		return false
	}
	c := classifierPool.Get().(*classifier)
	defer classifierPool.Put(c)
	got, mark := c.plainFile(src)
	defer c.releasePlain(mark)
	for _, p := range []*syntax.Parser{c.bash, c.posix} {
		want, err := p.Parse(strings.NewReader(src), "")
		if err != nil {
			t.Fatalf("%q: taken as plain, but the parser refuses it: %v", src, err)
		}
		if len(want.Stmts) != 1 {
			t.Fatalf("%q: taken as plain, but the parser reads %d statements", src, len(want.Stmts))
		}
		ws, gs := want.Stmts[0], got.Stmts[0]
		if ws.Negated || ws.Background || ws.Coprocess || ws.Disown || len(ws.Redirs) > 0 || ws.Pos().Offset() != gs.Pos().Offset() {
			t.Fatalf("%q: statement differs from the parser's: %+v", src, ws)
		}
		call, ok := ws.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Assigns) > 0 || len(call.Args) != len(gs.Cmd.(*syntax.CallExpr).Args) {
			t.Fatalf("%q: the parser reads %T %+v", src, ws.Cmd, ws.Cmd)
		}
		for i, w := range call.Args {
			g := gs.Cmd.(*syntax.CallExpr).Args[i]
			lit, ok := w.Parts[0].(*syntax.Lit)
			if len(w.Parts) != 1 || !ok {
				t.Fatalf("%q: word %d is %d parts to the parser", src, i, len(w.Parts))
			}
			glit := g.Parts[0].(*syntax.Lit)
			if lit.Value != glit.Value || lit.Pos().Offset() != glit.Pos().Offset() || lit.End().Offset() != glit.End().Offset() ||
				w.Pos().Offset() != g.Pos().Offset() || w.End().Offset() != g.End().Offset() || len(g.Parts) != 1 {
				t.Fatalf("%q: word %d: parser %q [%d,%d), plain %q [%d,%d)", src, i,
					lit.Value, lit.Pos().Offset(), lit.End().Offset(), glit.Value, glit.Pos().Offset(), glit.End().Offset())
			}
		}
	}
	for _, d := range []Dialect{DialectBash, DialectPOSIX} {
		fast := ClassifyAs(src, d)
		noPlain = true
		slow := ClassifyAs(src, d)
		noPlain = false
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q in %s: plain path %+v, parser %+v", src, d, fast, slow)
		}
	}
	return true
}

// TestPlainMatchesParser holds the plain-word path to the parser on every
// corpus command it takes, on words the parser treats specially and on
// the words of every corpus command taken alone and wrapped in sh -c.
func TestPlainMatchesParser(t *testing.T) {
	cases := []string{
		"ls", " ls  -l ", "a=b", "a+=b ls", "ls a=b", "if", "fi", "then x", "time ls", "coproc x",
		"declare a=b", "export x", "local y", "let x", "function f", "select x", "@test x",
		"ls if done", "x@y %z +q", "ls -- -", "echo in do", "=x", "ls =x", ": a", ". x", "- -",
		"sh -c ls", "bash -c uptime", "sudo -u web ls", "env A=1 ls",
	}
	for _, f := range allCorpusFiles {
		for _, r := range mustLoad(t, "testdata/commands/"+f) {
			cases = append(cases, r.command)
			for _, w := range strings.Fields(r.command) {
				cases = append(cases, w, "sh -c "+w)
			}
		}
	}
	taken := 0
	for _, src := range cases {
		if checkPlain(t, src) {
			taken++
		}
	}
	if taken < 500 {
		t.Fatalf("only %d of %d commands took the plain path", taken, len(cases))
	}
	for _, src := range []string{"ls; rm x", "ls #x", "ls ~", "ls *", "ls {a,b}", "ls\tx", "ls 'a'", "if", "a=b ls", "time ls"} {
		if isPlain(src) {
			t.Errorf("%q taken as plain", src)
		}
	}
}

// FuzzPlainMatchesParser: any text the plain path takes parses to the
// same tree and gets the same verdict as through the parser.
func FuzzPlainMatchesParser(f *testing.F) {
	for _, s := range []string{"ls -la /etc", "kubectl get pods -n x=y", "a b", "if x", "@test", "x%y +z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkPlain(t, src)
	})
}
