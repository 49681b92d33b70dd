package command

import "mvdan.cc/sh/v3/syntax"

// Most commands people ask about are one simple command of plain words
// (`kubectl get pods -n web`, `df -h`). For those the classifier builds the
// syntax tree mvdan.cc/sh would build itself, in nodes it keeps between
// calls, instead of running the parser, which allocates its node batches
// afresh on every Parse. The text qualifies only when every byte is one
// the shell reads as a plain word character or a space and the first word
// is neither an assignment nor a word the parser treats specially, so the
// tree is exactly the parser's: one statement, one call, each word a single
// literal with the parser's offsets. TestPlainMatchesParser and
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

// plainCmd is the nodes of one plain script: a file of one statement
// holding one call.
type plainCmd struct {
	file  syntax.File
	stmts [1]*syntax.Stmt
	stmt  syntax.Stmt
	call  syntax.CallExpr
}

// plainWords reports whether src is a plain simple command.
func isPlain(src string) bool {
	n, first := 0, -1
	for i := 0; i < len(src); i++ {
		ch := src[i]
		if ch == ' ' {
			continue
		}
		if !plainByte[ch] {
			return false
		}
		if i == 0 || src[i-1] == ' ' {
			n++
			if n == 1 {
				first = i
			}
		}
	}
	if n == 0 {
		return false
	}
	end := first
	for end < len(src) && src[end] != ' ' {
		if src[end] == '=' {
			return false
		}
		end++
	}
	return !plainReserved[src[first:end]]
}

// plainFile builds the syntax tree of a plain simple command of n words
// in the classifier's node arenas, used as a stack: release(mark) frees
// the nodes once the tree has been classified.
func (c *classifier) plainFile(src string) (*syntax.File, plainMark) {
	mark := plainMark{len(c.plainCmds), len(c.plainWords), len(c.plainArgs)}
	c.plainCmds = append(c.plainCmds, plainCmd{})
	pc := &c.plainCmds[len(c.plainCmds)-1]
	for i := 0; i < len(src); {
		if src[i] == ' ' {
			i++
			continue
		}
		j := i
		for j < len(src) && src[j] != ' ' {
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
	args := c.plainArgs[mark.args:len(c.plainArgs):len(c.plainArgs)]
	pc.call.Args = args
	pc.stmt.Position = args[0].Pos()
	pc.stmt.Cmd = &pc.call
	pc.stmts[0] = &pc.stmt
	pc.file.Stmts = pc.stmts[:]
	return &pc.file, mark
}

// releasePlain frees the nodes plainFile took after mark.
func (c *classifier) releasePlain(mark plainMark) {
	clear(c.plainCmds[mark.cmds:])
	c.plainCmds = c.plainCmds[:mark.cmds]
	clear(c.plainWords[mark.words:])
	c.plainWords = c.plainWords[:mark.words]
	clear(c.plainArgs[mark.args:])
	c.plainArgs = c.plainArgs[:mark.args]
}

// plainMark is where the node arenas stood before a plainFile.
type plainMark struct{ cmds, words, args int }

// plainPos is the position of a byte offset on the first line.
func plainPos(offs int) syntax.Pos {
	return syntax.NewPos(uint(offs), 1, uint(offs)+1)
}
