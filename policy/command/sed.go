package command

import "strings"

var sedTool = &tool{
	name: "sed", style: styleGNU,
	opts: opts(
		reads(`-n|--quiet|--silent --debug -e|--expression= --follow-symlinks -l|--line-length=
			--posix -E|-r|--regexp-extended -s|--separate --sandbox -u|--unbuffered -z|--null-data
			--help --version -b|--binary`),
		writes(RiskMedium, "edits files in place", `-i|--in-place[=]`),
		unknowns("script in a file", `-f|--file=`),
	),
	check: checkSed,
}

// checkSed: sed reads unless it edits in place (-i, --in-place) or its
// script writes files or runs commands (w, W, e, s///w, s///e).
func checkSed(c *classifier, k *call) {
	var script strings.Builder
	have := false
	for _, u := range k.p.uses {
		if u.key != "expression" {
			continue
		}
		if !u.val.static {
			c.unknown("sed -e", "dynamic script")
			return
		}
		if have {
			script.WriteByte('\n')
		}
		script.WriteString(u.val.s)
		have = true
	}
	if !have {
		if len(k.p.ops) == 0 {
			c.unknown("sed", "no script")
			return
		}
		a := k.args[k.p.ops[0]]
		if !a.static {
			c.unknown("sed", "dynamic script")
			return
		}
		script.WriteString(a.s)
	}
	what, ok := sedScriptWrites(script.String())
	switch {
	case !ok:
		c.unknown("sed", "script not understood")
	case what != "":
		c.writer("sed "+what, RiskMedium, "writes files or runs commands")
	default:
		c.readOnly(k)
	}
}

// sedScriptWrites parses a sed script the way GNU sed does and returns the
// first command that writes a file or runs a program ("w", "W", "e",
// "s///w", "s///e"), or "". ok is false when the script does not parse,
// which callers treat as unknown.
func sedScriptWrites(s string) (what string, ok bool) {
	p := sedParser{s: s}
	return p.run()
}

type sedParser struct {
	s string
	i int
}

func (p *sedParser) eof() bool  { return p.i >= len(p.s) }
func (p *sedParser) peek() byte { return p.s[p.i] }

func (p *sedParser) skipBlanks() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

func (p *sedParser) run() (string, bool) {
	depth := 0
	for {
		for !p.eof() && strings.IndexByte(" \t\n;", p.peek()) >= 0 {
			p.i++
		}
		if p.eof() {
			return "", depth == 0
		}
		if p.peek() == '#' {
			p.skipLine()
			continue
		}
		hasAddr, ok := p.addresses()
		if !ok {
			return "", false
		}
		p.skipBlanks()
		for !p.eof() && p.peek() == '!' {
			p.i++
			p.skipBlanks()
		}
		if p.eof() {
			return "", false
		}
		cmd := p.peek()
		p.i++
		switch cmd {
		case '{':
			depth++
			continue
		case '}':
			if hasAddr || depth == 0 {
				return "", false
			}
			depth--
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			p.skipBlanks()
			for !p.eof() && p.peek() >= '0' && p.peek() <= '9' {
				p.i++
			}
		case ':':
			if hasAddr || p.label() == "" {
				return "", false
			}
		case 'b', 't', 'T', 'v':
			p.label()
		case 'r', 'R':
			p.skipLine() // the file name runs to the end of the line
			continue
		case 'w', 'W':
			if p.fileIsStdio() {
				continue
			}
			return string(cmd), true
		case 'e':
			return "e", true
		case 'a', 'i', 'c':
			p.text()
			continue
		case 's':
			what, ok := p.substitute()
			if !ok || what != "" {
				return what, ok
			}
		case 'y':
			if !p.transliterate() {
				return "", false
			}
		default:
			return "", false
		}
		if !p.endOfCommand() {
			return "", false
		}
	}
}

// addresses parses "addr1[,addr2]" and reports whether there was one.
func (p *sedParser) addresses() (bool, bool) {
	if !p.address(false) {
		return false, true
	}
	p.skipBlanks()
	if !p.eof() && p.peek() == ',' {
		p.i++
		p.skipBlanks()
		if !p.address(true) {
			return true, false
		}
	}
	return true, true
}

func (p *sedParser) address(second bool) bool {
	if p.eof() {
		return false
	}
	switch ch := p.peek(); {
	case ch >= '0' && ch <= '9' || second && (ch == '+' || ch == '~'):
		p.i++
		for !p.eof() && (p.peek() >= '0' && p.peek() <= '9' || p.peek() == '~') {
			p.i++
		}
		return true
	case ch == '$':
		p.i++
		return true
	case ch == '/' || ch == '\\':
		if ch == '\\' {
			p.i++
			if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
				return false
			}
		}
		delim := p.peek()
		p.i++
		if !p.upTo(delim) {
			return false
		}
		for !p.eof() && (p.peek() == 'I' || p.peek() == 'M') {
			p.i++
		}
		return true
	}
	return false
}

// openDelim reads the delimiter of s or y and returns it.
func (p *sedParser) openDelim() (byte, bool) {
	if p.eof() {
		return 0, false
	}
	d := p.peek()
	if d == '\n' || d == '\\' {
		return 0, false
	}
	p.i++
	return d, true
}

// upTo reads up to and past the next unescaped delim; a raw newline ends
// the command in error, as in GNU sed.
func (p *sedParser) upTo(delim byte) bool {
	for !p.eof() {
		ch := p.peek()
		p.i++
		switch {
		case ch == '\\':
			if p.eof() {
				return false
			}
			p.i++
		case ch == delim:
			return true
		case ch == '\n':
			return false
		}
	}
	return false
}

// transliterate parses the rest of y/src/dst/.
func (p *sedParser) transliterate() bool {
	d, ok := p.openDelim()
	return ok && p.upTo(d) && p.upTo(d)
}

// substitute parses the rest of s/regex/replacement/flags.
func (p *sedParser) substitute() (string, bool) {
	d, ok := p.openDelim()
	if !ok || !p.upTo(d) || !p.upTo(d) {
		return "", false
	}
	for !p.eof() {
		switch ch := p.peek(); {
		case ch == 'g' || ch == 'p' || ch == 'i' || ch == 'I' || ch == 'm' || ch == 'M' || ch >= '0' && ch <= '9':
			p.i++
		case ch == 'e':
			return "s///e", true
		case ch == 'w':
			p.i++
			if p.fileIsStdio() {
				return "", true
			}
			return "s///w", true
		default:
			return "", true
		}
	}
	return "", true
}

// fileIsStdio reads a w file name to the end of the line and reports
// whether it is GNU sed's special /dev/stdout or /dev/stderr. GNU sed
// skips the blanks before the name and keeps everything after it, blanks
// and ";" included: "w /dev/stdout " writes a file whose name ends in a
// blank.
func (p *sedParser) fileIsStdio() bool {
	p.skipBlanks()
	start := p.i
	p.skipLine()
	name := p.s[start:p.i]
	return name == "/dev/stdout" || name == "/dev/stderr"
}

// label reads a label: blanks, then up to a blank, ';' or newline.
func (p *sedParser) label() string {
	p.skipBlanks()
	start := p.i
	for !p.eof() && strings.IndexByte(" \t\n;", p.peek()) < 0 {
		p.i++
	}
	return p.s[start:p.i]
}

// text skips the text of a, i or c: to the end of the line, where a
// backslash before the newline continues it.
func (p *sedParser) text() {
	for !p.eof() {
		ch := p.peek()
		p.i++
		if ch == '\\' && !p.eof() {
			p.i++
			continue
		}
		if ch == '\n' {
			return
		}
	}
}

func (p *sedParser) skipLine() {
	for !p.eof() && p.peek() != '\n' {
		p.i++
	}
}

// endOfCommand accepts blanks then the end, ';', a newline, '}' or '#'.
func (p *sedParser) endOfCommand() bool {
	p.skipBlanks()
	if p.eof() {
		return true
	}
	switch p.peek() {
	case ';', '\n':
		p.i++
		return true
	case '}', '#':
		return true
	}
	return false
}
