package redact

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Command redacts a shell command for people to approve. String alone
// treats a command as text and may mask a whole word from a secret's key
// onwards: `export DB_PASSWORD=x$(touch$IFS/tmp/p)` would hide the command
// substitution that runs. Command parses the command and masks only
// literal text: what runs (command substitutions, process substitutions,
// parameter and arithmetic expansions, operators, redirections) stays
// visible, and a substitution's own command is redacted the same way.
//
// Each assignment, command with its arguments, and redirection is
// redacted on its own, with substitutions stood in by a line break the
// rules never cross. A command that does not parse is redacted as text.
func Command(cmd string) string { return defaultRedactor.Command(cmd) }

// Command is the package function Command for r's rules.
func (r *Redactor) Command(cmd string) string { return r.command(cmd, 0) }

// maxCommandDepth bounds recursion into nested substitutions.
const maxCommandDepth = 16

func (r *Redactor) command(cmd string, depth int) string {
	if depth > maxCommandDepth || !r.Suspect(cmd) {
		return r.Redact(cmd)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return r.Redact(cmd)
	}
	actives := activeSpans(f)
	var edits []edit
	group := func(start, end syntax.Pos) {
		if start.IsValid() && end.IsValid() && start.Offset() < end.Offset() && int(end.Offset()) <= len(cmd) {
			edits = append(edits, r.group(cmd, int(start.Offset()), int(end.Offset()), actives, depth))
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			for _, as := range x.Assigns {
				group(as.Pos(), as.End())
			}
			if len(x.Args) > 0 {
				// The command name stays with its arguments: some rules
				// read a flag by the program it belongs to (mysql -p…).
				group(x.Args[0].Pos(), x.Args[len(x.Args)-1].End())
			}
			return false
		case *syntax.DeclClause:
			for _, as := range x.Args {
				group(as.Pos(), as.End())
			}
			return false
		case *syntax.Redirect:
			if x.Word != nil {
				group(x.Word.Pos(), x.Word.End())
			}
			if x.Hdoc != nil {
				group(x.Hdoc.Pos(), x.Hdoc.End())
			}
			return false
		case *syntax.Comment:
			group(x.Pos(), x.End())
			return false
		}
		return true
	})
	// Nested groups start inside one already done: applyEdits skips them.
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	return applyEdits(cmd, edits)
}

// group redacts cmd[start:end], a run of words whose literal text the
// rules may read together (a flag and its value, KEY=value). Substitutions
// and expansions inside it are kept, their commands redacted in turn.
func (r *Redactor) group(cmd string, start, end int, all []span, depth int) edit {
	src := cmd[start:end]
	var actives []span
	for _, a := range all {
		if a.start >= start && a.end <= end {
			actives = append(actives, a)
		}
	}
	if len(actives) == 0 {
		return edit{start, end, r.Redact(src)}
	}
	// The skeleton: literal text, each active span a line break. Line
	// breaks that were in the text already are kept apart from ours.
	var pieces []string // literal pieces between active spans
	at := start
	for _, a := range actives {
		pieces = append(pieces, cmd[at:a.start])
		at = a.end
	}
	pieces = append(pieces, cmd[at:end])
	skeleton := strings.Join(pieces, "\n")
	red := r.Redact(skeleton)
	parts := strings.Split(red, "\n")
	var lits []string
	if strings.Count(skeleton, "\n") == len(parts)-1 {
		// Regroup: original line breaks inside pieces come back as they
		// were, ours separate pieces.
		k := 0
		for _, p := range pieces {
			n := strings.Count(p, "\n") + 1
			lits = append(lits, strings.Join(parts[k:k+n], "\n"))
			k += n
		}
	} else {
		// A rule took a line break (a multi-line secret): redact each
		// piece alone, which may miss a key that names a secret but never
		// hides what runs.
		for _, p := range pieces {
			lits = append(lits, r.Redact(p))
		}
	}
	var b strings.Builder
	for i, a := range actives {
		b.WriteString(lits[i])
		b.WriteString(r.activeText(cmd, a, depth))
	}
	b.WriteString(lits[len(lits)-1])
	return edit{start, end, b.String()}
}

// span is an active part of a command: something that runs or expands.
type span struct {
	start, end int
	// inner is the command inside a substitution ([innerStart,innerEnd)),
	// redacted recursively; empty for expansions kept as written.
	innerStart, innerEnd int
}

// activeSpans finds the outermost substitutions and expansions of a
// parsed command, in order.
func activeSpans(f *syntax.File) []span {
	var out []span
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			return false
		}
		s, e := int(n.Pos().Offset()), int(n.End().Offset())
		switch x := n.(type) {
		case *syntax.CmdSubst:
			sp := span{start: s, end: e}
			switch {
			case x.Backquotes:
				sp.innerStart = int(x.Left.Offset()) + 1
			default: // $( … ) and ${ …; }
				sp.innerStart = int(x.Left.Offset()) + 2
			}
			sp.innerEnd = int(x.Right.Offset())
			out = append(out, sp)
			return false
		case *syntax.ProcSubst:
			out = append(out, span{start: s, end: e, innerStart: int(x.OpPos.Offset()) + 2, innerEnd: int(x.Rparen.Offset())})
			return false
		case *syntax.ParamExp, *syntax.ArithmExp:
			out = append(out, span{start: s, end: e})
			return false
		}
		return true
	})
	slices.SortFunc(out, func(a, b span) int { return a.start - b.start })
	return out
}

// activeText is an active span as shown: kept as written, with a
// substitution's command redacted as a command.
func (r *Redactor) activeText(cmd string, a span, depth int) string {
	if a.innerEnd <= a.innerStart || a.innerStart < a.start || a.innerEnd > a.end {
		return cmd[a.start:a.end]
	}
	return cmd[a.start:a.innerStart] + r.command(cmd[a.innerStart:a.innerEnd], depth+1) + cmd[a.innerEnd:a.end]
}
