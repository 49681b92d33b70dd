package command

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Most commands people ask about are one simple command of plain words
// (`kubectl get pods -n web`, `grep 'x y' f`), or a pipeline of them. For
// those the classifier builds the syntax tree mvdan.cc/sh would build, in
// nodes it keeps between calls, instead of running the parser, which
// allocates its node batches afresh on every Parse. The text qualifies
// only when it is words of plain bytes and quoted strings with nothing
// that expands or escapes in them, separated by spaces and single |, and
// the first word of each command is neither an assignment nor a word the
// parser treats specially; after its first word a command may redirect
// (>, >>, <, >& with an optional one-digit descriptor) to a plain word. So
// the tree is exactly the parser's. Anything
// else goes to the parser. TestPlainMatchesParser and
// FuzzPlainMatchesParser compare the two trees node by node.

// plainByte marks the bytes of plain words: no quoting, expansion, glob,
// brace, comment, tilde, redirection, operator or escape.
var plainByte = func() (t [256]bool) {
	for ch := '0'; ch <= '9'; ch++ {
		t[ch] = true
	}
	for ch := 'a'; ch <= 'z'; ch++ {
		t[ch], t[ch-'a'+'A'] = true, true
	}
	for _, ch := range "._/,:=+%@-" {
		t[ch] = true
	}
	return t
}()

// plainReserved are the first words the parser reads as more than a
// command name in some dialect: reserved words and the declaration,
// let, time, coproc and select clauses.
var plainReserved = map[string]bool{
	"if": true, "then": true, "elif": true, "else": true, "fi": true,
	"while": true, "until": true, "for": true, "in": true, "do": true, "done": true,
	"case": true, "esac": true, "select": true, "function": true, "time": true,
	"coproc": true, "let": true, "declare": true, "local": true, "export": true,
	"readonly": true, "typeset": true, "nameref": true, "@test": true,
}

// noPlain turns the plain-word path off (tests compare it with the parser).
var noPlain = false

// plainDbl is the nodes of a double-quoted string and its literal.
type plainDbl struct {
	dq   syntax.DblQuoted
	part [1]syntax.WordPart
	lit  syntax.Lit
}

// plainRedir is the nodes of one redirection and its descriptor.
type plainRedir struct {
	r syntax.Redirect
	n syntax.Lit
}

// plainNode is the nodes of one statement: a call, or a pipe of two.
type plainNode struct {
	stmt syntax.Stmt
	call syntax.CallExpr
	bin  syntax.BinaryCmd
}

// plainRoot is a file and its one statement.
type plainRoot struct {
	file  syntax.File
	stmts [1]*syntax.Stmt
}

// plainArena holds the nodes of plain commands between calls. Each slice
// is used as a stack: a command string classified inside another (sh -c)
// builds after the outer tree and frees only its own nodes.
type plainArena struct {
	roots []plainRoot
	nodes []plainNode
	words []syntax.Word
	args  []*syntax.Word
	parts []syntax.WordPart
	lits  []syntax.Lit
	sgls  []syntax.SglQuoted
	dbls  []plainDbl
	rdrs  []plainRedir
	rptrs []*syntax.Redirect
}

// plainMark is where the arenas stood before a plainFile.
type plainMark struct{ roots, nodes, words, args, parts, lits, sgls, dbls, rdrs, rptrs int }

// plainInSgl and plainInDbl mark the bytes that may stand inside single
// and double quotes on the plain path: printable ASCII other than the
// closing quote, and in double quotes none of the bytes that expand or
// escape there ($, `, \, and ! to be safe).
var plainInSgl, plainInDbl = func() (sgl, dbl [256]bool) {
	for b := 0x20; b <= 0x7e; b++ {
		sgl[b] = b != '\''
		dbl[b] = b != '"' && b != '$' && b != '`' && b != '\\' && b != '!'
	}
	return sgl, dbl
}()

// plainRedirOp returns the length of the redirection operator at src[i]
// that the plain path takes (>, >>, >&, <), or 0.
func plainRedirOp(src string, i int) int {
	next := byte(0)
	if i+1 < len(src) {
		next = src[i+1]
	}
	switch {
	case src[i] == '<' && next != '<' && next != '&' && next != '>' && next != '(':
		return 1
	case src[i] != '>':
		return 0
	case next == '>' || next == '&':
		return 2
	case next != '|' && next != '(':
		return 1
	}
	return 0
}

// plainDigitsBefore reports a word src[i:end] that ends in a digit right
// before a < or >: the lexer may read those digits as a descriptor.
func plainDigitsBefore(src string, i, end int) bool {
	return end < len(src) && (src[end] == '<' || src[end] == '>') && src[end-1] >= '0' && src[end-1] <= '9'
}

// plainFile builds the syntax tree of src in the classifier's arenas if
// src is a plain simple command or a pipeline of them joined by single |:
// words of plain bytes and quoted strings, the first word of each command
// neither an assignment nor reserved, and after it plain redirections.
// releasePlain(mark) frees the nodes once the tree has been classified.
// ok is false, with nothing kept, for any other text, which goes to the
// parser. A pipeline nests to the left, as the parser builds it: a | b | c
// is (a | b) | c. It checks the text as it builds, in one pass.
func (c *classifier) plainFile(src string) (f *syntax.File, mark plainMark, ok bool) {
	a := &c.plain
	mark = plainMark{len(a.roots), len(a.nodes), len(a.words), len(a.args), len(a.parts), len(a.lits), len(a.sgls), len(a.dbls), len(a.rdrs), len(a.rptrs)}
	var top *syntax.Stmt
	start, rstart := len(a.args), len(a.rptrs)
	pipe := -1 // offset of the | before the current command
	flush := func() {
		a.nodes = append(a.nodes, plainNode{})
		n := &a.nodes[len(a.nodes)-1]
		n.call.Args = a.args[start:len(a.args):len(a.args)]
		if len(a.rptrs) > rstart {
			n.stmt.Redirs = a.rptrs[rstart:len(a.rptrs):len(a.rptrs)]
		}
		n.stmt.Position = n.call.Args[0].Pos()
		n.stmt.Cmd = &n.call
		s := &n.stmt
		if top != nil {
			a.nodes = append(a.nodes, plainNode{})
			b := &a.nodes[len(a.nodes)-1]
			b.bin = syntax.BinaryCmd{OpPos: plainPos(pipe), Op: syntax.Pipe, X: top, Y: s}
			b.stmt.Position = top.Position
			b.stmt.Cmd = &b.bin
			s = &b.stmt
		}
		top = s
		start, rstart = len(a.args), len(a.rptrs)
	}
	words := 0 // in the current command
	for i := 0; i < len(src); {
		switch src[i] {
		case ' ':
			i++
			continue
		case '|':
			if words == 0 {
				c.releasePlain(mark)
				return nil, mark, false
			}
			flush()
			words = 0
			pipe = i
			i++
			continue
		case '<', '>':
			end, ok := c.plainRedirect(src, -1, i)
			if !ok || words == 0 {
				c.releasePlain(mark)
				return nil, mark, false
			}
			i = end
			continue
		}
		if i+1 < len(src) && (src[i+1] == '<' || src[i+1] == '>') && src[i] >= '0' && src[i] <= '9' {
			// One digit is the descriptor of the redirection that follows.
			end, ok := c.plainRedirect(src, i, i+1)
			if !ok || words == 0 {
				c.releasePlain(mark)
				return nil, mark, false
			}
			i = end
			continue
		}
		w, end, ok := c.plainWord(src, i)
		if !ok || plainDigitsBefore(src, i, end) || words == 0 && plainFirstWordSpecial(src[i:end]) {
			c.releasePlain(mark)
			return nil, mark, false
		}
		a.args = append(a.args, w)
		words++
		i = end
	}
	if words == 0 {
		c.releasePlain(mark)
		return nil, mark, false
	}
	flush()
	a.roots = append(a.roots, plainRoot{})
	r := &a.roots[len(a.roots)-1]
	r.stmts[0] = top
	r.file.Stmts = r.stmts[:]
	return &r.file, mark, true
}

// plainFirstWordSpecial reports a first word of a command that the
// parser reads as more than a command name: an assignment or a reserved
// word.
func plainFirstWordSpecial(w string) bool {
	return strings.IndexByte(w, '=') >= 0 || plainReserved[w]
}

// plainRedirect builds the redirection whose operator is at src[op], with
// the one-digit descriptor at src[fd] when fd >= 0, and returns its end:
// the operator, blanks and a plain word. ok is false if it is none the
// plain path takes.
func (c *classifier) plainRedirect(src string, fd, op int) (int, bool) {
	n := plainRedirOp(src, op)
	if n == 0 {
		return 0, false
	}
	i := op + n
	for i < len(src) && src[i] == ' ' {
		i++
	}
	w, end, ok := c.plainWord(src, i)
	if !ok || end == i || plainDigitsBefore(src, i, end) {
		return 0, false
	}
	a := &c.plain
	a.rdrs = append(a.rdrs, plainRedir{})
	r := &a.rdrs[len(a.rdrs)-1]
	if fd >= 0 {
		r.n = syntax.Lit{ValuePos: plainPos(fd), ValueEnd: plainPos(fd + 1), Value: src[fd : fd+1]}
		r.r.N = &r.n
	}
	r.r.OpPos = plainPos(op)
	switch {
	case src[op] == '<':
		r.r.Op = syntax.RdrIn
	case n == 1:
		r.r.Op = syntax.RdrOut
	case src[op+1] == '>':
		r.r.Op = syntax.AppOut
	default:
		r.r.Op = syntax.DplOut
	}
	r.r.Word = w
	a.rptrs = append(a.rptrs, &r.r)
	return end, true
}

// plainWord builds the word starting at src[from]: literal runs of plain
// bytes and whole quoted strings, up to a space, a |, a < or > or the end,
// which it returns. ok is false for any other byte or an unterminated
// quote (the nodes it took are freed with the rest by releasePlain).
func (c *classifier) plainWord(src string, from int) (w *syntax.Word, end int, ok bool) {
	a := &c.plain
	first := len(a.parts)
	i := from
	for i < len(src) && src[i] != ' ' && src[i] != '|' && src[i] != '<' && src[i] != '>' {
		switch ch := src[i]; ch {
		case '\'':
			j := i + 1
			for j < len(src) && plainInSgl[src[j]] {
				j++
			}
			if j == len(src) || src[j] != ch {
				return nil, 0, false
			}
			a.sgls = append(a.sgls, syntax.SglQuoted{Left: plainPos(i), Right: plainPos(j), Value: src[i+1 : j]})
			a.parts = append(a.parts, &a.sgls[len(a.sgls)-1])
			i = j + 1
		case '"':
			j := i + 1
			for j < len(src) && plainInDbl[src[j]] {
				j++
			}
			if j == len(src) || src[j] != ch {
				return nil, 0, false
			}
			a.dbls = append(a.dbls, plainDbl{})
			d := &a.dbls[len(a.dbls)-1]
			d.dq = syntax.DblQuoted{Left: plainPos(i), Right: plainPos(j)}
			if j > i+1 {
				d.lit = syntax.Lit{ValuePos: plainPos(i + 1), ValueEnd: plainPos(j), Value: src[i+1 : j]}
				d.part[0] = &d.lit
				d.dq.Parts = d.part[:]
			}
			a.parts = append(a.parts, &d.dq)
			i = j + 1
		default:
			if !plainByte[ch] {
				return nil, 0, false
			}
			j := i + 1
			for j < len(src) && plainByte[src[j]] {
				j++
			}
			a.lits = append(a.lits, syntax.Lit{ValuePos: plainPos(i), ValueEnd: plainPos(j), Value: src[i:j]})
			a.parts = append(a.parts, &a.lits[len(a.lits)-1])
			i = j
		}
	}
	a.words = append(a.words, syntax.Word{Parts: a.parts[first:len(a.parts):len(a.parts)]})
	return &a.words[len(a.words)-1], i, true
}

// releasePlain frees the nodes plainFile took after mark.
func (c *classifier) releasePlain(mark plainMark) {
	a := &c.plain
	a.roots = release(a.roots, mark.roots)
	a.nodes = release(a.nodes, mark.nodes)
	a.words = release(a.words, mark.words)
	a.args = release(a.args, mark.args)
	a.parts = release(a.parts, mark.parts)
	a.lits = release(a.lits, mark.lits)
	a.sgls = release(a.sgls, mark.sgls)
	a.dbls = release(a.dbls, mark.dbls)
	a.rdrs = release(a.rdrs, mark.rdrs)
	a.rptrs = release(a.rptrs, mark.rptrs)
}

// release zeroes s from n on, so the pool keeps no old command text, and
// truncates it there.
func release[T any](s []T, n int) []T {
	clear(s[n:])
	return s[:n]
}

// plainPos is the position of a byte offset on the first line.
func plainPos(offs int) syntax.Pos {
	return syntax.NewPos(uint(offs), 1, uint(offs)+1)
}
