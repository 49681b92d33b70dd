package command

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Most commands people ask about are one simple command of plain words
// (`kubectl get pods -n web`, `df -h`), or a pipeline of them. For those the classifier builds the
// syntax tree mvdan.cc/sh would build itself, in nodes it keeps between
// calls, instead of running the parser, which allocates its node batches
// afresh on every Parse. The text qualifies only when every byte is one
// the shell reads as a plain word character or a space and the first word
// is neither an assignment nor a word the parser treats specially, so the
// tree is exactly the parser's: one statement holding one call or a
// pipeline of calls, each word a single literal with the parser's offsets. TestPlainMatchesParser and
// FuzzPlainMatchesParser hold it to that.

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

// plainWord is the nodes of one word: a literal, the word and its parts.
type plainWord struct {
	lit  syntax.Lit
	word syntax.Word
	part [1]syntax.WordPart
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

// isPlain reports whether src is a plain simple command or a pipeline of
// them joined by single |.
func isPlain(src string) bool {
	for {
		i := strings.IndexByte(src, '|')
		if i < 0 {
			return plainSegment(src)
		}
		if !plainSegment(src[:i]) {
			return false
		}
		src = src[i+1:]
	}
}

// plainSegment reports whether src is one plain simple command.
func plainSegment(src string) bool {
	first, end := -1, -1
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch == ' ' {
			if first >= 0 && end < 0 {
				end = i
			}
			continue
		}
		if !plainByte[ch] {
			return false
		}
		if first < 0 {
			first = i
		}
		if ch == '=' && end < 0 {
			return false // an assignment, or a word the parser may take as one
		}
	}
	if first < 0 {
		return false
	}
	if end < 0 {
		end = len(src)
	}
	return !plainReserved[src[first:end]]
}

// plainFile builds the syntax tree of a plain command (isPlain) in the
// classifier's node arenas, used as stacks: releasePlain(mark) frees the
// nodes once the tree has been classified. A pipeline nests to the left,
// as the parser builds it: a | b | c is (a | b) | c.
func (c *classifier) plainFile(src string) (*syntax.File, plainMark) {
	mark := plainMark{len(c.plainRoots), len(c.plainNodes), len(c.plainWords), len(c.plainArgs)}
	var top *syntax.Stmt
	for off := 0; off <= len(src); {
		end := strings.IndexByte(src[off:], '|')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		s := c.plainCall(src, off, end)
		if top == nil {
			top = s
		} else {
			c.plainNodes = append(c.plainNodes, plainNode{})
			n := &c.plainNodes[len(c.plainNodes)-1]
			n.bin = syntax.BinaryCmd{OpPos: plainPos(off - 1), Op: syntax.Pipe, X: top, Y: s}
			n.stmt.Position = top.Position
			n.stmt.Cmd = &n.bin
			top = &n.stmt
		}
		off = end + 1
	}
	c.plainRoots = append(c.plainRoots, plainRoot{})
	r := &c.plainRoots[len(c.plainRoots)-1]
	r.stmts[0] = top
	r.file.Stmts = r.stmts[:]
	return &r.file, mark
}

// plainCall builds the statement of the plain simple command in
// src[from:to].
func (c *classifier) plainCall(src string, from, to int) *syntax.Stmt {
	start := len(c.plainArgs)
	for i := from; i < to; {
		if src[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < to && src[j] != ' ' {
			j++
		}
		c.plainWords = append(c.plainWords, plainWord{})
		pw := &c.plainWords[len(c.plainWords)-1]
		pw.lit = syntax.Lit{ValuePos: plainPos(i), ValueEnd: plainPos(j), Value: src[i:j]}
		pw.part[0] = &pw.lit
		pw.word.Parts = pw.part[:]
		c.plainArgs = append(c.plainArgs, &pw.word)
		i = j
	}
	c.plainNodes = append(c.plainNodes, plainNode{})
	n := &c.plainNodes[len(c.plainNodes)-1]
	n.call.Args = c.plainArgs[start:len(c.plainArgs):len(c.plainArgs)]
	n.stmt.Position = n.call.Args[0].Pos()
	n.stmt.Cmd = &n.call
	return &n.stmt
}

// releasePlain frees the nodes plainFile took after mark.
func (c *classifier) releasePlain(mark plainMark) {
	clear(c.plainRoots[mark.roots:])
	c.plainRoots = c.plainRoots[:mark.roots]
	clear(c.plainNodes[mark.nodes:])
	c.plainNodes = c.plainNodes[:mark.nodes]
	clear(c.plainWords[mark.words:])
	c.plainWords = c.plainWords[:mark.words]
	clear(c.plainArgs[mark.args:])
	c.plainArgs = c.plainArgs[:mark.args]
}

// plainMark is where the node arenas stood before a plainFile.
type plainMark struct{ roots, nodes, words, args int }

// plainPos is the position of a byte offset on the first line.
func plainPos(offs int) syntax.Pos {
	return syntax.NewPos(uint(offs), 1, uint(offs)+1)
}
