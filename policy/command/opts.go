package command

import "strings"

// optSpec is the first-generation option scanner, kept for the SQL
// clients' checkers (inspect.go); every other tool is described by a
// grammar (grammar.go). It describes how a command parses its options,
// getopt style: short
// options cluster (-abc), a short option's value may be attached (-n5) or
// the next word, long options take values as --name=v or --name v.
type optSpec struct {
	// shortArg lists the short options that take a value.
	shortArg string
	// shortOptArg lists short options whose value is optional and can only
	// be attached (-i.bak, -p[password]).
	shortOptArg string
	// longArg lists the long options (without "--") that take a value.
	longArg []string
	// stopAtOperand ends option parsing at the first operand, the way
	// wrappers such as env, nice and timeout parse theirs.
	stopAtOperand bool
}

func (s *optSpec) takesLong(name string) bool {
	for _, n := range s.longArg {
		if n == name {
			return true
		}
	}
	return false
}

// tokKind is the kind of one scanned token.
type tokKind uint8

const (
	tokOperand tokKind = iota // an operand (after "--", every word is one)
	tokShort                  // a short option: name is one character
	tokLong                   // a long option: name has no leading "--"
	tokDynamic                // a word whose value is unknown: could be anything
)

// token is one option or operand.
type token struct {
	kind tokKind
	i    int    // index in the argument list of the word it came from
	name string // option name
	val  string // option value or operand text
	// hasVal reports that the option carried a value; valStatic that the
	// value (or operand) is known exactly.
	hasVal    bool
	valStatic bool
}

// optScan walks the arguments of one command according to its optSpec.
type optScan struct {
	spec  *optSpec
	args  []arg
	i     int    // next argument
	rest  string // unread characters of the current short-option cluster
	ri    int    // index of the cluster's argument
	ended bool   // saw "--", or the first operand with stopAtOperand
}

func scanOpts(spec *optSpec, args []arg) optScan {
	return optScan{spec: spec, args: args}
}

// next returns the next token, or false at the end.
func (s *optScan) next() (token, bool) {
	if s.rest != "" {
		name := s.rest[:1]
		s.rest = s.rest[1:]
		t := token{kind: tokShort, i: s.ri, name: name}
		if strings.IndexByte(s.spec.shortOptArg, name[0]) >= 0 {
			t.val, t.hasVal, t.valStatic = s.rest, s.rest != "", true
			s.rest = ""
			return t, true
		}
		if strings.IndexByte(s.spec.shortArg, name[0]) >= 0 {
			switch {
			case s.rest != "":
				t.val, t.hasVal, t.valStatic = s.rest, true, true
				s.rest = ""
			case s.i < len(s.args):
				a := s.args[s.i]
				s.i++
				t.val, t.hasVal, t.valStatic = a.s, true, a.static
			}
		}
		return t, true
	}
	if s.i >= len(s.args) {
		return token{}, false
	}
	a, idx := s.args[s.i], s.i
	s.i++
	if s.ended {
		return token{kind: tokOperand, i: idx, val: a.s, valStatic: a.static}, true
	}
	if !a.static {
		return token{kind: tokDynamic, i: idx, val: a.s}, true
	}
	if len(a.s) < 2 || a.s[0] != '-' {
		if s.spec.stopAtOperand {
			s.ended = true
		}
		return token{kind: tokOperand, i: idx, val: a.s, valStatic: true}, true
	}
	if a.s == "--" {
		s.ended = true
		return s.next()
	}
	if a.s[1] == '-' {
		name := a.s[2:]
		t := token{kind: tokLong, i: idx, name: name}
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			t.name, t.val, t.hasVal, t.valStatic = name[:eq], name[eq+1:], true, true
		} else if s.spec.takesLong(name) && s.i < len(s.args) {
			v := s.args[s.i]
			s.i++
			t.val, t.hasVal, t.valStatic = v.s, true, v.static
		}
		return t, true
	}
	s.rest, s.ri = a.s[1:], idx
	return s.next()
}

// optText is an option as written, for reasons.
func optText(t token) string {
	switch t.kind {
	case tokShort:
		return "-" + t.name
	case tokLong:
		return "--" + t.name
	}
	return t.val
}
