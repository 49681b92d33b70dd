package command

import (
	"fmt"
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
	c := classifierPool.Get().(*classifier)
	defer classifierPool.Put(c)
	before := c.plain
	got, mark, ok := c.plainFile(src)
	if ok != isPlain(src) {
		t.Fatalf("%q: plainFile takes it %v, the recogniser %v", src, ok, isPlain(src))
	}
	if !ok {
		if len(c.plain.words) != len(before.words) || len(c.plain.parts) != len(before.parts) || len(c.plain.lits) != len(before.lits) || len(c.plain.rdrs) != len(before.rdrs) {
			t.Fatalf("%q: refused, but plainFile kept nodes", src)
		}
		return false
	}
	defer c.releasePlain(mark)
	for _, p := range []*syntax.Parser{c.bash, c.posix} {
		want, err := p.Parse(strings.NewReader(src), "")
		if err != nil {
			t.Fatalf("%q: taken as plain, but the parser refuses it: %v", src, err)
		}
		if w, g := treeText(want), treeText(got); w != g {
			t.Fatalf("%q: parser's tree\n%s\nplain tree\n%s", src, w, g)
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

// treeText spells out every node of a tree with its type, offsets and
// every field the classifier reads, so two trees compare as text.
func treeText(f *syntax.File) string {
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			b.WriteString(")")
			return true
		}
		fmt.Fprintf(&b, "(%T [%d,%d)", n, n.Pos().Offset(), n.End().Offset())
		switch x := n.(type) {
		case *syntax.File:
			fmt.Fprintf(&b, " stmts=%d last=%d", len(x.Stmts), len(x.Last))
		case *syntax.Stmt:
			fmt.Fprintf(&b, " neg=%v bg=%v coproc=%v disown=%v semi=%d redirs=%d comments=%d",
				x.Negated, x.Background, x.Coprocess, x.Disown, x.Semicolon.Offset(), len(x.Redirs), len(x.Comments))
		case *syntax.BinaryCmd:
			fmt.Fprintf(&b, " op=%v oppos=%d", x.Op, x.OpPos.Offset())
		case *syntax.CallExpr:
			fmt.Fprintf(&b, " assigns=%d args=%d", len(x.Assigns), len(x.Args))
		case *syntax.Word:
			fmt.Fprintf(&b, " parts=%d", len(x.Parts))
		case *syntax.Lit:
			fmt.Fprintf(&b, " %q", x.Value)
		case *syntax.SglQuoted:
			fmt.Fprintf(&b, " left=%d right=%d dollar=%v %q", x.Left.Offset(), x.Right.Offset(), x.Dollar, x.Value)
		case *syntax.Redirect:
			fmt.Fprintf(&b, " op=%v oppos=%d n=%v hdoc=%v", x.Op, x.OpPos.Offset(), x.N != nil, x.Hdoc != nil)
		case *syntax.DblQuoted:
			fmt.Fprintf(&b, " left=%d right=%d dollar=%v parts=%d", x.Left.Offset(), x.Right.Offset(), x.Dollar, len(x.Parts))
		default:
			b.WriteString(" unexpected")
		}
		b.WriteString("\n")
		return true
	})
	return b.String()
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
		"ps aux | grep nginx | head -n 5", `grep 'a b' f`, `grep "a b" f`, `echo "" '' a""b''c`, `'ls' -l`, `"ls"`,
		`x --format='{{.Names}}' | y "a|b" '|'`, `echo "it's" 'say "hi"'`, `'if' x`, `"time" ls`, "ls|wc", "a | b|c  |  d", "x | time y", "x | a=b y", "cat f | sh",
		"ls > f", "ls >f", "ls>f", "ls 2>/dev/null", "ls 2>&1", "ls 2>&1 | wc -l", "ls >> f", "ls < f", "ls 1>f 2>g",
		"ls >a>b", "ls > 'a b'", `ls >"a"b`, "ls 2> f x", "ls >&2", "ls >&-", "ls 10>f", "ls a2>f", "ls 2>3>f", "ls >2>f",
		"ls x>f", "ls 'x'>f", "ls \"2\">f", "ls 2 >f", "ls 2< f", "ls <f | grep x > g", "> f ls", "2>f ls", "ls >", "ls > |",
		"ls >| f", "ls <> f", "ls << f", "ls <<< f", "ls <& 0", "ls >(x)", "ls <(x)", "ls &> f", "ls 2>&1|wc", "ls >f|wc",
		"if >f", "ls >if", "a=b >f", "ls | >f x", "ls 9>f", "ls 0<f", "exec >f", "ls >>f 2>>g", "ls >> >f",
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
	for _, src := range []string{"ls; rm x", "ls #x", "ls ~", "ls *", "ls {a,b}", "ls\tx", "if", "a=b ls", "time ls",
		"a || b", "a |", "| a", "a | | b", "a |& b", "a | if", "a | x=1", `echo "$x"`, `echo "a\b"`, "echo `x`",
		`echo 'a`, `echo "a`, `'a=b' c`, `echo "!x"`, "echo 'a\tb'", `echo $'x'`} {
		if isPlain(src) {
			t.Errorf("%q taken as plain", src)
		}
	}
}

// FuzzPlainMatchesParser: any text the plain path takes parses to the
// same tree and gets the same verdict as through the parser.
func FuzzPlainMatchesParser(f *testing.F) {
	for _, s := range []string{"ls -la /etc", "kubectl get pods -n x=y", "a b", "if x", "@test", "x%y +z", "a|b | c", `a 'b c' "d|e"f`, `"" x`, "ls 2>/dev/null", "a >f | b <g 2>&1", "x 1>>'y z'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkPlain(t, src)
	})
}

// isPlain is the plain path's definition, written apart from plainFile
// (which checks as it builds) so that the two can be compared: src is a
// plain simple command or a pipeline of them joined by single |, words
// of plain bytes and quoted strings, the first word of each command
// neither an assignment nor reserved, and after it plain redirections.
func isPlain(src string) bool {
	words := 0 // in the current command
	for i := 0; i < len(src); {
		switch src[i] {
		case ' ':
			i++
			continue
		case '|':
			if words == 0 {
				return false
			}
			words = 0
			i++
			continue
		case '<', '>':
			end, ok := plainRedirEnd(src, i)
			if !ok || words == 0 {
				return false
			}
			i = end
			continue
		}
		end, ok := plainWordEnd(src, i)
		if !ok {
			return false
		}
		if plainDigitsBefore(src, i, end) {
			// One digit is the descriptor of the redirection that follows.
			if end != i+1 || words == 0 {
				return false
			}
			end, ok = plainRedirEnd(src, end)
			if !ok {
				return false
			}
			i = end
			continue
		}
		if words == 0 {
			w := src[i:end]
			if strings.IndexByte(w, '=') >= 0 || plainReserved[w] {
				return false
			}
		}
		words++
		i = end
	}
	return words > 0
}

// plainQuoted reports whether b may stand inside quotes of the given kind
// on the plain path: printable ASCII, and in double quotes none of the
// bytes that expand or escape there ($, `, \, and ! to be safe).
func plainQuoted(b byte, quote byte) bool {
	if b < 0x20 || b > 0x7e || b == quote {
		return false
	}
	return quote == '\'' || b != '$' && b != '`' && b != '\\' && b != '!'
}

// plainWordEnd returns the end of the plain word starting at src[i]: runs
// of plain bytes and whole single- or double-quoted strings, up to a
// space, a |, a < or > or the end. ok is false for anything else.
func plainWordEnd(src string, i int) (end int, ok bool) {
	for i < len(src) {
		switch ch := src[i]; {
		case ch == ' ' || ch == '|' || ch == '<' || ch == '>':
			return i, true
		case plainByte[ch]:
			i++
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(src) && src[j] != ch {
				if !plainQuoted(src[j], ch) {
					return 0, false
				}
				j++
			}
			if j == len(src) {
				return 0, false // unterminated
			}
			i = j + 1
		default:
			return 0, false
		}
	}
	return i, true
}

// plainRedirEnd returns the end of the redirection at src[i] (its
// operator, blanks and a plain word), ok false if it is none the plain
// path takes.
func plainRedirEnd(src string, i int) (end int, ok bool) {
	op := plainRedirOp(src, i)
	if op == 0 {
		return 0, false
	}
	i += op
	for i < len(src) && src[i] == ' ' {
		i++
	}
	end, ok = plainWordEnd(src, i)
	return end, ok && end > i && !plainDigitsBefore(src, i, end)
}
