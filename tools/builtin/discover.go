package builtin

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// DiscoverArgs are the discover tool's arguments (SPEC T2).
type DiscoverArgs struct {
	Resource string `json:"resource" jsonschema:"the resource to describe: its name, alias or ID"`
}

func (a *DiscoverArgs) Validate() error { return checkTarget("resource", a.Resource) }

// Probe commands discover runs on a resource reached by the local
// transport. Both are read-only and cheap; either may be missing.
const (
	probePorts    = "ss -ltnH"
	probeServices = "systemctl list-units --type=service --state=running --no-legend --plain"
	probeTimeout  = 10 * time.Second
)

// DiscoverTool is the `discover` tool: what runs on a resource, where its
// configuration and logs are, what is mounted into it. Facts come from the
// inventory file, merged for a locally reachable resource with a cheap live
// probe (listening TCP ports, running systemd services).
type DiscoverTool struct {
	inv  *inventory.Inventory
	x    transport.Executor
	spec tools.Spec
}

var _ tools.ToolOf[DiscoverArgs] = (*DiscoverTool)(nil)

// NewDiscoverTool returns the discover tool over inv; x runs the probes.
func NewDiscoverTool(inv *inventory.Inventory, x transport.Executor) tools.Tool {
	return tools.Typed[DiscoverArgs](&DiscoverTool{inv: inv, x: x, spec: discoverToolSpec()})
}

func (t *DiscoverTool) Spec() tools.Spec { return t.spec }

// discoverToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func discoverToolSpec() tools.Spec {
	return tools.Spec{
		Name: "discover",
		Description: "Describe one resource: listening ports, running services, configuration and log paths, bind " +
			"mounts (where a container's files really live on its host), its children and how it is reached.",
		Kinds: policy.ActionKinds{Every: policy.KindResolve},
	}
}

func (t *DiscoverTool) Plan(a DiscoverArgs) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{
		Action:  policy.Action{Tool: "discover", Target: a.Resource},
		Summary: "discover " + a.Resource,
	}
	if r, ok := t.inv.Lookup(a.Resource); ok && r.Reach.Local {
		p.Command = probePorts + "; " + probeServices
	}
	return p, nil
}

// DiscoverData is the envelope data of discover.
type DiscoverData struct {
	Resource     ResourceView          `json:"resource"`
	RoutingChain []ResourceView        `json:"routing_chain"`
	Children     []string              `json:"children,omitempty"`
	Ports        []string              `json:"ports"`
	Listeners    []string              `json:"listeners,omitempty"`
	Services     []string              `json:"services"`
	ConfigPaths  []string              `json:"config_paths"`
	LogPaths     []string              `json:"log_paths"`
	BindMounts   []inventory.BindMount `json:"bind_mounts"`
	// Sources says where the facts came from: "inventory", "probe:ss",
	// "probe:systemctl".
	Sources     []string `json:"sources"`
	ProbeErrors []string `json:"probe_errors,omitempty"`
}

func (t *DiscoverTool) Run(ctx context.Context, a DiscoverArgs, p tools.Proposal) tools.Result {
	r, ok := t.inv.Lookup(a.Resource)
	if !ok {
		return tools.Result{Envelope: notFound(t.inv, "resource", a.Resource)}
	}
	f := r.Facts
	d := DiscoverData{
		Resource:     viewOf(t.inv, r, true),
		RoutingChain: chainViews(t.inv, r.ID),
		Children:     names(t.inv.Children(r.ID)),
		Ports:        nonNil(f.Ports),
		Services:     nonNil(f.Services),
		ConfigPaths:  nonNil(f.ConfigPaths),
		LogPaths:     nonNil(f.LogPaths),
		BindMounts:   f.BindMounts,
		Sources:      []string{"inventory"},
	}
	if d.BindMounts == nil {
		d.BindMounts = []inventory.BindMount{}
	}
	if r.Reach.Local {
		t.probe(ctx, p.Execution, r, &d)
	}
	d.Ports = sortPorts(d.Ports)
	d.Services = sortedCopy(d.Services)
	return tools.Result{Envelope: tools.OK(d), Resolved: []policy.Resource{r.ToPolicy()}, Explicit: true}
}

// probe adds what the resource itself reports. A missing tool (no ss, no
// systemd) is noted, not an error.
func (t *DiscoverTool) probe(ctx context.Context, e policy.Execution, r inventory.Resource, d *DiscoverData) {
	run := func(cmd string) (string, bool) {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		out, err := t.x.Run(pctx, r, transport.RunSpec{Command: cmd, Execution: e}, nil)
		name, _, _ := strings.Cut(cmd, " ")
		switch {
		case err != nil:
			d.ProbeErrors = append(d.ProbeErrors, name+": "+err.Error())
			return "", false
		case out.ExitCode != 0:
			msg := fmt.Sprintf("%s: exit status %d", name, out.ExitCode)
			if s := strings.TrimSpace(transport.Tail(out.Stderr, 200)); s != "" {
				msg += ": " + s
			}
			d.ProbeErrors = append(d.ProbeErrors, msg)
			return "", false
		}
		d.Sources = append(d.Sources, "probe:"+name)
		return out.Stdout, true
	}
	if out, ok := run(probePorts); ok {
		ports, listeners := parseSS(out)
		d.Ports = append(d.Ports, ports...)
		d.Listeners = listeners
	}
	if out, ok := run(probeServices); ok {
		d.Services = append(d.Services, parseUnits(out)...)
	}
}

// parseSS reads `ss -ltnH` output: the fourth field is the local address
// and port ("127.0.0.1:3306", "[::]:22", "*:80", "127.0.0.53%lo:53").
func parseSS(out string) (ports, listeners []string) {
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		i := strings.LastIndexByte(f[3], ':')
		if i < 0 {
			continue
		}
		port := f[3][i+1:]
		if _, err := strconv.Atoi(port); err != nil {
			continue
		}
		ports = append(ports, port+"/tcp")
		listeners = append(listeners, f[3])
	}
	return ports, listeners
}

// parseUnits reads `systemctl list-units --plain --no-legend`: the unit
// name is the first field.
func parseUnits(out string) []string {
	var units []string
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 && strings.HasSuffix(f[0], ".service") {
			units = append(units, f[0])
		}
	}
	return units
}

// sortPorts orders "80/tcp"-style ports numerically and drops duplicates.
func sortPorts(ps []string) []string {
	out := sortedCopy(ps)
	num := func(p string) int {
		n, _ := strconv.Atoi(strings.SplitN(p, "/", 2)[0])
		return n
	}
	slices.SortStableFunc(out, func(a, b string) int { return num(a) - num(b) })
	return out
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return append([]string(nil), ss...)
}
