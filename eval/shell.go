package eval

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// simple is one simple command as the shell would run it: its words after
// quote removal, and its redirections.
type simple struct {
	words  []string
	redirs []redir
}

type redir struct {
	op   string // ">", ">>", "2>", "2>&1", ...
	word string
}

// pipeline is commands joined by |.
type pipeline []simple

// step is one pipeline of a list and how it is joined to the previous one
// ("", "&&", "||", ";").
type step struct {
	join string
	pipe pipeline
}

// parseShell reads a command line the way the simulated world needs it:
// the same parser policy's classifier uses (mvdan.cc/sh), so `df -h /var`,
// `df  -h  /var` and `df -h '/var'` are the same words. Constructs the
// world cannot answer deterministically (substitutions, loops, functions,
// parameter expansion) are an error naming them.
func parseShell(cmd string) ([]step, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return nil, err
	}
	var out []step
	for _, st := range f.Stmts {
		if err := flattenStmt(st, ";", &out); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return out, nil
}

func flattenStmt(st *syntax.Stmt, join string, out *[]step) error {
	if st.Negated || st.Background || st.Coprocess {
		return fmt.Errorf("negation and background jobs are not simulated")
	}
	switch c := st.Cmd.(type) {
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt, syntax.OrStmt:
			if err := flattenStmt(c.X, join, out); err != nil {
				return err
			}
			return flattenStmt(c.Y, c.Op.String(), out)
		case syntax.Pipe, syntax.PipeAll:
			var p pipeline
			if err := flattenPipe(st, &p); err != nil {
				return err
			}
			*out = append(*out, step{join: join, pipe: p})
			return nil
		}
		return fmt.Errorf("operator %s is not simulated", c.Op)
	case *syntax.CallExpr:
		s, err := simpleOf(c, st.Redirs)
		if err != nil {
			return err
		}
		*out = append(*out, step{join: join, pipe: pipeline{s}})
		return nil
	case nil:
		return fmt.Errorf("a bare redirection is not simulated")
	default:
		return fmt.Errorf("shell construct %T is not simulated; run plain commands", c)
	}
}

func flattenPipe(st *syntax.Stmt, p *pipeline) error {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		if err := flattenPipe(b.X, p); err != nil {
			return err
		}
		return flattenPipe(b.Y, p)
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok {
		return fmt.Errorf("shell construct %T in a pipeline is not simulated", st.Cmd)
	}
	s, err := simpleOf(c, st.Redirs)
	if err != nil {
		return err
	}
	*p = append(*p, s)
	return nil
}

func simpleOf(c *syntax.CallExpr, rs []*syntax.Redirect) (simple, error) {
	if len(c.Assigns) > 0 && len(c.Args) == 0 {
		return simple{}, fmt.Errorf("variable assignments are not simulated")
	}
	var s simple
	for _, w := range c.Args {
		lit, err := literal(w)
		if err != nil {
			return simple{}, err
		}
		s.words = append(s.words, lit)
	}
	for _, r := range rs {
		op := r.Op.String()
		if r.N != nil {
			op = r.N.Value + op
		}
		var w string
		if r.Word != nil {
			lit, err := literal(r.Word)
			if err != nil {
				return simple{}, err
			}
			w = lit
		}
		s.redirs = append(s.redirs, redir{op: op, word: w})
	}
	return s, nil
}

// literal is a word after quote removal; anything the shell would expand
// is an error.
func literal(w *syntax.Word) (string, error) {
	var b strings.Builder
	var walk func(parts []syntax.WordPart) error
	walk = func(parts []syntax.WordPart) error {
		for _, p := range parts {
			switch x := p.(type) {
			case *syntax.Lit:
				v := x.Value
				// An unquoted backslash escapes the next character.
				v = strings.ReplaceAll(v, `\`, "")
				b.WriteString(v)
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				if err := walk(x.Parts); err != nil {
					return err
				}
			default:
				return fmt.Errorf("expansions (%T) are not simulated; write the value out", x)
			}
		}
		return nil
	}
	if err := walk(w.Parts); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Normalize is a command's canonical text: each simple command's words
// joined by one space, pipelines by " | ", lists by their operators. Two
// commands the shell reads the same normalize the same; a command the
// parser refuses normalizes to its trimmed text.
func Normalize(cmd string) string {
	steps, err := parseShell(cmd)
	if err != nil {
		return strings.Join(strings.Fields(cmd), " ")
	}
	var b strings.Builder
	for i, st := range steps {
		if i > 0 {
			if st.join == ";" {
				b.WriteString("; ")
			} else {
				b.WriteString(" " + st.join + " ")
			}
		}
		for j, s := range st.pipe {
			if j > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(strings.Join(s.words, " "))
			for _, r := range s.redirs {
				b.WriteString(" " + r.op + r.word)
			}
		}
	}
	return b.String()
}

// wordsMatch reports whether words match pattern: a pattern word "*"
// stands for any number of words (none included); any other pattern word
// is a glob in which * matches any run of characters (slashes included).
func wordsMatch(pattern, words []string) bool {
	if len(pattern) == 0 {
		return len(words) == 0
	}
	if pattern[0] == "*" {
		for i := 0; i <= len(words); i++ {
			if wordsMatch(pattern[1:], words[i:]) {
				return true
			}
		}
		return false
	}
	if len(words) == 0 || !globMatch(pattern[0], words[0]) {
		return false
	}
	return wordsMatch(pattern[1:], words[1:])
}

// globMatch matches s against p, where * matches any run of characters.
func globMatch(p, s string) bool {
	parts := strings.Split(p, "*")
	if len(parts) == 1 {
		return p == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i := 1; i < len(parts)-1; i++ {
		j := strings.Index(s, parts[i])
		if j < 0 {
			return false
		}
		s = s[j+len(parts[i]):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// commandPattern is a command glob: the words of one simple command, or of
// a whole normalized line when it holds pipes or lists.
type commandPattern struct {
	raw   string
	words []string
}

func parsePattern(p string) (commandPattern, error) {
	steps, err := parseShell(p)
	if err != nil {
		return commandPattern{}, err
	}
	if len(steps) != 1 || len(steps[0].pipe) != 1 {
		return commandPattern{}, fmt.Errorf("a pattern is one simple command; pipes and lists are matched by their first command")
	}
	return commandPattern{raw: p, words: steps[0].pipe[0].words}, nil
}

// matchCommand reports whether the command line's first simple command
// matches the pattern.
func (cp commandPattern) matchCommand(cmd string) bool {
	steps, err := parseShell(cmd)
	if err != nil || len(steps) == 0 || len(steps[0].pipe) == 0 {
		return false
	}
	// Any pipeline's producer may match: `uptime; df -h` gathered df too.
	for _, st := range steps {
		if cmdMatch(cp.words, st.pipe[0].words) {
			return true
		}
	}
	return false
}

// flagCommands are the commands whose options the world and the matchers
// read as a set: combined short options are split (`df -hi` is `df -h
// -i`) and long options mapped to their short form (`df --inodes` is `df
// -i`), so the spellings a real tool treats alike match alike. Only
// commands whose listed options take no value are here.
var flagCommands = map[string]map[string]string{
	"df": {"--inodes": "-i", "--human-readable": "-h", "--si": "-H", "--all": "-a", "--local": "-l",
		"--print-type": "-T", "--portability": "-P"},
	"du": {"--summarize": "-s", "--human-readable": "-h", "--all": "-a", "--one-file-system": "-x", "--total": "-c",
		"--apparent-size": "--apparent-size"},
	"ss": {"--tcp": "-t", "--udp": "-u", "--listening": "-l", "--numeric": "-n", "--processes": "-p", "--all": "-a",
		"--extended": "-e"},
	"netstat": {"--tcp": "-t", "--udp": "-u", "--listening": "-l", "--numeric": "-n", "--program": "-p", "--all": "-a"},
	"free":    {"--mega": "-m", "--giga": "-g", "--human": "-h", "--kilo": "-k", "--wide": "-w"},
	"ls":      {"--all": "-a", "--human-readable": "-h", "--almost-all": "-A", "--recursive": "-R", "--reverse": "-r"},
	"lsof":    {},
	"iostat":  {"--human": "-h", "--compact": "--compact"},
}

// splitFlags separates a flag command's arguments into its set of options
// and its other words, in order.
func splitFlags(long map[string]string, args []string) (map[string]bool, []string) {
	flags := map[string]bool{}
	var rest []string
	for _, a := range args {
		switch {
		case a == "*" || a == "-" || a == "--" || !strings.HasPrefix(a, "-"):
			rest = append(rest, a)
		case strings.HasPrefix(a, "--"):
			if s, ok := long[a]; ok {
				a = s
			}
			flags[a] = true
		default:
			for _, r := range a[1:] {
				flags["-"+string(r)] = true
			}
		}
	}
	return flags, rest
}

// cmdMatch reports whether a simple command's words match a pattern's:
// wordsMatch, except that for flagCommands options are compared as a set
// (the pattern's must all be present; others only when the pattern has a
// `*` word) and the other words in order.
func cmdMatch(pattern, words []string) bool {
	if len(pattern) > 0 && len(words) > 0 && pattern[0] == words[0] {
		if long, ok := flagCommands[words[0]]; ok {
			pf, pr := splitFlags(long, pattern[1:])
			wf, wr := splitFlags(long, words[1:])
			for f := range pf {
				if !wf[f] {
					return false
				}
			}
			if !slices.Contains(pr, "*") && len(pf) != len(wf) {
				return false
			}
			return wordsMatch(pr, wr)
		}
	}
	return wordsMatch(pattern, words)
}

// simples lists every simple command of a command line: each part of
// every list and pipeline, in order. A line the parser refuses is one
// part, its fields.
func simples(cmd string) []simple {
	steps, err := parseShell(cmd)
	if err != nil {
		return []simple{{words: strings.Fields(cmd)}}
	}
	var out []simple
	for _, st := range steps {
		out = append(out, st.pipe...)
	}
	return out
}

// text is the simple command as one shell line, its words quoted where
// needed.
func (s simple) text() string {
	var b strings.Builder
	for i, w := range s.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
			b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "'")
		} else {
			b.WriteString(w)
		}
	}
	for _, r := range s.redirs {
		b.WriteString(" " + r.op + r.word)
	}
	return b.String()
}
