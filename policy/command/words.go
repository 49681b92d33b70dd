package command

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a simple command after quote removal.
type arg struct {
	// s is the word's value with quotes and escapes removed. When the word
	// is not static, s holds only its literal parts.
	s string
	// static reports that the shell passes exactly s, as one word: no
	// parameter, command or arithmetic expansion, no brace expansion, and no
	// glob that could expand to a word of a different shape.
	static bool
	// glob reports an unquoted glob character anywhere in the word.
	glob bool
	// tilde reports an unquoted ~ that bash may expand to a home
	// directory: at the start of the word, or after = or : (bash expands
	// those in words that look like assignments). s keeps the ~.
	tilde bool
	// split reports that the shell may turn the word into several: an
	// unquoted expansion, a brace expansion, or a glob starting with "-".
	// An option's value taken from such a word could bring more options.
	split bool
	// noDash reports that the word cannot start with "-" whatever it
	// expands to: its first character is a literal other than "-". A
	// dynamic word with noDash is an operand, never an option.
	noDash bool
	// w is the word in the parsed source; nil for synthetic words.
	w *syntax.Word
}

// lit returns a synthetic static word.
func lit(s string) arg { return arg{s: s, static: true, noDash: s == "" || s[0] != '-'} }

// literalSpecial are the bytes that can make an unquoted literal mean
// other than its text: an escape, a brace or glob, a tilde.
var literalSpecial = byteSet("\\{*?[~")

// substitutionBytes spell every node the substitution walk looks at:
// $..., `...`, <(...), ((...)), [[ ]], a[i]=, @(...).
var substitutionBytes = byteSet("$`([")

// byteSet is a lookup table of the bytes of s, which the per-word checks
// use instead of strings.ContainsAny: it builds its set on every call.
func byteSet(s string) (t [256]bool) {
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return t
}

// hasByte reports whether s has a byte of set.
func hasByte(s string, set *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if set[s[i]] {
			return true
		}
	}
	return false
}

// resolve removes quotes and escapes from w the way the shell would,
// without expanding anything.
func (c *classifier) resolve(w *syntax.Word) arg {
	// Fast path: one plain unquoted literal, the common case.
	if len(w.Parts) == 1 {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !hasByte(l.Value, &literalSpecial) {
			return arg{s: l.Value, static: true, w: w, noDash: l.Value == "" || l.Value[0] != '-'}
		}
	}
	a := arg{static: true, w: w}
	b := c.buf[:0]
	// dynHead: an expansion came before any literal character, so the
	// word's first character is unknown.
	dynHead := false
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if c.dialect != DialectPOSIX && hasBraceExpansion(p.Value) {
				a.static, a.split = false, true
			}
			start := len(b)
			if unquotedTilde(p.Value, start == 0) {
				a.tilde = true
			}
			var globAt int
			b, globAt = appendUnquoted(b, p.Value)
			if globAt >= 0 {
				a.glob = true
				// A glob that starts the word may expand to anything,
				// including a word that looks like an option.
				if start+globAt == 0 {
					a.static = false
				}
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				b = appendANSIC(b, p.Value)
			} else {
				b = append(b, p.Value...)
			}
		case *syntax.DblQuoted:
			if p.Dollar && c.dialect != DialectPOSIX {
				// bash's $"..." is translated through the locale's message
				// catalogue, and the translation is expanded again.
				a.static, a.split = false, true
				dynHead = dynHead || len(b) == 0
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b = unescapeDouble(b, l.Value)
				} else {
					a.static = false
					dynHead = dynHead || len(b) == 0
				}
			}
		case *syntax.ProcSubst:
			// <(cmd) becomes one path such as /dev/fd/63.
			a.static = false
			dynHead = dynHead || len(b) == 0
		default:
			// Parameter, command or arithmetic expansion; extglob.
			a.static, a.split = false, true
			dynHead = dynHead || len(b) == 0
			if _, ok := part.(*syntax.ExtGlob); ok {
				a.glob = true
			}
		}
	}
	if a.glob && len(b) > 0 && b[0] == '-' {
		a.split = true
	}
	a.noDash = !dynHead && !a.split && (len(b) == 0 && a.static || len(b) > 0 && b[0] != '-')
	if len(b) > 0 && a.glob && !a.static {
		a.noDash = false
	}
	a.s = c.text(w, b)
	c.buf = b[:0]
	return a
}

// text is the resolved value b of w as a string. A word of one part whose
// value is its own text ('x y', "x y", a glob or tilde without escapes)
// shares that text instead of copying it: most quoted arguments are such.
func (c *classifier) text(w *syntax.Word, b []byte) string {
	if len(w.Parts) == 1 {
		var v string
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			v = p.Value
		case *syntax.SglQuoted:
			v = p.Value
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if l, ok := p.Parts[0].(*syntax.Lit); ok {
					v = l.Value
				}
			}
		}
		if len(v) == len(b) && v == string(b) {
			return v
		}
	}
	return string(b)
}

// unquotedTilde reports a ~ in an unquoted literal that bash may expand:
// at the start of the word (first), or after = or :.
func unquotedTilde(s string, first bool) bool {
	i := strings.IndexByte(s, '~')
	if i < 0 {
		return false
	}
	if first && i == 0 {
		return true
	}
	return strings.Contains(s, "=~") || strings.Contains(s, ":~")
}

// hasBraceExpansion reports whether an unquoted literal contains a bash
// brace expansion such as {a,b} or {1..3}, which turns one word into many.
func hasBraceExpansion(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	rest := s[open:]
	return strings.IndexByte(rest, '}') > 0 && (strings.IndexByte(rest, ',') > 0 || strings.Contains(rest, ".."))
}

// appendUnquoted appends an unquoted literal with backslash escapes
// removed (\x is x, a backslash-newline disappears). globAt is the offset in
// the appended text of the first unescaped glob character, or -1.
func appendUnquoted(b []byte, s string) (out []byte, globAt int) {
	globAt = -1
	start := len(b)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b = append(b, s[i])
			}
			continue
		case globAt < 0 && (ch == '*' || ch == '?' || ch == '[' && strings.IndexByte(s[i:], ']') > 0):
			globAt = len(b) - start
		}
		b = append(b, ch)
	}
	return b, globAt
}

// unescapeDouble appends a double-quoted literal: a backslash only escapes
// $ ` " \ and newline there.
func unescapeDouble(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b = append(b, s[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b = append(b, ch)
	}
	return b
}

// appendANSIC decodes the body of a $'...' word.
func appendANSIC(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' || i+1 >= len(s) {
			b = append(b, ch)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b = append(b, '\a')
		case 'b':
			b = append(b, '\b')
		case 'e', 'E':
			b = append(b, 0x1b)
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'v':
			b = append(b, '\v')
		case 'c':
			if i+1 < len(s) {
				i++
				b = append(b, s[i]&0x1f)
			}
		case 'x', 'u', 'U':
			maxDigits := 2
			if e == 'u' {
				maxDigits = 4
			} else if e == 'U' {
				maxDigits = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < maxDigits && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b = append(b, '\\', e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b = append(b, byte(n))
			} else {
				b = utf8.AppendRune(b, rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b = append(b, byte(n))
			i = j - 1
		default:
			// \\ \' \" \? and unknown escapes: the character itself for the
			// known ones, backslash and character otherwise.
			if e != '\\' && e != '\'' && e != '"' && e != '?' {
				b = append(b, '\\')
			}
			b = append(b, e)
		}
	}
	return b
}

func isHex(ch byte) bool {
	return ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'f' || ch >= 'A' && ch <= 'F'
}

// raw returns the source text of a word at the top level, or "" when the
// word did not come from the top-level source.
func (c *classifier) raw(a arg, ctx callCtx) string {
	if a.w == nil || ctx.nest != 0 {
		return ""
	}
	start, end := a.w.Pos().Offset(), a.w.End().Offset()
	if end > uint(len(c.src)) || start >= end {
		return ""
	}
	return c.src[start:end]
}

// isIdentifier reports whether s is a plain shell variable name.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || i > 0 && ch >= '0' && ch <= '9' {
			continue
		}
		return false
	}
	return true
}

// isNumber reports whether s is a non-empty run of decimal digits.
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
