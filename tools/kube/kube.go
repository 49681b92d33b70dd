// Package kube is the `kube` tool: Kubernetes through client-go. Reads
// (get, list, describe, logs, events, rollout history, top) come back as
// summaries of the fields an on-call engineer looks at; secrets are never
// read and configmaps are shown by name only. Writes (rollout restart,
// scale, delete pod, cordon, uncordon, rollout undo) need approval in
// controlled channels, target an object the session has resolved, and
// show the exact change on their approval card.
//
// Deployments, statefulsets, daemonsets, pods and nodes are resources in
// vigil's sense (kinds k8s_deployment, k8s_statefulset, k8s_daemonset,
// k8s_pod, k8s_node): a cached, periodically refreshed Discovery lets
// people @mention them, and the tool's reads add what they find to the
// session's resolved context.
package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// Tool is the kube tool.
type Tool struct {
	clusters []*Cluster
	now      func() time.Time
	spec     tools.Spec
	// runsAs is the card line saying whose permissions an approved change
	// uses (policy.Identities.ApproverNote); "" without identity mapping.
	runsAs string
}

// Option adjusts the tool.
type Option func(*Tool)

// WithIdentities tells the tool the identity mapping its calls act under,
// so a change's approval card says whose permissions it will use. The
// identity of each call comes with the call (tools.Proposal.Actor).
func WithIdentities(ids *policy.Identities) Option {
	return func(t *Tool) { t.runsAs = ids.ApproverNote() }
}

var _ tools.ToolOf[Args] = (*Tool)(nil)

// New returns the tool over the configured clusters. Without any it is
// still offered, says so in its description, and answers every call with
// NOT_FOUND naming the setting to configure.
func New(clusters []*Cluster, now func() time.Time, opts ...Option) tools.Tool {
	if now == nil {
		now = time.Now
	}
	kinds := map[string]policy.Kind{}
	for _, a := range Action("").EnumValues() {
		kinds[a] = policy.KindRead
		if writes[Action(a)] {
			kinds[a] = policy.KindWrite
		}
	}
	desc := "Look at Kubernetes: objects summarised (status, replicas, conditions, restarts and last termination reasons), " +
		"pod logs, events, rollout history, resource usage. Change it with rollout_restart, scale, delete_pod, cordon, uncordon " +
		"and rollout_undo: each needs approval and must target an object already seen in this conversation (get, list or an @mention); " +
		"verify the result with a read afterwards."
	if len(clusters) == 0 {
		desc = "Not configured here: no Kubernetes cluster is set (kubernetes.clusters), so every call says so. " + desc
	} else {
		var cs []string
		for _, c := range clusters {
			s := c.Name
			if len(c.Namespaces) > 0 {
				s += " (namespaces " + strings.Join(c.Namespaces, ", ") + ")"
			}
			cs = append(cs, s)
		}
		desc += " Clusters: " + strings.Join(cs, "; ") + "."
	}
	t := &Tool{clusters: clusters, now: now, spec: tools.Spec{
		Name: "kube", Description: desc, Kinds: policy.ActionKinds{Actions: kinds},
	}}
	for _, o := range opts {
		o(t)
	}
	return tools.Typed[Args](t)
}

// Spec implements tools.Tool.
func (t *Tool) Spec() tools.Spec { return t.spec }

// cluster finds the named cluster, or the only one.
func (t *Tool) cluster(name string) (*Cluster, *policy.Block) {
	if len(t.clusters) == 0 {
		return nil, nil
	}
	names := make([]string, len(t.clusters))
	for i, c := range t.clusters {
		if c.Name == name || (name == "" && len(t.clusters) == 1) {
			return c, nil
		}
		names[i] = c.Name
	}
	if name == "" {
		return nil, tools.InvalidInput("cluster", fmt.Sprintf("field %q: required: there are several clusters (%s)", "cluster", strings.Join(names, ", ")))
	}
	return nil, tools.InvalidInput("cluster", fmt.Sprintf("field %q: no cluster named %q; the clusters are: %s", "cluster", name, strings.Join(names, ", ")))
}

// Plan implements tools.ToolOf.
func (t *Tool) Plan(a Args) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{Action: policy.Action{Tool: "kube", Name: string(a.Action)}}
	c, b := t.cluster(a.Cluster)
	if b != nil {
		return p, b
	}
	if c == nil {
		p.Summary = string(a.Action) + " (no cluster configured)"
		return p, nil
	}
	if a.Namespace != "" && !c.allows(a.Namespace) {
		return p, &policy.Block{
			Code:         policy.CodeActionNotAllowed,
			Message:      fmt.Sprintf("namespace %q is not allowed in cluster %s (allowed: %s)", a.Namespace, c.Name, strings.Join(c.Namespaces, ", ")),
			RecoveryHint: "use one of the allowed namespaces, or tell the user this namespace is outside vigil's reach",
			Details:      map[string]any{"field": "namespace", "allowed": c.Namespaces},
		}
	}
	ref := ObjectRef{Cluster: c.Name, Kind: a.kind(), Namespace: a.Namespace, Name: a.Name}
	p.Summary = summary(a, ref)
	if writes[a.Action] {
		// Strict resolution and routing apply to the object itself.
		p.Target = string(ref.ID())
		p.Details = changeDetails(a, ref)
		if t.runsAs != "" {
			p.Details = append(p.Details, policy.ChangeDetail{Label: "runs as", Value: t.runsAs})
		}
	}
	return p, nil
}

func summary(a Args, ref ObjectRef) string {
	what := ref.String()
	switch a.Action {
	case ActionList:
		ns := "every allowed namespace"
		if a.Namespace != "" {
			ns = "namespace " + a.Namespace
		}
		return fmt.Sprintf("list %ss in %s of cluster %s", ref.Kind, ns, ref.Cluster)
	case ActionEvents:
		if a.Name != "" {
			return "recent events of " + what
		}
		return "recent events in cluster " + ref.Cluster
	case ActionTop:
		return fmt.Sprintf("resource usage of %ss in cluster %s", ref.Kind, ref.Cluster)
	case ActionLogs:
		return "read logs of " + what
	case ActionRolloutRestart:
		return "restart every pod of " + what + " (rolling)"
	case ActionScale:
		return fmt.Sprintf("scale %s to %d replicas", what, *a.Replicas)
	case ActionDeletePod:
		return "delete pod " + ref.Namespace + "/" + ref.Name + " in cluster " + ref.Cluster
	case ActionCordon:
		return "cordon node " + ref.Name + " in cluster " + ref.Cluster
	case ActionUncordon:
		return "uncordon node " + ref.Name + " in cluster " + ref.Cluster
	case ActionRolloutUndo:
		if a.Revision > 0 {
			return fmt.Sprintf("roll %s back to revision %d", what, a.Revision)
		}
		return "roll " + what + " back to its previous revision"
	}
	return string(a.Action) + " " + what
}

// changeDetails are a write's card lines: where, what, and the change.
func changeDetails(a Args, ref ObjectRef) []policy.ChangeDetail {
	ds := []policy.ChangeDetail{{Label: "cluster", Value: ref.Cluster}}
	if ref.Namespace != "" {
		ds = append(ds, policy.ChangeDetail{Label: "namespace", Value: ref.Namespace})
	}
	ds = append(ds, policy.ChangeDetail{Label: "object", Value: string(ref.Kind) + "/" + ref.Name})
	var change string
	switch a.Action {
	case ActionRolloutRestart:
		change = "rolling restart of every pod (sets the pod template annotation kubectl.kubernetes.io/restartedAt)"
	case ActionScale:
		change = fmt.Sprintf("set replicas to %d", *a.Replicas)
	case ActionDeletePod:
		change = "delete the pod with its grace period; its controller, if any, starts a replacement"
	case ActionCordon:
		change = "mark the node unschedulable (running pods stay)"
	case ActionUncordon:
		change = "mark the node schedulable again"
	case ActionRolloutUndo:
		change = "roll the pod template back to the previous revision"
		if a.Revision > 0 {
			change = fmt.Sprintf("roll the pod template back to revision %d", a.Revision)
		}
	}
	return append(ds, policy.ChangeDetail{Label: "change", Value: change})
}

// Run implements tools.ToolOf.
func (t *Tool) Run(ctx context.Context, a Args, p tools.Proposal) tools.Result {
	if len(t.clusters) == 0 {
		return tools.Result{Envelope: tools.FailedWith(policy.CodeNotFound,
			"no Kubernetes cluster is configured here (kubernetes.clusters in vigil's configuration)",
			"tell the user Kubernetes is not configured and continue with other tools; do not retry", nil)}
	}
	c, b := t.cluster(a.Cluster)
	if b != nil {
		return tools.Result{Envelope: tools.Blocked(b)}
	}
	if a.Namespace != "" && !c.allows(a.Namespace) {
		return tools.BadProposal("kube", p, "namespace outside the allowlist")
	}
	ref := ObjectRef{Cluster: c.Name, Kind: a.kind(), Namespace: a.Namespace, Name: a.Name}
	if writes[a.Action] && p.Target != string(ref.ID()) {
		return tools.BadProposal("kube", p, "target differs from the object the arguments name")
	}
	// With an identity mapping the call acts as the person whose call it
	// is (the asker's read, the approver's change), never as vigil; a
	// person without a Kubernetes identity is refused before anything is
	// sent.
	on, who := c, "vigil's credentials"
	if p.Actor != nil {
		if err := p.Actor.KubeRefusal(); err != nil {
			return tools.Result{Envelope: tools.FailedWith(policy.CodeActionNotAllowed,
				"not run: "+err.Error(),
				"do not retry; tell the user vigil acts on Kubernetes with each person's own mapped identity and they have none (identities in vigil's configuration)", nil)}
		}
		var err error
		if on, err = c.actingAs(p.Actor.Kube); err != nil {
			return tools.Result{Envelope: tools.FailedWith(policy.CodeExecutionFailed, err.Error(), "tell the user; do not retry", nil)}
		}
		who = p.Actor.Kube.String() + " (for " + p.Actor.Chat + ")"
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	start := t.now()
	var res tools.Result
	var err error
	if writes[a.Action] {
		res, err = t.write(ctx, on, a, ref)
	} else {
		res, err = t.read(ctx, on, a, ref)
	}
	if err != nil {
		res = tools.Result{Envelope: failure(c, who, a, ref, err)}
	} else {
		res.Envelope = tools.CapData(res.Envelope, 0)
	}
	res.Envelope.Meta = map[string]any{"cluster": c.Name, "duration_ms": t.now().Sub(start).Milliseconds()}
	if p.Actor != nil {
		res.ActedAs = p.Actor.Kube.String()
		res.Envelope.Meta["acted_as"] = res.ActedAs
	}
	return res
}

// errRefused is a request the tool will not make, with a message for the
// model.
type errRefused struct{ msg, hint string }

func (e *errRefused) Error() string { return e.msg }

func refused(hint, format string, args ...any) error {
	return &errRefused{msg: fmt.Sprintf(format, args...), hint: hint}
}

// failure turns an API error into an envelope.
func failure(c *Cluster, who string, a Args, ref ObjectRef, err error) tools.Envelope {
	var r *errRefused
	var ne net.Error
	switch {
	case errors.As(err, &r):
		return tools.FailedWith(policy.CodeInvalidInput, r.msg, r.hint, nil)
	case errors.Is(err, errNoMetrics):
		return tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("cluster %s has no metrics-server answering, so top has nothing to show", c.Name),
			"use describe or events instead", nil)
	case apierrors.IsNotFound(err):
		if a.Action == ActionTop {
			return tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("cluster %s has no metrics-server (metrics.k8s.io is not served)", c.Name),
				"use describe or events instead", nil)
		}
		return tools.FailedWith(policy.CodeNotFound, fmt.Sprintf("%s does not exist", ref), "list the kind in that namespace to find the right name", nil)
	case apierrors.IsForbidden(err):
		return tools.FailedWith(policy.CodeActionNotAllowed, fmt.Sprintf("cluster %s refused %s for this: %s", c.Name, who, apiMessage(err)),
			"tell the user the identity vigil used lacks this permission", nil)
	case apierrors.IsUnauthorized(err):
		return tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("cluster %s did not accept vigil's credentials (acting as %s)", c.Name, who),
			"tell the user vigil's kubeconfig credentials are not accepted", nil)
	case apierrors.IsConflict(err):
		e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("%s changed while vigil changed it: %s", ref, apiMessage(err)), "read it again, then decide", nil)
		e.Error.Retryable = true
		return e
	case apierrors.IsServiceUnavailable(err) && a.Action == ActionTop:
		return tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("cluster %s's metrics-server did not answer: %s", c.Name, apiMessage(err)),
			"use describe or events instead", nil)
	case apierrors.IsBadRequest(err) || apierrors.IsInvalid(err):
		return tools.FailedWith(policy.CodeInvalidInput, fmt.Sprintf("cluster %s refused the request: %s", c.Name, apiMessage(err)), "correct the arguments", nil)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err):
		e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("cluster %s did not answer within %s", c.Name, c.timeout()), "try again, or narrow the request", nil)
		e.Error.Retryable = !writes[a.Action]
		return e
	case errors.Is(err, context.Canceled):
		return tools.Failed(policy.CodeExecutionFailed, "the run was cancelled before the cluster answered", false)
	}
	e := tools.FailedWith(policy.CodeExecutionFailed, fmt.Sprintf("cluster %s could not be read: %s", c.Name, apiMessage(err)),
		"the API server may be unreachable; try again later or tell the user", nil)
	e.Error.Retryable = !writes[a.Action]
	return e
}

// apiMessage is an API error's message, bounded.
func apiMessage(err error) string {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		return clip(se.Status().Message, maxMessage)
	}
	return clip(err.Error(), maxMessage)
}

// listResult is a capped list of summaries.
type listResult struct {
	Kind      string `json:"kind"`
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace,omitempty"`
	Total     int    `json:"total"`
	Shown     int    `json:"shown"`
	Omitted   int    `json:"omitted"`
	OrderedBy string `json:"ordered_by"`
	Note      string `json:"note,omitempty"`
	Items     any    `json:"items"`
}

// capList keeps the first maxShown items.
func capList[T any](items []T, lr listResult) listResult {
	lr.Total = len(items)
	if len(items) > maxShown {
		lr.Omitted = len(items) - maxShown
		lr.Note = fmt.Sprintf("%d more not shown; give a namespace to narrow the list", lr.Omitted)
		items = items[:maxShown]
	}
	if items == nil {
		items = []T{}
	}
	lr.Shown, lr.Items = len(items), items
	return lr
}

// problemFirst orders pods with problems (not ready, restarting) first.
func problemFirst(a, b PodInfo) int {
	score := func(p PodInfo) int {
		s := int(p.Restarts)
		if p.Phase != "Running" && p.Phase != "Succeeded" {
			s += 1000
		}
		r, n, _ := strings.Cut(p.Ready, "/")
		if r != n {
			s += 500
		}
		return s
	}
	if d := score(b) - score(a); d != 0 {
		return d
	}
	return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
}
