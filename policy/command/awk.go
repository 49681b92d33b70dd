package command

import "strings"

// awkOpts are the options of gawk, mawk and the one true awk together
// (each accepts a subset); options end at the program text.
var awkOpts = opts(
	reads(`-F|--field-separator= -v|--assign= -b|--characters-as-bytes -c|--traditional
		-C|--copyright -g|--gen-pot -h|--usage -I|--trace -k|--csv -L|--lint[=] -M|--bignum
		-n|--non-decimal-data -N|--use-lc-numeric -O|--optimize -P|--posix -r|--re-interval
		-s|--no-optimize -S|--sandbox -t|--lint-old -V|--version -e|--source=`),
	unknowns("program in a file", `-f|--file= -E|--exec= -i|--include=`),
	execs("loads a shared library", `-l|--load=`),
	writes(RiskLow, "writes a file", `-d|--dump-variables[=] -o|--pretty-print[=] -p|--profile[=]`),
	unknowns("starts the debugger", `-D|--debug[=]`),
	unknowns("implementation option not known to be read-only", `-W=`),
)

func awkTool(name string) *tool {
	return &tool{name: name, style: styleGNUStop, opts: awkOpts, check: checkAwk}
}

// checkAwk: awk reads unless its program writes (print > file, print |
// cmd), runs commands (system(), cmd | getline, |&), loads code, or comes
// from a file the classifier cannot see.
func checkAwk(c *classifier, k *call) {
	var prog strings.Builder
	have := false
	for _, u := range k.p.uses {
		if u.key != "source" {
			continue
		}
		if !u.val.static {
			c.unknown(k.name, "dynamic program")
			return
		}
		prog.WriteString(u.val.s)
		prog.WriteByte('\n')
		have = true
	}
	if !have {
		if len(k.p.ops) == 0 {
			c.unknown(k.name, "no program")
			return
		}
		a := k.args[k.p.ops[0]]
		if !a.static {
			c.unknown(k.name, "dynamic program")
			return
		}
		prog.WriteString(a.s)
	}
	what, ok := awkProgramWrites(prog.String())
	switch {
	case !ok:
		c.unknown(k.name, "program not understood")
	case what != "":
		c.construct(k.name+" "+what, RiskMedium, "program writes files or runs commands")
	default:
		c.readOnly(k)
	}
}

// awkTok is the class of the previous significant awk token, which decides
// whether a '/' starts a regular expression or divides.
type awkTok uint8

const (
	awkStart     awkTok = iota // start, '{', '}', ';', newline, '(' ...: an operand may follow
	awkOperand                 // a name, number, string, regex, ')' or ']': '/' divides
	awkAmbiguous               // getline, ++, --, $: a '/' here is refused
)

// awkProgramWrites scans an awk program and returns the first construct
// that writes a file or runs a command, or "". ok is false when the program
// cannot be scanned with certainty (an unterminated string, a '/' whose
// meaning depends on the awk implementation, indirect calls, ...).
func awkProgramWrites(p string) (what string, ok bool) {
	prev := awkStart
	depth := 0
	printDepth := -1   // paren depth where the current print statement began
	var control []bool // for each open paren: does it belong to if/while/for?
	lastKeyword := ""
	// cont: the last token was one after which a newline does not end the
	// statement (",", "&&", "||", "{", do, else): awk reads on.
	cont := false
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' && ch != '#' && !(ch == '\\' && i+1 < len(p) && p[i+1] == '\n') {
			cont = false
		}
		switch {
		case ch == ' ' || ch == '\t' || ch == '\r':
			continue
		case ch == '\\' && i+1 < len(p) && p[i+1] == '\n':
			i++
			continue
		case ch == '\n' && cont:
			continue
		case ch == '\n' || ch == ';' || ch == '{' || ch == '}':
			printDepth = -1
			prev = awkStart
			cont = ch == '{'
		case ch == '#':
			for i < len(p) && p[i] != '\n' {
				i++
			}
			i--
		case ch == '"':
			end, ok := awkSkipString(p, i)
			if !ok {
				return "", false
			}
			i = end
			prev = awkOperand
		case ch == '/':
			switch prev {
			case awkOperand:
				prev = awkStart // division
			case awkAmbiguous:
				return "", false
			default:
				end, ok := awkSkipRegex(p, i)
				if !ok {
					return "", false
				}
				i = end
				prev = awkOperand
			}
		case ch == '_' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			j := i
			for j < len(p) && (p[j] == '_' || p[j] >= 'a' && p[j] <= 'z' || p[j] >= 'A' && p[j] <= 'Z' || p[j] >= '0' && p[j] <= '9') {
				j++
			}
			word := p[i:j]
			i = j - 1
			lastKeyword = ""
			switch word {
			case "system":
				return "system()", true
			case "print", "printf":
				printDepth = depth
				prev = awkStart
			case "getline":
				prev = awkAmbiguous
			case "if", "while", "for", "switch":
				lastKeyword = word
				prev = awkStart
			case "do", "else":
				prev, cont = awkStart, true
			case "return", "exit", "case", "in", "delete", "BEGIN", "END", "BEGINFILE", "ENDFILE", "function", "func":
				prev = awkStart
			default:
				prev = awkOperand
			}
			continue
		case ch >= '0' && ch <= '9' || ch == '.':
			for i+1 < len(p) && (p[i+1] >= '0' && p[i+1] <= '9' || p[i+1] == '.' || p[i+1] == 'e' || p[i+1] == 'E' || p[i+1] == 'x' || p[i+1] >= 'a' && p[i+1] <= 'f' || p[i+1] >= 'A' && p[i+1] <= 'F') {
				i++
			}
			prev = awkOperand
		case ch == '(':
			control = append(control, lastKeyword != "")
			depth++
			prev = awkStart
		case ch == ')':
			if depth == 0 {
				return "", false
			}
			depth--
			wasControl := control[len(control)-1]
			control = control[:len(control)-1]
			if wasControl {
				prev = awkStart // a statement, possibly a regex, follows
			} else {
				prev = awkOperand
			}
		case ch == '[':
			prev = awkStart
		case ch == ']':
			prev = awkOperand
		case ch == '|':
			switch {
			case i+1 < len(p) && p[i+1] == '|':
				i++
				prev, cont = awkStart, true
			case i+1 < len(p) && p[i+1] == '&':
				return "|&", true
			default:
				return "| command", true
			}
		case ch == '>':
			switch {
			case i+1 < len(p) && p[i+1] == '=':
				i++
			case printDepth >= 0 && depth == printDepth:
				end, ok := awkStdioTarget(p, i)
				if !ok {
					return "print >", true
				}
				i = end
				prev = awkOperand
				continue
			}
			prev = awkStart
		case ch == '&' && i+1 < len(p) && p[i+1] == '&':
			i++
			prev, cont = awkStart, true
		case ch == ',':
			prev, cont = awkStart, true
		case ch == '+' || ch == '-':
			if i+1 < len(p) && p[i+1] == ch {
				i++
				prev = awkAmbiguous
				continue
			}
			prev = awkStart
		case ch == '$':
			prev = awkAmbiguous
		case strings.IndexByte("<=!~&,?:*%^", ch) >= 0:
			prev = awkStart
		default:
			// '@' (gawk directives and indirect calls), '`' and anything
			// else awk does not know.
			return "", false
		}
		lastKeyword = ""
	}
	return "", depth == 0
}

// awkStdioTarget reads a print redirection at p[i] ('>' or ">>") whose
// target is the string "/dev/stdout" or "/dev/stderr", which every awk
// writes to its own standard output or error, followed by the end of the
// statement. It returns the index of the string's closing quote.
func awkStdioTarget(p string, i int) (int, bool) {
	j := i + 1
	if j < len(p) && p[j] == '>' {
		j++
	}
	for j < len(p) && (p[j] == ' ' || p[j] == '\t') {
		j++
	}
	for _, target := range []string{`"/dev/stdout"`, `"/dev/stderr"`} {
		if !strings.HasPrefix(p[j:], target) {
			continue
		}
		end := j + len(target)
		k := end
		for k < len(p) && (p[k] == ' ' || p[k] == '\t') {
			k++
		}
		if k == len(p) || strings.IndexByte(";\n}#", p[k]) >= 0 {
			return end - 1, true
		}
	}
	return 0, false
}

// awkSkipString returns the index of the quote closing the string that
// starts at i.
func awkSkipString(p string, i int) (int, bool) {
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '"':
			return j, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}

// awkSkipRegex returns the index of the slash closing the regex that starts
// at i. Implementations disagree about a slash inside a bracket
// expression, so one is refused.
func awkSkipRegex(p string, i int) (int, bool) {
	inBracket := false
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '[':
			inBracket = true
		case ']':
			inBracket = false
		case '/':
			if inBracket {
				return 0, false
			}
			return j, true
		case '\n':
			return 0, false
		}
	}
	return 0, false
}
