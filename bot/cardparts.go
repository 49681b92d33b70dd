package bot

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxCardParts bounds how many parts a card lists; a command with more is
// still shown whole above the list.
const maxCardParts = 64

// commandParts lists what a compound command runs, one part per line, so
// an approver reads each one: every simple command with the operator that
// joins it to the one before ("a && b; c | d" → "a", "&& b", "; c",
// "| d"), then every command that runs inside a substitution
// ("inside $(…): touch /tmp/x"). A single simple command without
// substitutions has no parts (nil), nor has text that does not parse as a
// shell command.
func commandParts(cmd string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil
	}
	src := func(n syntax.Node) string {
		s, e := int(n.Pos().Offset()), int(n.End().Offset())
		if s < 0 || e > len(cmd) || s >= e {
			return ""
		}
		return strings.TrimRight(strings.TrimSpace(cmd[s:e]), ";&")
	}
	var parts []string
	add := func(op, text string) {
		text = strings.Join(strings.Fields(text), " ")
		if op != "" {
			text = op + " " + text
		}
		parts = append(parts, text)
	}
	var stmt func(op string, s *syntax.Stmt)
	stmt = func(op string, s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && len(s.Redirs) == 0 && !s.Negated {
			stmt(op, b.X)
			stmt(b.Op.String(), b.Y)
			return
		}
		add(op, src(s))
	}
	for i, s := range f.Stmts {
		op := ""
		if i > 0 {
			op = ";"
			if f.Stmts[i-1].Background {
				op = "&"
			}
		}
		stmt(op, s)
	}
	simple := len(parts) == 1
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			inner := make([]string, 0, len(x.Stmts))
			for _, s := range x.Stmts {
				inner = append(inner, src(s))
			}
			add("", "inside "+substName(x.Backquotes)+": "+strings.Join(inner, "; "))
		case *syntax.ProcSubst:
			inner := make([]string, 0, len(x.Stmts))
			for _, s := range x.Stmts {
				inner = append(inner, src(s))
			}
			add("", "inside "+x.Op.String()+"…): "+strings.Join(inner, "; "))
		}
		return true
	})
	if simple && len(parts) == 1 {
		return nil
	}
	if len(parts) > maxCardParts {
		parts = append(parts[:maxCardParts], "… and more (the whole command is shown above)")
	}
	return parts
}

func substName(backquotes bool) string {
	if backquotes {
		return "`…`"
	}
	return "$(…)"
}
