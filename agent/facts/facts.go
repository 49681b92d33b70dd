// Package facts reads what a tool result says about the world into a few
// short facts (SPEC A9), deterministically and without a model: the
// session's knowledge block is made of them, and compaction keeps them in
// place of a result it shortens. It reads results only as the model
// received them, so a fact never holds more than the model could see.
package facts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vigilops/vigil/agent/jsontree"
)

// Fact is one thing learned from a tool result (SPEC A9): keyed so that a
// newer observation of the same thing replaces the older one, and tied to
// the call that produced it.
type Fact struct {
	// Key identifies what the fact is about, readably: "service web1
	// nginx.service", "errors web1 journalctl -u nginx".
	Key      string `json:"key"`
	Category string `json:"category"`
	// Value is at most 200 characters.
	Value string `json:"value"`
	// Source is the ID of the tool call the fact came from; Call describes
	// that call ("read exec on web1: systemctl status nginx").
	Source string `json:"source"`
	Call   string `json:"call"`
	// Turn is the knowledge turn (a count of the conversation's tool-call
	// turns) in which the fact was last observed.
	Turn int `json:"turn"`
	// Used orders facts for LRU eviction: larger is more recent.
	Used int64 `json:"used"`
}

// Categories of a Fact (SPEC A9).
const (
	Resource  = "resource"  // identity and routing of a resource
	Discovery = "discovery" // ports, services, paths, mounts
	Service   = "service"   // a service's or workload's state
	Version   = "version"   // a program's version
	Port      = "port"      // ports seen listening
	Error     = "error"     // error lines in output
	Metric    = "metric"    // load, memory, disk, metric findings
	Exit      = "exit"      // how a command ended
	Change    = "change"    // a write that ran
	Negative  = "negative"  // not found, or failed: do not ask again
)

// Bounds of what one result yields.
const (
	maxFactValue      = 200
	maxFactsPerResult = 10
	maxErrorPatterns  = 3
	maxCommandShown   = 60
)

// Call is what extraction needs to know of a tool call, read from the
// model's arguments: no decoding through the tool, so compaction can
// recompute it for any message of the history.
type Call struct {
	ID      string
	Tool    string
	Action  string
	Target  string
	Command string
	Path    string
	Query   string
	Service string
	Op      string
}

// CallOf reads a call from its ID, its tool's name and the JSON arguments
// the model wrote; arguments that are not a JSON object leave only the ID
// and the tool.
func CallOf(id, tool, arguments string) Call {
	ci := Call{ID: id, Tool: tool}
	var args map[string]any
	if json.Unmarshal([]byte(arguments), &args) != nil {
		return ci
	}
	str := func(k string) string {
		s, _ := args[k].(string)
		return strings.TrimSpace(s)
	}
	ci.Action = str("action")
	ci.Target = str("target")
	if ci.Target == "" {
		ci.Target = str("resource")
	}
	ci.Command = str("command")
	ci.Path = str("path")
	ci.Query = str("query")
	ci.Service = str("service")
	ci.Op = str("operation")
	if ci.Query == "" {
		ci.Query = str("metric")
	}
	return ci
}

// subject is what the call was about, for fact keys.
func (ci Call) subject() string {
	for _, s := range []string{ci.Target, ci.Query, ci.Path} {
		if s != "" {
			return clip(s, 60)
		}
	}
	return "-"
}

// What is the command, path or operation the call ran, shortened.
func (ci Call) What() string {
	switch {
	case ci.Command != "":
		return clip(oneLine(ci.Command), maxCommandShown)
	case ci.Path != "":
		return clip(ci.Path, maxCommandShown)
	case ci.Op != "" || ci.Service != "":
		return strings.TrimSpace(ci.Op + " " + ci.Service)
	}
	return ""
}

// Describe is the call in a few words: "read exec on web1: df -h".
func (ci Call) Describe() string {
	s := ci.Tool
	if ci.Action != "" {
		s += " " + ci.Action
	}
	if ci.Target != "" {
		s += " on " + clip(ci.Target, 60)
	} else if ci.Query != "" {
		s += " " + strconv.Quote(clip(ci.Query, 60))
	}
	if w := ci.What(); w != "" {
		s += ": " + w
	}
	return s
}

// Extract reads the facts in one tool result, deterministically and
// without a model (SPEC A9). content is the result exactly as the model
// received it (redacted), so a fact never holds a secret the model could
// not see. It returns at most maxFactsPerResult facts.
func Extract(ci Call, content string) []Fact {
	var env struct {
		OK    bool `json:"ok"`
		Data  any  `json:"data"`
		Error *struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Blocked bool           `json:"blocked"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(content), &env); err != nil {
		return nil
	}
	data, _ := env.Data.(map[string]any) // data that is not an object says nothing here
	x := &extraction{ci: ci}
	if env.Error != nil {
		if env.Error.Blocked {
			return nil // a policy decision, not something learned about the world
		}
		x.negative(env.Error.Code, env.Error.Message, env.Error.Details)
	}
	switch {
	case data == nil:
	case IsCommand(data):
		x.command(data, env.OK)
	default:
		x.structured(data, env.OK)
	}
	return x.facts
}

type extraction struct {
	ci    Call
	facts []Fact
}

func (x *extraction) add(cat, key, value string) {
	if len(x.facts) >= maxFactsPerResult || strings.TrimSpace(value) == "" {
		return
	}
	key = clip(oneLine(key), 120)
	for i := range x.facts {
		if x.facts[i].Key == key {
			return
		}
	}
	x.facts = append(x.facts, Fact{Key: key, Category: cat, Value: clip(oneLine(value), maxFactValue),
		Source: x.ci.ID, Call: clip(x.ci.Describe(), 120)})
}

// negative records a marker for a call that found nothing or failed, so
// the model does not ask again expecting another answer.
func (x *extraction) negative(code, msg string, details map[string]any) {
	subject := x.ci.Tool + " " + x.ci.subject()
	if w := x.ci.What(); w != "" {
		subject += " " + w
	}
	switch code {
	case "NOT_FOUND":
		x.add(Negative, "not found: "+subject, "not found: "+firstLine(msg))
	default:
		if ec, ok := details["exit_code"].(float64); ok {
			x.add(Exit, "exit "+x.ci.subject()+" "+x.ci.What(), fmt.Sprintf("exit %d: %s", int(ec), firstLine(msg)))
			return
		}
		x.add(Negative, "failed: "+subject, strings.ToLower(code)+": "+firstLine(msg))
	}
}

// IsCommand reports whether a result's data is a command's: its command
// line and exit code, with the output beside them.
func IsCommand(d map[string]any) bool {
	_, cmd := d["command"].(string)
	_, exit := d["exit_code"].(float64)
	return cmd && exit
}

// command reads a command's output: services, versions, ports, tables of
// workloads, load, memory, disks and error lines.
func (x *extraction) command(d map[string]any, ok bool) {
	out, _ := d["output"].(string)
	stderr, _ := d["stderr"].(string)
	target, _ := d["target"].(string)
	if target == "" {
		target = x.ci.subject()
	}
	exit := int(d["exit_code"].(float64))
	if ok {
		lines := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1
		if strings.TrimSpace(out) == "" {
			lines = 0
		}
		v := fmt.Sprintf("exit %d, %d lines", exit, lines)
		if t := strings.TrimSpace(out); lines == 1 && len(t) <= 120 {
			v = fmt.Sprintf("exit %d: %s", exit, t)
		}
		cat := Exit
		if x.ci.Tool == "control" || x.ci.Tool == "file_edit" {
			cat = Change
		}
		x.add(cat, "exit "+target+" "+x.ci.What(), v)
	}
	text := out
	if stderr != "" {
		text += "\n" + stderr
	}
	scanOutput(x, target, text)
}

// structured reads the JSON data of non-command results: resources,
// discovery, searches, health, memories, and for any other tool (plugins,
// metrics, alerts, Kubernetes) its top-level scalar fields.
func (x *extraction) structured(d map[string]any, ok bool) {
	if r, isRes := d["resource"].(map[string]any); isRes {
		x.resource(r, d)
		return
	}
	if rs, isList := d["resources"].([]any); isList {
		names := make([]string, 0, len(rs))
		for _, e := range rs {
			if m, ok := e.(map[string]any); ok {
				names = append(names, fmt.Sprintf("%v (%v)", m["name"], m["kind"]))
			}
		}
		x.add(Resource, "inventory "+x.ci.Action+" "+x.ci.subject(), fmt.Sprintf("%d found: %s", len(rs), strings.Join(names, ", ")))
		return
	}
	if st, isHealth := d["status"].(string); isHealth && d["latency_ms"] != nil {
		v := st
		if e, _ := d["error"].(string); e != "" {
			v += ": " + firstLine(e)
		}
		x.add(Service, "health "+fmt.Sprint(d["resource"]), v)
		return
	}
	if ms, isMem := d["memories"].([]any); isMem {
		keys := make([]string, 0, len(ms))
		for _, e := range ms {
			if m, ok := e.(map[string]any); ok {
				keys = append(keys, fmt.Sprint(m["key"]))
			}
		}
		x.add(Discovery, "memories "+x.ci.subject(), fmt.Sprintf("%d: %s", len(ms), strings.Join(keys, ", ")))
		return
	}
	if _, isTree := d["tree"]; isTree {
		if r, _ := d["routing"].(string); r != "" {
			x.add(Resource, "routing "+x.ci.subject(), r)
		}
		return
	}
	// Anything else (metrics, alerts, Kubernetes, plugins): its values,
	// states and errors first, what they are about next, timestamps and
	// notes last, so the value cap cuts the least useful: one fact for
	// the fields outside lists, one for each element of its lists of
	// objects (a series, an alert, a pod).
	cat := Metric
	if !ok {
		cat = Negative
	}
	key := x.ci.Tool
	if x.ci.Action != "" {
		key += " " + x.ci.Action
	}
	root := jsontree.FromValue(d)
	if top := renderLeaves(leavesOf(root, "")); top != "" {
		x.add(cat, key+" "+x.ci.subject(), top)
	}
	for i, k := range root.Keys {
		arr := root.Kids[i]
		if arr.Kind != jsontree.Array {
			continue
		}
		for j, el := range arr.Kids {
			if el.Kind != jsontree.Object {
				continue
			}
			id := identityOf(el)
			if id == "" {
				id = fmt.Sprintf("%s[%d]", k, j)
			}
			x.add(cat, key+" "+x.ci.subject()+" "+id, renderLeaves(leavesOf(el, "")))
		}
	}
	for _, k := range []string{"output", "content", "text", "summary"} {
		if s, _ := d[k].(string); s != "" {
			scanOutput(x, x.ci.subject(), s)
		}
	}
}

// leaf is one scalar of a structured result, with its path and rank.
type leaf struct {
	path  string
	value string
	rank  int
}

// leavesOf lists an object's scalars, nested objects' under dotted paths
// ("trend.direction"); lists of scalars are joined, lists of objects left
// to their own facts.
func leavesOf(n *jsontree.Node, prefix string) []leaf {
	var out []leaf
	for i, k := range n.Keys {
		v := n.Kids[i]
		path := prefix + k
		switch v.Kind {
		case jsontree.Object:
			out = append(out, leavesOf(v, path+".")...)
		case jsontree.Array:
			var parts []string
			for _, e := range v.Kids {
				switch e.Kind {
				case jsontree.String:
					parts = append(parts, e.Str)
				case jsontree.Scalar:
					parts = append(parts, e.Raw)
				}
			}
			if len(parts) > 0 && len(parts) == len(v.Kids) {
				out = append(out, leaf{path, clip(strings.Join(parts, " "), 60), jsontree.Rank(k, &jsontree.Node{Kind: jsontree.String, Str: strings.Join(parts, " ")})})
			}
		case jsontree.String:
			if v.Str != "" {
				out = append(out, leaf{path, clip(oneLine(v.Str), 60), jsontree.Rank(k, v)})
			}
		default:
			if v.Raw != "null" {
				out = append(out, leaf{path, v.Raw, jsontree.Rank(k, v)})
			}
		}
	}
	return out
}

// renderLeaves writes leaves as k=v, the highest ranks first (and in their
// order within a rank), leaving out noise.
func renderLeaves(ls []leaf) string {
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].rank > ls[j].rank })
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		if l.rank > jsontree.Noise {
			parts = append(parts, l.path+"="+l.value)
		}
	}
	return strings.Join(parts, ", ")
}

// identityOf is what an element of a list is about: its first identity
// field (series, name, alertname, …).
func identityOf(n *jsontree.Node) string {
	for _, want := range []string{"series", "name", "alertname", "id", "instance", "pod", "target", "resource", "metric", "labels"} {
		for i, k := range n.Keys {
			if k != want {
				continue
			}
			switch v := n.Kids[i]; v.Kind {
			case jsontree.String:
				return clip(oneLine(v.Str), 60)
			case jsontree.Object:
				ls := leavesOf(v, "")
				parts := make([]string, 0, len(ls))
				for _, l := range ls {
					parts = append(parts, l.path+"="+l.value)
				}
				return clip(strings.Join(parts, ","), 60)
			}
		}
	}
	return ""
}

// resource reads a single resource (query get, discover): its identity and
// route, and what discovery found.
func (x *extraction) resource(r, d map[string]any) {
	name := fmt.Sprint(r["name"])
	v := fmt.Sprintf("%v (%v)", r["id"], r["kind"])
	if chain, ok := d["routing_chain"].([]any); ok && len(chain) > 1 {
		ids := make([]string, 0, len(chain))
		for _, c := range chain {
			if m, ok := c.(map[string]any); ok {
				ids = append(ids, fmt.Sprint(m["id"]))
			}
		}
		v += "; route " + strings.Join(ids, " -> ")
	}
	x.add(Resource, "resource "+name, v)
	list := func(field, label string) {
		vals, _ := d[field].([]any)
		if len(vals) == 0 {
			return
		}
		s := make([]string, 0, len(vals))
		for _, e := range vals {
			if m, ok := e.(map[string]any); ok {
				s = append(s, fmt.Sprintf("%v -> %v", m["source"], m["destination"]))
				continue
			}
			s = append(s, fmt.Sprint(e))
		}
		x.add(Discovery, label+" "+name, strings.Join(s, ", "))
	}
	list("ports", "ports")
	list("services", "services")
	list("log_paths", "logs")
	list("config_paths", "config")
	list("bind_mounts", "mounts")
	if f, ok := d["facts"].(map[string]any); ok {
		for _, k := range []string{"ports", "services", "log_paths", "config_paths", "bind_mounts"} {
			if _, ok := d[k]; !ok {
				d[k] = f[k]
			}
		}
		list("ports", "ports")
		list("services", "services")
		list("log_paths", "logs")
	}
}

var (
	reActive   = regexp.MustCompile(`^\s*Active:\s+(.+)$`)
	reUnit     = regexp.MustCompile(`^\s*[●*○×]?\s*([\w@.-]+\.(?:service|socket|timer|mount))\b`)
	reVersion  = regexp.MustCompile(`(?i)\bversion[:\s=]+v?(\d+(?:\.\d+)+[\w.+~-]*)`)
	reProgVer  = regexp.MustCompile(`\b([A-Za-z][\w.-]{1,30})/v?(\d+\.\d+(?:\.\d+)*)\b`)
	reListen   = regexp.MustCompile(`(?:^|\s)(?:\d{1,3}(?:\.\d{1,3}){3}|\*|\[[0-9a-fA-F:.%\w]*\]|::|0\.0\.0\.0):(\d{1,5})\s`)
	reUsers    = regexp.MustCompile(`users:\(\("([^"]+)"`)
	reDisk     = regexp.MustCompile(`\s(\d{1,3})%\s+(/\S*)\s*$`)
	reLoad     = regexp.MustCompile(`load average:\s*([\d.]+),\s*([\d.]+),\s*([\d.]+)`)
	reMem      = regexp.MustCompile(`^Mem:\s+(\S+)\s+(\S+)\s+(\S+)`)
	rePrefixTS = regexp.MustCompile(`^(?:\S+\s+)?(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?|\[\s*\d+\.\d+\])\s*`)
	reSyslogID = regexp.MustCompile(`^\S+\s+[\w.@/-]+(?:\[\d+\])?:\s+`)
	reDigits   = regexp.MustCompile(`\d+`)
	reColumns  = regexp.MustCompile(`\S+(?: \S+)*`)
)

func hasUnitSuffix(line string) bool {
	return strings.Contains(line, ".service") || strings.Contains(line, ".socket") ||
		strings.Contains(line, ".timer") || strings.Contains(line, ".mount")
}

// healthyStatus reports a workload status that needs no attention.
func healthyStatus(s string) bool {
	s = strings.ToLower(s)
	for _, ok := range []string{"up ", "running", "completed", "ready", "active", "healthy", "succeeded"} {
		if strings.HasPrefix(s+" ", ok) {
			return !strings.Contains(s, "unhealthy") && !strings.Contains(s, "restarting")
		}
	}
	return false
}

// scanOutput reads the lines of a command's output.
func scanOutput(x *extraction, target, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	lines := strings.Split(text, "\n")
	unit := ""
	var ports []string
	var disks []string
	maxDisk, maxMount := -1, ""
	versions := 0
	type errLine struct {
		first string
		n     int
		at    int
	}
	errs := map[string]*errLine{}
	for i, line := range lines {
		// Each pattern runs only on lines that can match it: most lines
		// of most outputs match none.
		if unit == "" && hasUnitSuffix(line) {
			if m := reUnit.FindStringSubmatch(line); m != nil {
				unit = m[1]
			}
		}
		if strings.Contains(line, "Active:") {
			if m := reActive.FindStringSubmatch(line); m != nil {
				u := unit
				if u == "" {
					u = serviceOf(x.ci)
				}
				x.add(Service, "service "+target+" "+u, m[1])
				continue
			}
		}
		if versions < 3 {
			var m []string
			if strings.Contains(line, "ersion") || strings.Contains(line, "ERSION") {
				m = reVersion.FindStringSubmatch(line)
			}
			if m != nil {
				x.add(Version, "version "+target+" "+programOf(x.ci), m[1])
				versions++
			} else if strings.IndexByte(line, '/') >= 0 {
				for _, m := range reProgVer.FindAllStringSubmatch(line, 2) {
					if p := strings.ToUpper(m[1]); p == "HTTP" || p == "TLS" || p == "SSL" {
						continue
					}
					x.add(Version, "version "+target+" "+m[1], m[2])
					versions++
				}
			}
		}
		if strings.Contains(line, "LISTEN") {
			if m := reListen.FindStringSubmatch(line); m != nil {
				p := m[1]
				if u := reUsers.FindStringSubmatch(line); u != nil {
					p += " (" + u[1] + ")"
				}
				if !slices.Contains(ports, p) {
					ports = append(ports, p)
				}
			}
		}
		if strings.IndexByte(line, '%') >= 0 {
			if m := reDisk.FindStringSubmatch(line); m != nil {
				pct, _ := strconv.Atoi(m[1])
				if pct >= 85 {
					disks = append(disks, m[2]+" "+m[1]+"%")
				}
				if pct > maxDisk {
					maxDisk, maxMount = pct, m[2]
				}
			}
		}
		if strings.Contains(line, "load average:") {
			if m := reLoad.FindStringSubmatch(line); m != nil {
				x.add(Metric, "load "+target, m[1]+", "+m[2]+", "+m[3]+" (1, 5, 15 min)")
			}
		}
		if strings.HasPrefix(line, "Mem:") {
			if m := reMem.FindStringSubmatch(line); m != nil {
				x.add(Metric, "memory "+target, "total "+m[1]+", used "+m[2]+", free "+m[3])
			}
		}
		if jsontree.MentionsError(line) {
			body := strings.TrimSpace(line)
			body = rePrefixTS.ReplaceAllString(body, "")
			body = reSyslogID.ReplaceAllString(body, "")
			norm := reDigits.ReplaceAllString(strings.ToLower(body), "#")
			if e, ok := errs[norm]; ok {
				e.n++
			} else {
				errs[norm] = &errLine{first: clip(body, 140), n: 1, at: i}
			}
		}
	}
	if len(ports) > 0 {
		x.add(Port, "listening "+target, strings.Join(ports, ", "))
	}
	if len(disks) > 0 {
		x.add(Metric, "disk "+target, "over 85% used: "+strings.Join(disks, ", "))
	} else if maxDisk >= 0 {
		x.add(Metric, "disk "+target, fmt.Sprintf("fullest %s at %d%%", maxMount, maxDisk))
	}
	workloadTable(x, target, lines)
	if len(errs) > 0 {
		list := make([]*errLine, 0, len(errs))
		total := 0
		for _, e := range errs {
			list = append(list, e)
			total += e.n
		}
		sort.Slice(list, func(i, j int) bool {
			if list[i].n != list[j].n {
				return list[i].n > list[j].n
			}
			return list[i].at < list[j].at
		})
		if len(list) > maxErrorPatterns {
			list = list[:maxErrorPatterns]
		}
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = fmt.Sprintf("%d× %q", e.n, e.first)
		}
		v := strings.Join(parts, "; ")
		if len(errs) > len(list) {
			v = fmt.Sprintf("%d error lines, %d kinds; top: %s", total, len(errs), v)
		}
		x.add(Error, "errors "+target+" "+x.ci.What(), v)
	}
}

// workloadTable reads a table with a STATUS column (docker ps, kubectl get
// pods/deployments): the rows whose status needs attention, or a count.
func workloadTable(x *extraction, target string, lines []string) {
	head := -1
	for i, l := range lines {
		if strings.Contains(l, "STATUS") && (strings.Contains(l, "NAME") || strings.Contains(l, "CONTAINER")) && l == strings.ToUpper(l) {
			head = i
			break
		}
	}
	if head < 0 {
		return
	}
	cols := reColumns.FindAllStringIndex(lines[head], -1)
	name, status, restarts := -1, -1, -1
	for i, c := range cols {
		switch lines[head][c[0]:c[1]] {
		case "NAME", "NAMES":
			name = i
		case "STATUS":
			status = i
		case "RESTARTS":
			restarts = i
		}
	}
	if name < 0 || status < 0 {
		return
	}
	cell := func(row string, i int) string {
		start := cols[i][0]
		end := len(row)
		if i+1 < len(cols) {
			end = min(end, cols[i+1][0])
		}
		if start >= len(row) {
			return ""
		}
		return strings.TrimSpace(row[start:end])
	}
	rows, bad := 0, 0
	for _, row := range lines[head+1:] {
		if strings.TrimSpace(row) == "" {
			continue
		}
		rows++
		st := cell(row, status)
		if healthyStatus(st) {
			continue
		}
		bad++
		v := st
		if restarts >= 0 {
			if r := cell(row, restarts); r != "" && r != "0" {
				v += ", restarts " + r
			}
		}
		x.add(Service, "workload "+target+" "+cell(row, name), v)
	}
	x.add(Service, "workloads "+target+" "+x.ci.What(), fmt.Sprintf("%d listed, %d not healthy", rows, bad))
}

// serviceOf guesses the unit a command asked about (systemctl status X).
func serviceOf(ci Call) string {
	if ci.Service != "" {
		return ci.Service
	}
	f := strings.Fields(ci.Command)
	for i, w := range f {
		if (w == "status" || w == "is-active") && i+1 < len(f) && !strings.HasPrefix(f[i+1], "-") {
			return f[i+1]
		}
	}
	return "unit"
}

// programOf is the program a version line belongs to: the command's first
// word.
func programOf(ci Call) string {
	f := strings.Fields(ci.Command)
	for _, w := range f {
		if w == "sudo" || strings.Contains(w, "=") {
			continue
		}
		return w
	}
	return ci.Tool
}

// oneLine collapses whitespace and newlines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(s, 160)
}

// clip shortens s to at most n bytes, on a character boundary, marking the
// cut with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
