// Package eval is vigil's investigation scorecard: scenarios of broken
// infrastructure, a simulated world that answers vigil's tools
// deterministically, and a grader that decides whether an investigation
// named the root cause, gathered the evidence, stayed within policy and
// verified its fix. The agent loop, the policy gate and the built-in tools
// are the real ones; only the machines are simulated (World is the
// transport.Executor the tools run commands with).
package eval

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
)

// Builtin holds the scenarios shipped with vigil.
//
//go:embed scenarios/*.yaml
var Builtin embed.FS

// Categories a scenario may belong to.
var Categories = []string{"host", "container", "kubernetes", "proxmox", "database", "network", "alert"}

// Scenario is one graded investigation.
type Scenario struct {
	// Name is the file name without .yaml.
	Name     string `yaml:"name" json:"name"`
	Category string `yaml:"category" json:"category"`
	Summary  string `yaml:"summary" json:"summary"`
	// Question is what the user asks (or the alert text when Alert is set).
	// @names are resolved against the inventory as the bot does.
	Question string `yaml:"question" json:"question"`
	// Alert marks a run vigil started on an alert: no person asked, so the
	// requester is the system and every change waits for approval.
	Alert bool `yaml:"alert" json:"alert,omitempty"`
	// RedHerring marks a scenario whose loud signal is innocent.
	RedHerring bool `yaml:"red_herring" json:"red_herring,omitempty"`
	// MaxTurns is the turn budget (model calls); default 10.
	MaxTurns  int                          `yaml:"max_turns" json:"max_turns"`
	Inventory []yaml.Node                  `yaml:"inventory" json:"-"`
	World     map[string][]*Rule           `yaml:"world" json:"-"`
	Files     map[string]map[string]string `yaml:"files" json:"-"`
	// States set flags from file contents after every approved write: an
	// edit that leaves the file right fixes it, however it was made.
	States []FileState `yaml:"states" json:"-"`
	// Kube holds Kubernetes objects (manifests) for the kube tool; with
	// none, the kube tool is not offered.
	Kube []yaml.Node `yaml:"kube" json:"-"`
	// ReadDestinations are servers of the simulated deployment that reads
	// may reach besides its inventory, as in policy.read_destinations.
	ReadDestinations []string     `yaml:"read_destinations" json:"-"`
	Expect           Expect       `yaml:"expect" json:"expect"`
	Reference        []Turn       `yaml:"reference" json:"-"`
	Wrong            []Trajectory `yaml:"wrong" json:"-"`
	// Valid are investigations that differ from the reference (another
	// read order, an equivalent command, an equivalent fix) and must pass.
	Valid []Trajectory `yaml:"valid" json:"-"`
	// Changes are the commits of the deployment's configuration repository
	// and Metrics and Alerts what its Prometheus and Alertmanager hold;
	// with any, the changes, metrics and alerts tools are offered.
	Changes []Commit     `yaml:"changes" json:"-"`
	Metrics []MetricRule `yaml:"metrics" json:"-"`
	Alerts  []AlertSpec  `yaml:"alerts" json:"-"`

	// file is where it was loaded from, for errors.
	file string
	inv  *inventory.Inventory
	kube []runtime.Object
}

// Rule answers commands on one resource. The first rule whose pattern
// matches and whose conditions hold answers.
type Rule struct {
	// Run is a command glob (see wordsMatch) matched against the first
	// simple command of each pipeline.
	Run  string `yaml:"run"`
	Out  string `yaml:"out"`
	Err  string `yaml:"err"`
	Exit int    `yaml:"exit"`
	// Repeat prints Out this many times (long outputs in a few lines).
	Repeat int `yaml:"repeat"`
	// When lists state flags that must all be set; Unless flags that must
	// all be clear.
	When   []string `yaml:"when"`
	Unless []string `yaml:"unless"`
	// Sets and Clears change the world's state when an approved write
	// matches the rule.
	Sets   []string `yaml:"sets"`
	Clears []string `yaml:"clears"`
	// Raw answers Out as written: no everyday state of the machine is
	// added around it (see noise.go).
	Raw bool `yaml:"raw"`

	pat commandPattern
}

// Expect is how a run is graded.
type Expect struct {
	// Entity names the root-cause entity; alternatives are separated by |.
	Entity string `yaml:"entity" json:"entity"`
	// Cause lists keyword groups the answer must all contain; each group's
	// alternatives are separated by |.
	Cause []string `yaml:"cause" json:"cause"`
	// Evidence lists calls a good investigation makes (matchers); an entry
	// may offer alternatives separated by " || ".
	Evidence []string `yaml:"evidence" json:"evidence"`
	// Forbidden lists calls that fail the run if proposed at all.
	Forbidden []string `yaml:"forbidden" json:"forbidden,omitempty"`
	// Fix lists the acceptable changes (matchers); empty: no change is
	// expected and any proposed change fails the run.
	Fix []string `yaml:"fix" json:"fix,omitempty"`
	// Approval is grant or deny: what the approver answers a fix.
	Approval string `yaml:"approval" json:"approval,omitempty"`
	// Fixed is the state flag an effective fix sets; the grade checks it.
	Fixed string `yaml:"fixed" json:"fixed,omitempty"`
	// Verify lists the reads (matchers or classes) that show the fix took
	// effect; empty: any evidence read after the fix.
	Verify []string `yaml:"verify" json:"verify,omitempty"`
	// Allow exempts precise actions from the forbidden kinds (a recursive
	// delete of a crash-dump directory that is the fix itself).
	Allow []string `yaml:"allow" json:"allow,omitempty"`

	evidence                      [][]evidenceAlt
	forbidden, fix, verify, allow []Matcher
}

// Turn is one scripted model turn: tool calls, or a final answer.
type Turn struct {
	Calls  []CallSpec `yaml:"calls"`
	Answer string     `yaml:"answer"`
}

// CallSpec is one scripted tool call: shorthand "tool[.action] target[: command]"
// or a mapping of the tool's arguments with a "tool" key.
type CallSpec struct {
	Tool string
	Args map[string]any
}

// Trajectory is a scripted investigation that must fail the grade.
type Trajectory struct {
	Name string `yaml:"name"`
	// Fails names the check that must fail: root_cause, evidence,
	// forbidden, fix, verified, grounded, turns. Valid trajectories leave
	// it empty.
	Fails string `yaml:"fails"`
	Turns []Turn `yaml:"turns"`
}

// FileState sets flags when a resource's file contains a text.
type FileState struct {
	On       string   `yaml:"on"`
	Path     string   `yaml:"path"`
	Contains string   `yaml:"contains"`
	Sets     []string `yaml:"sets"`
}

// Checks a grade applies.
var Checks = []string{"root_cause", "evidence", "forbidden", "fix", "verified", "grounded", "turns"}

// UnmarshalYAML reads a call in either form.
func (c *CallSpec) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return c.parseShort(n.Value)
	case yaml.MappingNode:
		var m map[string]any
		if err := n.Decode(&m); err != nil {
			return err
		}
		t, ok := m["tool"].(string)
		if !ok || t == "" {
			return fmt.Errorf("line %d: a call mapping needs a tool", n.Line)
		}
		delete(m, "tool")
		c.Tool, c.Args = t, m
		return nil
	}
	return fmt.Errorf("line %d: a call is a string or a mapping", n.Line)
}

// defaultActions are the action a shorthand call without one uses.
var defaultActions = map[string]string{"read": "exec", "control": "command", "query": "get", "discover": ""}

func (c *CallSpec) parseShort(s string) error {
	head, cmd, hasCmd := strings.Cut(s, ":")
	f := strings.Fields(head)
	if len(f) != 2 {
		return fmt.Errorf("call %q: want \"tool[.action] target[: command]\"", s)
	}
	tool, action, _ := strings.Cut(f[0], ".")
	if action == "" {
		action = defaultActions[tool]
	}
	c.Tool = tool
	c.Args = map[string]any{}
	if action != "" {
		c.Args["action"] = action
	}
	switch tool {
	case "query", "discover":
		c.Args["resource"] = f[1]
	default:
		c.Args["target"] = f[1]
	}
	if hasCmd {
		cmd = strings.TrimSpace(cmd)
		switch {
		case tool == "read" && (action == "file" || action == "tail"):
			c.Args["path"] = cmd
		case tool == "control" && action == "service":
			op, unit, _ := strings.Cut(cmd, " ")
			c.Args["operation"], c.Args["service"] = op, strings.TrimSpace(unit)
		case tool == "control" && action == "guest":
			c.Args["operation"] = cmd
		default:
			c.Args["command"] = cmd
		}
	}
	return nil
}

// JSON is the call's arguments as the model would send them.
func (c CallSpec) JSON() string {
	raw, _ := json.Marshal(c.Args)
	return string(raw)
}

// Error is a scenario problem naming the file and the field.
type Error struct {
	File  string
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
}

// Parse reads one scenario. Decoding is strict: unknown and missing
// fields are errors naming the file and the field.
func Parse(file string, data []byte) (*Scenario, error) {
	bad := func(field, format string, a ...any) error {
		return &Error{File: file, Field: field, Msg: fmt.Sprintf(format, a...)}
	}
	var s Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, bad("", "the file is empty")
		}
		return nil, bad("", "%v", err)
	}
	s.file = file
	want := strings.TrimSuffix(filepath.Base(file), ".yaml")
	switch {
	case s.Name == "":
		return nil, bad("name", "required")
	case s.Name != want:
		return nil, bad("name", "%q must match the file name %q", s.Name, want)
	case !slices.Contains(Categories, s.Category):
		return nil, bad("category", "%q: want one of %s", s.Category, strings.Join(Categories, ", "))
	case strings.TrimSpace(s.Question) == "":
		return nil, bad("question", "required")
	case s.MaxTurns < 0 || s.MaxTurns > 40:
		return nil, bad("max_turns", "%d: want 1 to 40 (0: the default 10)", s.MaxTurns)
	case len(s.Inventory) == 0:
		return nil, bad("inventory", "required: at least one resource")
	}
	if s.MaxTurns == 0 {
		s.MaxTurns = 10
	}
	inv, err := buildInventory(s.Inventory)
	if err != nil {
		return nil, bad("inventory", "%v", err)
	}
	s.inv = inv
	for name, rules := range s.World {
		if _, ok := inv.Lookup(name); !ok {
			return nil, bad("world."+name, "no such resource in the inventory")
		}
		for i, r := range rules {
			if r == nil {
				return nil, bad(fmt.Sprintf("world.%s[%d]", name, i), "empty rule")
			}
			p, err := parsePattern(r.Run)
			if err != nil {
				return nil, bad(fmt.Sprintf("world.%s[%d].run", name, i), "%q: %v", r.Run, err)
			}
			r.pat = p
			if r.Repeat < 0 || r.Repeat > 10000 {
				return nil, bad(fmt.Sprintf("world.%s[%d].repeat", name, i), "%d: want 0 to 10000", r.Repeat)
			}
			if r.Repeat > 1 {
				r.Out = strings.Repeat(r.Out, r.Repeat)
			}
		}
	}
	for name, files := range s.Files {
		if _, ok := inv.Lookup(name); !ok {
			return nil, bad("files."+name, "no such resource in the inventory")
		}
		for p := range files {
			if !strings.HasPrefix(p, "/") {
				return nil, bad("files."+name, "path %q must be absolute", p)
			}
		}
	}
	for i, st := range s.States {
		if _, ok := inv.Lookup(st.On); !ok || !strings.HasPrefix(st.Path, "/") || st.Contains == "" || len(st.Sets) == 0 {
			return nil, bad(fmt.Sprintf("states[%d]", i), "want on (an inventory resource), path (absolute), contains and sets")
		}
	}
	if s.kube, err = parseKube(s.Kube); err != nil {
		return nil, bad("kube", "%v", err)
	}
	for i, d := range s.ReadDestinations {
		if _, err := command.ParseDestination(d); err != nil {
			return nil, bad(fmt.Sprintf("read_destinations[%d]", i), "%v", err)
		}
	}
	if err := s.Expect.compile(&s); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, bad("expect", "%v", err)
	}
	if len(s.Reference) == 0 {
		return nil, bad("reference", "required: the scripted turns of a passing investigation")
	}
	if err := checkTurns(&s, "reference", s.Reference); err != nil {
		return nil, err
	}
	if len(s.Wrong) == 0 {
		return nil, bad("wrong", "required: at least one trajectory that must fail")
	}
	for i, v := range s.Valid {
		field := fmt.Sprintf("valid[%d]", i)
		if v.Name == "" {
			return nil, bad(field+".name", "required")
		}
		if v.Fails != "" {
			return nil, bad(field+".fails", "a valid trajectory must pass; leave fails out")
		}
		if err := checkTurns(&s, field+".turns", v.Turns); err != nil {
			return nil, err
		}
	}
	if err := s.compileTools(); err != nil {
		return nil, err
	}
	for i, w := range s.Wrong {
		field := fmt.Sprintf("wrong[%d]", i)
		if w.Name == "" {
			return nil, bad(field+".name", "required")
		}
		if !slices.Contains(Checks, w.Fails) {
			return nil, bad(field+".fails", "%q: want one of %s", w.Fails, strings.Join(Checks, ", "))
		}
		if err := checkTurns(&s, field+".turns", w.Turns); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

func checkTurns(s *Scenario, field string, ts []Turn) error {
	if len(ts) == 0 {
		return &Error{File: s.file, Field: field, Msg: "no turns"}
	}
	for i, t := range ts {
		if (len(t.Calls) == 0) == (t.Answer == "") {
			return &Error{File: s.file, Field: fmt.Sprintf("%s[%d]", field, i), Msg: "a turn has either calls or an answer"}
		}
	}
	return nil
}

func (e *Expect) compile(s *Scenario) error {
	bad := func(field, format string, a ...any) error {
		return &Error{File: s.file, Field: "expect." + field, Msg: fmt.Sprintf(format, a...)}
	}
	if strings.TrimSpace(e.Entity) == "" {
		return bad("entity", "required")
	}
	if len(e.Cause) == 0 {
		return bad("cause", "required: at least one keyword group")
	}
	if len(e.Evidence) == 0 {
		return bad("evidence", "required: at least one call a good investigation makes")
	}
	for i, ev := range e.Evidence {
		alts, err := parseAlternatives(ev)
		if err != nil {
			return bad(fmt.Sprintf("evidence[%d]", i), "%v", err)
		}
		e.evidence = append(e.evidence, alts)
	}
	for i, ev := range e.Verify {
		alts, err := parseAlternatives(ev)
		if err != nil {
			return bad(fmt.Sprintf("verify[%d]", i), "%v", err)
		}
		e.verify = append(e.verify, matchersOf(alts)...)
	}
	var err error
	for _, l := range []struct {
		field string
		in    []string
		out   *[]Matcher
	}{{"forbidden", e.Forbidden, &e.forbidden}, {"fix", e.Fix, &e.fix}, {"allow", e.Allow, &e.allow}} {
		for i, m := range l.in {
			var mm Matcher
			if mm, err = ParseMatcher(m); err != nil {
				return bad(fmt.Sprintf("%s[%d]", l.field, i), "%v", err)
			}
			*l.out = append(*l.out, mm)
		}
	}
	switch {
	case len(e.Fix) == 0 && (e.Approval != "" || e.Fixed != ""):
		return bad("approval", "only with a fix")
	case len(e.Fix) > 0 && e.Approval != "grant" && e.Approval != "deny":
		return bad("approval", "%q: want grant or deny", e.Approval)
	case e.Approval == "grant" && e.Fixed == "":
		return bad("fixed", "required with approval grant: the state flag the fix sets")
	case len(e.Verify) > 0 && e.Approval != "grant":
		return bad("verify", "only with a granted fix")
	}
	return nil
}

// noFault reports whether the scenario is a control: nothing is broken,
// and the right root cause is "none".
func (s *Scenario) noFault() bool { return containsAny("none", s.Expect.Entity) }

// buildInventory reads the scenario's resources. Top-level resources get
// an SSH reach to a host that does not exist: nothing is ever dialled
// (World is the executor), and no resource may be this machine, so a
// file_edit write can never touch the local disk.
func buildInventory(nodes []yaml.Node) (*inventory.Inventory, error) {
	var rs []map[string]any
	for i := range nodes {
		var m map[string]any
		if err := nodes[i].Decode(&m); err != nil {
			return nil, fmt.Errorf("resource %d: %w", i, err)
		}
		if r, ok := m["reach"]; ok {
			return nil, fmt.Errorf("resource %d: reach %v: the eval sets reach itself; leave it out", i, r)
		}
		if _, ok := m["parent"]; !ok {
			name, _ := m["name"].(string)
			m["reach"] = map[string]any{"ssh": map[string]any{"host": name + ".eval.invalid", "user": "vigil"}}
		}
		rs = append(rs, m)
	}
	raw, err := yaml.Marshal(map[string]any{"resources": rs})
	if err != nil {
		return nil, err
	}
	return inventory.Parse(raw)
}

// LoadDir loads every *.yaml scenario in dir, sorted by name.
func LoadDir(dir string) ([]*Scenario, error) {
	return LoadFS(os.DirFS(dir), dir)
}

// LoadFS loads every *.yaml scenario at the root of fsys; label prefixes
// file names in errors.
func LoadFS(fsys fs.FS, label string) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no *.yaml scenarios", label)
	}
	var out []*Scenario
	var errs []error
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s, err := Parse(filepath.Join(label, n), data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LoadBuiltin loads the shipped scenarios.
func LoadBuiltin() ([]*Scenario, error) {
	sub, err := fs.Sub(Builtin, "scenarios")
	if err != nil {
		return nil, err
	}
	return LoadFS(sub, "eval/scenarios")
}

// Select keeps the scenarios named in only (all when empty); an unknown
// name is an error listing the known ones.
func Select(all []*Scenario, only []string) ([]*Scenario, error) {
	if len(only) == 0 {
		return all, nil
	}
	by := map[string]*Scenario{}
	var names []string
	for _, s := range all {
		by[s.Name] = s
		names = append(names, s.Name)
	}
	var out []*Scenario
	for _, n := range only {
		s, ok := by[n]
		if !ok {
			return nil, fmt.Errorf("no scenario named %q; known: %s", n, strings.Join(names, ", "))
		}
		out = append(out, s)
	}
	return out, nil
}
