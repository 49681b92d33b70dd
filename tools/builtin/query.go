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

// QueryAction is the query tool's action.
type QueryAction string

const (
	QuerySearch   QueryAction = "search"
	QueryGet      QueryAction = "get"
	QueryList     QueryAction = "list"
	QueryTopology QueryAction = "topology"
	QueryHealth   QueryAction = "health"
)

func (QueryAction) EnumValues() []string {
	return []string{"search", "get", "list", "topology", "health"}
}

// healthTimeout bounds a reachability check.
const healthTimeout = 15 * time.Second

// QueryArgs are the query tool's arguments (SPEC T2).
type QueryArgs struct {
	Action   QueryAction `json:"action" jsonschema:"search: resources whose name, alias, ID or kind contains query. get: one resource with its routing chain. list: every resource, or those of the kind in query. topology: the parent/child tree, of one resource when resource is given. health: whether resource is reachable, and how fast."`
	Query    string      `json:"query,omitempty" jsonschema:"search: the text to look for. list: a kind to filter by (node, host, vm, lxc, docker_container, k8s_pod, service)."`
	Resource string      `json:"resource,omitempty" jsonschema:"get, health and topology: a resource's name, alias or ID"`
}

func (a *QueryArgs) Validate() error {
	if err := tools.CheckText("query", a.Query, true); err != nil {
		return err
	}
	if err := checkTarget("resource", a.Resource); err != nil {
		return err
	}
	act := string(a.Action)
	switch a.Action {
	case QuerySearch:
		if a.Query == "" {
			return tools.FieldErrorf("query", "required for action search")
		}
		return tools.NotUsed("resource", act, a.Resource != "")
	case QueryGet, QueryHealth:
		if a.Resource == "" {
			return tools.FieldErrorf("resource", "required for action %s (a name, alias or ID; use search to find one)", act)
		}
		return tools.NotUsed("query", act, a.Query != "")
	case QueryList:
		if a.Query != "" && !inventory.ResourceKind(a.Query).Valid() {
			return tools.FieldErrorf("query", "for list, a kind: one of %s; got %q", inventory.KindList(), a.Query)
		}
		return tools.NotUsed("resource", act, a.Resource != "")
	case QueryTopology:
		return tools.NotUsed("query", act, a.Query != "")
	}
	return nil
}

// QueryTool is the `query` tool: it answers from the inventory (and, for
// health, by running `true` on the resource). Every call is a resolve.
type QueryTool struct {
	inv  *inventory.Inventory
	x    transport.Executor
	spec tools.Spec
}

var _ tools.ToolOf[QueryArgs] = (*QueryTool)(nil)

// NewQueryTool returns the query tool over inv; x runs health checks.
func NewQueryTool(inv *inventory.Inventory, x transport.Executor) tools.Tool {
	return tools.Typed[QueryArgs](&QueryTool{inv: inv, x: x, spec: queryToolSpec()})
}

func (t *QueryTool) Spec() tools.Spec { return t.spec }

// queryToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func queryToolSpec() tools.Spec {
	return tools.Spec{
		Name: "query",
		Description: "Find infrastructure resources in the inventory: search by name, get one resource with how it is " +
			"reached, list resources, show the topology, or check that a resource is reachable. Use it first to learn " +
			"the exact name of anything you will read from or change.",
		Kinds: policy.ActionKinds{Every: policy.KindResolve},
	}
}

func (t *QueryTool) Plan(a QueryArgs) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{
		Action: policy.Action{Tool: "query", Name: string(a.Action), Target: a.Resource},
	}
	switch a.Action {
	case QuerySearch:
		p.Summary = fmt.Sprintf("search the inventory for %q", a.Query)
	case QueryGet:
		p.Summary = "look up " + a.Resource
	case QueryList:
		p.Summary = "list resources"
		if a.Query != "" {
			p.Summary = "list resources of kind " + a.Query
		}
	case QueryTopology:
		p.Summary = "show the topology"
		if a.Resource != "" {
			p.Summary = "show the topology around " + a.Resource
		}
	case QueryHealth:
		p.Summary = "check that " + a.Resource + " is reachable"
		p.Command = healthCommand
	}
	return p, nil
}

// healthCommand is what a health check runs: it proves a shell starts on the
// resource and nothing more.
const healthCommand = "true"

// ResourceView is a resource as the model sees it.
type ResourceView struct {
	ID      policy.ResourceID      `json:"id"`
	Name    string                 `json:"name"`
	Kind    inventory.ResourceKind `json:"kind"`
	Aliases []string               `json:"aliases,omitempty"`
	Parent  policy.ResourceID      `json:"parent,omitempty"`
	Node    string                 `json:"node,omitempty"`
	// Target is what to pass as target to read, control and file_edit.
	Target string `json:"target"`
	// Reach says how commands get there: "local", "ssh root@10.0.0.2:22",
	// or "via media-server (pct exec 141)".
	Reach string `json:"reach"`
	// Routing is the chain from the resource to its top-level host.
	Routing string `json:"routing,omitempty"`
}

// viewOf is r as the model sees it, with its routing chain if asked.
func viewOf(inv *inventory.Inventory, r inventory.Resource, withRouting bool) ResourceView {
	v := ResourceView{ID: r.ID, Name: r.Name, Kind: r.Kind, Aliases: r.Aliases, Parent: r.Parent, Node: r.Node, Target: r.Name, Reach: reachText(inv, r)}
	if withRouting {
		v.Routing = routingText(inv.RoutingChain(r.ID))
	}
	return v
}

// reachText describes how a resource is reached.
func reachText(inv *inventory.Inventory, r inventory.Resource) string {
	switch {
	case r.Reach.Local:
		return "local"
	case r.Reach.SSH != nil:
		s := r.Reach.SSH
		port := s.Port
		if port == 0 {
			port = 22
		}
		user := s.User
		if user != "" {
			user += "@"
		}
		return fmt.Sprintf("ssh %s%s:%d", user, s.Host, port)
	}
	via := map[inventory.ResourceKind]string{
		inventory.KindLXC:             "pct exec " + r.UID,
		inventory.KindVM:              "qm guest exec " + r.UID,
		inventory.KindDockerContainer: "docker exec " + r.UID,
		inventory.KindK8sPod:          "kubectl exec " + r.UID + " -n " + r.Namespace,
		inventory.KindService:         "runs on its host",
	}[r.Kind]
	parent := string(r.Parent)
	if p, ok := inv.Get(r.Parent); ok {
		parent = p.Name
	}
	return fmt.Sprintf("via parent %s (%s)", parent, via)
}

// routingText renders a routing chain: "jellyfin (docker_container:...) ->
// media-server (lxc:delly:141) -> delly (node:delly)".
func routingText(chain []inventory.Resource) string {
	parts := make([]string, len(chain))
	for i, r := range chain {
		parts[i] = fmt.Sprintf("%s (%s)", r.Name, r.ID)
	}
	return strings.Join(parts, " -> ")
}

func (t *QueryTool) Run(ctx context.Context, a QueryArgs, p tools.Proposal) tools.Result {
	switch a.Action {
	case QuerySearch:
		hits := t.inv.Search(a.Query)
		if len(hits) == 0 {
			return tools.Result{Envelope: notFound(t.inv, "query", a.Query)}
		}
		return t.many(hits, map[string]any{"query": a.Query})
	case QueryList:
		var rs []inventory.Resource
		for _, r := range t.inv.All() {
			if a.Query == "" || string(r.Kind) == a.Query {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			return tools.Result{Envelope: tools.FailedWith(policy.CodeNotFound, fmt.Sprintf("the inventory has no resource of kind %s", a.Query),
				"list without a kind to see everything", map[string]any{"kind": a.Query})}
		}
		return t.many(rs, map[string]any{"kind": a.Query})
	case QueryGet:
		r, ok := t.inv.Lookup(a.Resource)
		if !ok {
			return tools.Result{Envelope: notFound(t.inv, "resource", a.Resource)}
		}
		data := map[string]any{
			"resource":      viewOf(t.inv, r, true),
			"routing_chain": chainViews(t.inv, r.ID),
			"children":      names(t.inv.Children(r.ID)),
			"facts":         r.Facts,
		}
		return tools.Result{Envelope: tools.OK(data), Resolved: []policy.Resource{r.ToPolicy()}, Explicit: true}
	case QueryTopology:
		return t.topology(a.Resource)
	case QueryHealth:
		return t.health(ctx, p.Execution, p.Actor, a.Resource)
	}
	return tools.BadProposal("query", p, "unknown action "+string(a.Action))
}

func (t *QueryTool) many(rs []inventory.Resource, extra map[string]any) tools.Result {
	views := make([]ResourceView, len(rs))
	resolved := make([]policy.Resource, len(rs))
	for i, r := range rs {
		views[i] = viewOf(t.inv, r, false)
		resolved[i] = r.ToPolicy()
	}
	data := map[string]any{"resources": views, "count": len(views)}
	for k, v := range extra {
		if v != "" {
			data[k] = v
		}
	}
	return tools.Result{Envelope: tools.OK(data), Resolved: resolved}
}

// chainViews is the routing chain of id as the model sees it.
func chainViews(inv *inventory.Inventory, id policy.ResourceID) []ResourceView {
	chain := inv.RoutingChain(id)
	out := make([]ResourceView, len(chain))
	for i, r := range chain {
		out[i] = viewOf(inv, r, false)
	}
	return out
}

func names(rs []inventory.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// notFound is NOT_FOUND with "did you mean" suggestions.
func notFound(inv *inventory.Inventory, field, q string) tools.Envelope {
	msg := fmt.Sprintf("nothing in the inventory matches %q", q)
	details := map[string]any{field: q}
	if s := inv.Suggest(q); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, ", ") + "?"
		details["suggestions"] = s
	}
	return tools.FailedWith(policy.CodeNotFound, msg, "search with a shorter part of the name, or list everything with action=list", details)
}

// TopologyNode is one resource in a topology tree.
type TopologyNode struct {
	ID       policy.ResourceID      `json:"id"`
	Name     string                 `json:"name"`
	Kind     inventory.ResourceKind `json:"kind"`
	Reach    string                 `json:"reach"`
	Children []TopologyNode         `json:"children,omitempty"`
}

func (t *QueryTool) topology(resource string) tools.Result {
	var roots []inventory.Resource
	data := map[string]any{}
	if resource != "" {
		r, ok := t.inv.Lookup(resource)
		if !ok {
			return tools.Result{Envelope: notFound(t.inv, "resource", resource)}
		}
		roots = []inventory.Resource{r}
		data["routing"] = routingText(t.inv.RoutingChain(r.ID))
	} else {
		for _, r := range t.inv.All() {
			if r.Parent == "" {
				roots = append(roots, r)
			}
		}
	}
	var resolved []policy.Resource
	seen := map[policy.ResourceID]bool{}
	var build func(r inventory.Resource, depth int) TopologyNode
	build = func(r inventory.Resource, depth int) TopologyNode {
		seen[r.ID] = true
		resolved = append(resolved, r.ToPolicy())
		n := TopologyNode{ID: r.ID, Name: r.Name, Kind: r.Kind, Reach: reachText(t.inv, r)}
		if depth < 16 {
			for _, c := range t.inv.Children(r.ID) {
				n.Children = append(n.Children, build(c, depth+1))
			}
		}
		return n
	}
	tree := make([]TopologyNode, 0, len(roots))
	for _, r := range roots {
		tree = append(tree, build(r, 0))
	}
	if resource != "" {
		// The ancestors are part of the answer too.
		for _, r := range t.inv.RoutingChain(roots[0].ID) {
			if !seen[r.ID] {
				resolved = append(resolved, r.ToPolicy())
			}
		}
	}
	data["tree"] = tree
	return tools.Result{Envelope: tools.OK(data), Resolved: resolved}
}

// HealthData is the envelope data of a health check.
type HealthData struct {
	Resource  string `json:"resource"`
	Status    string `json:"status"` // "ok" or "failed"
	LatencyMS int64  `json:"latency_ms"`
	Route     string `json:"route"`
	Error     string `json:"error,omitempty"`
}

func (t *QueryTool) health(ctx context.Context, e policy.Execution, actor *policy.Actor, resource string) tools.Result {
	r, ok := t.inv.Lookup(resource)
	if !ok {
		return tools.Result{Envelope: notFound(t.inv, "resource", resource)}
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	start := time.Now()
	out, err := t.x.Run(ctx, r, transport.RunSpec{Command: healthCommand, Execution: e, Actor: actor}, nil)
	d := HealthData{Resource: r.Name, Status: "ok", LatencyMS: time.Since(start).Milliseconds(), Route: routingText(t.inv.RoutingChain(r.ID))}
	switch {
	case err != nil:
		d.Status, d.Error = "failed", err.Error()
	case out.ExitCode != 0:
		d.Status = "failed"
		d.Error = "exit status " + strconv.Itoa(out.ExitCode)
		if s := strings.TrimSpace(transport.Tail(out.Stderr, stderrTailBytes)); s != "" {
			d.Error += ": " + s
		}
	}
	return tools.Result{Envelope: tools.OK(d), Resolved: []policy.Resource{r.ToPolicy()}}
}

// sortedCopy returns a sorted copy of ss without duplicates.
func sortedCopy(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}
