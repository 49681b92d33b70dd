package eval

import (
	"fmt"
	"strings"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

// Matcher selects recorded tool calls: "tool[.action] target[: pattern]".
// The tool may be * (any); no action matches every action; the target is
// an inventory name, alias or ID (* for any) and matches the resource or
// any resource in its routing chain (a service and its host). The pattern
// is a command glob (wordsMatch) matched against the command the call ran,
// or for calls that take a path (read.file, read.tail, read.find,
// file_edit) a glob against the path.
type Matcher struct {
	Raw     string
	Tool    string
	Action  string
	Target  string
	path    string
	command *commandPattern
	// shows are |-separated texts one of which the call's output must
	// hold (evidence parts written "MATCHER ~ TEXT").
	shows string
}

// ParseMatcher reads a matcher.
func ParseMatcher(s string) (Matcher, error) {
	head, pat, hasPat := strings.Cut(s, ":")
	f := strings.Fields(head)
	if len(f) != 2 {
		return Matcher{}, fmt.Errorf("%q: want \"tool[.action] target[: pattern]\"", s)
	}
	m := Matcher{Raw: s, Target: f[1]}
	m.Tool, m.Action, _ = strings.Cut(f[0], ".")
	if hasPat {
		pat = strings.TrimSpace(pat)
		if pat == "" {
			return Matcher{}, fmt.Errorf("%q: empty pattern after ':'", s)
		}
		if strings.HasPrefix(pat, "/") {
			m.path = pat
		} else {
			cp, err := parsePattern(pat)
			if err != nil {
				return Matcher{}, fmt.Errorf("%q: %v", s, err)
			}
			m.command = &cp
		}
	}
	return m, nil
}

// Call is one tool call of a run as the grader sees it.
type Call struct {
	Seq     int               `json:"seq"`
	Turn    int               `json:"turn"`
	Tool    string            `json:"tool"`
	Action  string            `json:"action,omitempty"`
	Target  string            `json:"target,omitempty"`
	ID      policy.ResourceID `json:"resource,omitempty"`
	Command string            `json:"command,omitempty"`
	Path    string            `json:"path,omitempty"`
	Kind    policy.Kind       `json:"kind"`
	// Ran: the tool executed (policy let it through, or it was approved).
	Ran bool `json:"ran"`
	// OK: it ran and succeeded.
	OK bool `json:"ok"`
	// Approval: it waited for an approval; Approved: it was granted.
	Approval bool   `json:"approval,omitempty"`
	Approved bool   `json:"approved,omitempty"`
	Code     string `json:"code,omitempty"`
	// Proposed is the sequence number at which the call was first seen
	// (Seq is when its result came back).
	Proposed int `json:"proposed"`
	// Output is what the tool returned: the command's raw output, or the
	// result envelope for tools that run none. Kept whole so a run can be
	// judged again later.
	Output string `json:"output,omitempty"`
}

// Match reports whether c matches m in inv.
func (m Matcher) Match(inv *inventory.Inventory, c Call) bool {
	if m.Tool != "*" && m.Tool != c.Tool {
		return false
	}
	if m.Action != "" && m.Action != c.Action {
		return false
	}
	if m.Target != "*" && !sameChain(inv, m.Target, c) {
		return false
	}
	if m.shows != "" && !containsAny(c.Output, m.shows) {
		return false
	}
	switch {
	case m.path != "":
		return c.Path != "" && globMatch(m.path, c.Path)
	case m.command != nil:
		return c.Command != "" && m.command.matchCommand(c.Command)
	}
	return true
}

// sameChain reports whether target names the call's resource or one in its
// routing chain (either way).
func sameChain(inv *inventory.Inventory, target string, c Call) bool {
	want, ok := inv.Lookup(target)
	if !ok {
		return strings.EqualFold(target, c.Target)
	}
	if c.ID == "" {
		return false
	}
	if want.ID == c.ID {
		return true
	}
	for _, r := range inv.RoutingChain(c.ID) {
		if r.ID == want.ID {
			return true
		}
	}
	for _, r := range inv.RoutingChain(want.ID) {
		if r.ID == c.ID {
			return true
		}
	}
	return false
}
