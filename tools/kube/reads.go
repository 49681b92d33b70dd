package kube

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// pageSize is how many objects one list request asks for; the tool follows
// continue tokens up to maxListed objects.
const (
	pageSize  = 500
	maxListed = 20000
)

// listAll pages through a list call: list(opts) returns the page's items
// and its continue token.
func listAll[T any](ctx context.Context, list func(metav1.ListOptions) ([]T, string, error)) ([]T, bool, error) {
	var out []T
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		items, cont, err := list(opts)
		if err != nil {
			return nil, false, err
		}
		out = append(out, items...)
		if cont == "" {
			return out, false, nil
		}
		if len(out) >= maxListed {
			return out, true, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		opts.Continue = cont
	}
}

// read answers the read actions.
func (t *Tool) read(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	switch a.Action {
	case ActionGet, ActionDescribe:
		return t.get(ctx, c, a, ref)
	case ActionList:
		return t.list(ctx, c, a, ref)
	case ActionLogs:
		return t.logs(ctx, c, a, ref)
	case ActionEvents:
		return t.events(ctx, c, a, ref)
	case ActionRolloutHistory:
		return t.history(ctx, c, ref)
	case ActionTop:
		return t.top(ctx, c, a, ref)
	}
	return tools.Result{}, fmt.Errorf("kube: unknown read %q", a.Action)
}

// get summarises one object; describe adds its recent events and, for a
// workload, its pods. A resource kind is resolved explicitly.
func (t *Tool) get(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	var summary any
	var node string
	var selector *metav1.LabelSelector
	var uid types.UID
	switch ref.Kind {
	case KindPod:
		p, err := c.Client.CoreV1().Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		s := summarizePod(p)
		summary, node, uid = s, p.Spec.NodeName, p.UID
	case KindDeployment:
		d, err := c.Client.AppsV1().Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		summary, selector, uid = summarizeDeployment(d), d.Spec.Selector, d.UID
	case KindStatefulSet:
		s, err := c.Client.AppsV1().StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		summary, selector, uid = summarizeStatefulSet(s), s.Spec.Selector, s.UID
	case KindDaemonSet:
		d, err := c.Client.AppsV1().DaemonSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		summary, selector, uid = summarizeDaemonSet(d), d.Spec.Selector, d.UID
	case KindService:
		s, err := c.Client.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		summary, uid = summarizeService(s), s.UID
	case KindNode:
		n, err := c.Client.CoreV1().Nodes().Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		summary, uid = summarizeNode(n), n.UID
	case KindConfigMap:
		cm, err := c.Client.CoreV1().ConfigMaps(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		summary = summarizeConfigMap(cm)
	}
	res := tools.Result{Explicit: true}
	if id := ref.ID(); id != "" {
		res.Resolved = []policy.Resource{ref.resource(node)}
	}
	if a.Action == ActionGet {
		res.Envelope = tools.OK(map[string]any{"cluster": c.Name, "object": summary})
		return res, nil
	}
	out := map[string]any{"cluster": c.Name, "object": summary}
	evs, err := objectEvents(ctx, c, ref, uid, time.Time{})
	if err != nil {
		return tools.Result{}, err
	}
	out["events"] = firstN(evs, 20)
	if selector != nil {
		pods, err := podsOf(ctx, c, ref.Namespace, selector)
		if err != nil {
			return tools.Result{}, err
		}
		slices.SortFunc(pods, problemFirst)
		out["pods"] = capList(pods, listResult{Kind: "pod", Cluster: c.Name, Namespace: ref.Namespace, OrderedBy: "problems first (not running, not ready, restarts)"})
	}
	res.Envelope = tools.OK(out)
	return res, nil
}

func firstN[T any](xs []T, n int) []T {
	if xs == nil {
		return []T{}
	}
	return xs[:min(n, len(xs))]
}

// podsOf lists the pods a workload selects.
func podsOf(ctx context.Context, c *Cluster, ns string, sel *metav1.LabelSelector) ([]PodInfo, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, refused("", "the object's selector cannot be read: %v", err)
	}
	items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Pod, string, error) {
		o.LabelSelector = s.String()
		l, err := c.Client.CoreV1().Pods(ns).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]PodInfo, len(items))
	for i := range items {
		out[i] = summarizePod(&items[i])
	}
	return out, nil
}

// objectEvents lists the events about one object, warnings first, newest
// first, newer than since.
func objectEvents(ctx context.Context, c *Cluster, ref ObjectRef, uid types.UID, since time.Time) ([]EventInfo, error) {
	sel := fields.Set{"involvedObject.name": ref.Name}
	if ref.Namespace != "" {
		sel["involvedObject.namespace"] = ref.Namespace
	}
	if uid != "" {
		sel["involvedObject.uid"] = string(uid)
	}
	ns := ref.Namespace
	items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Event, string, error) {
		o.FieldSelector = fields.SelectorFromSet(sel).String()
		l, err := c.Client.CoreV1().Events(ns).List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, err
	}
	var out []EventInfo
	for i := range items {
		e := &items[i]
		// The fake client ignores field selectors; the server applies
		// them. Filter again so both agree.
		if e.InvolvedObject.Name != ref.Name || !strings.EqualFold(e.InvolvedObject.Kind, string(ref.Kind)) {
			continue
		}
		if eventTime(e).Before(since) {
			continue
		}
		out = append(out, summarizeEvent(e))
	}
	sortEvents(out)
	return out, nil
}

// list summarises every object of a kind in the allowed namespaces.
func (t *Tool) list(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	lr := listResult{Kind: string(ref.Kind), Cluster: c.Name, Namespace: a.Namespace, OrderedBy: "namespace and name"}
	var res tools.Result
	collect := func(nsFn func(ns string) error) error {
		for _, ns := range c.scope(a.Namespace) {
			if err := nsFn(ns); err != nil {
				return err
			}
		}
		return nil
	}
	var err error
	switch ref.Kind {
	case KindPod:
		var pods []PodInfo
		err = collect(func(ns string) error {
			items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Pod, string, error) {
				l, err := c.Client.CoreV1().Pods(ns).List(ctx, o)
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.Continue, nil
			})
			for i := range items {
				pods = append(pods, summarizePod(&items[i]))
				res.Resolved = append(res.Resolved, ObjectRef{Cluster: c.Name, Kind: KindPod, Namespace: items[i].Namespace, Name: items[i].Name}.resource(items[i].Spec.NodeName))
			}
			return err
		})
		slices.SortFunc(pods, problemFirst)
		lr.OrderedBy = "problems first (not running, not ready, restarts), then namespace and name"
		lr = capList(pods, lr)
	case KindDeployment, KindStatefulSet, KindDaemonSet:
		var ws []WorkloadInfo
		err = collect(func(ns string) error {
			got, err := listWorkloads(ctx, c, ref.Kind, ns)
			ws = append(ws, got...)
			return err
		})
		slices.SortFunc(ws, func(x, y WorkloadInfo) int {
			// Workloads short of ready replicas first.
			if d := (y.Desired - y.Ready) - (x.Desired - x.Ready); d != 0 {
				return int(d)
			}
			return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
		})
		for _, w := range ws {
			res.Resolved = append(res.Resolved, ObjectRef{Cluster: c.Name, Kind: ref.Kind, Namespace: w.Namespace, Name: w.Name}.resource(""))
		}
		lr.OrderedBy = "fewest ready replicas (against desired) first, then namespace and name"
		lr = capList(ws, lr)
	case KindService:
		var ss []ServiceInfo
		err = collect(func(ns string) error {
			items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Service, string, error) {
				l, err := c.Client.CoreV1().Services(ns).List(ctx, o)
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.Continue, nil
			})
			for i := range items {
				ss = append(ss, summarizeService(&items[i]))
			}
			return err
		})
		lr = capList(ss, lr)
	case KindConfigMap:
		var cms []ConfigMapInfo
		err = collect(func(ns string) error {
			items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.ConfigMap, string, error) {
				l, err := c.Client.CoreV1().ConfigMaps(ns).List(ctx, o)
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.Continue, nil
			})
			for i := range items {
				cms = append(cms, summarizeConfigMap(&items[i]))
			}
			return err
		})
		lr = capList(cms, lr)
	case KindNode:
		var ns []NodeInfo
		items, _, lerr := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Node, string, error) {
			l, err := c.Client.CoreV1().Nodes().List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		for i := range items {
			ns = append(ns, summarizeNode(&items[i]))
			res.Resolved = append(res.Resolved, ObjectRef{Cluster: c.Name, Kind: KindNode, Name: items[i].Name}.resource(""))
		}
		slices.SortFunc(ns, func(x, y NodeInfo) int {
			if d := len(y.Problems) - len(x.Problems); d != 0 {
				return d
			}
			return strings.Compare(x.Name, y.Name)
		})
		lr.OrderedBy = "nodes with problems first, then name"
		lr, err = capList(ns, lr), lerr
	case KindEvent:
		return t.events(ctx, c, a, ref)
	}
	if err != nil {
		return tools.Result{}, err
	}
	res.Envelope = tools.OK(lr)
	return res, nil
}

func listWorkloads(ctx context.Context, c *Cluster, k Kind, ns string) ([]WorkloadInfo, error) {
	var out []WorkloadInfo
	switch k {
	case KindDeployment:
		items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]appsv1.Deployment, string, error) {
			l, err := c.Client.AppsV1().Deployments(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		for i := range items {
			out = append(out, summarizeDeployment(&items[i]))
		}
		return out, err
	case KindStatefulSet:
		items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]appsv1.StatefulSet, string, error) {
			l, err := c.Client.AppsV1().StatefulSets(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		for i := range items {
			out = append(out, summarizeStatefulSet(&items[i]))
		}
		return out, err
	default:
		items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]appsv1.DaemonSet, string, error) {
			l, err := c.Client.AppsV1().DaemonSets(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		for i := range items {
			out = append(out, summarizeDaemonSet(&items[i]))
		}
		return out, err
	}
}

// events lists recent events in the allowed namespaces, or those of one
// object.
func (t *Tool) events(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	var since time.Time
	if a.Since != "" {
		d, _ := parseSince(a.Since)
		since = t.now().Add(-d)
	}
	var evs []EventInfo
	if a.Name != "" {
		var err error
		if evs, err = objectEvents(ctx, c, ref, "", since); err != nil {
			return tools.Result{}, err
		}
	} else {
		for _, ns := range c.scope(a.Namespace) {
			items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Event, string, error) {
				l, err := c.Client.CoreV1().Events(ns).List(ctx, o)
				if err != nil {
					return nil, "", err
				}
				return l.Items, l.Continue, nil
			})
			if err != nil {
				return tools.Result{}, err
			}
			for i := range items {
				if !eventTime(&items[i]).Before(since) {
					evs = append(evs, summarizeEvent(&items[i]))
				}
			}
		}
		sortEvents(evs)
	}
	lr := capList(evs, listResult{Kind: "event", Cluster: c.Name, Namespace: a.Namespace, OrderedBy: "warnings first, then newest first"})
	return tools.Result{Envelope: tools.OK(lr)}, nil
}

// logs reads the end of a pod's log. For a workload it reads the pod with
// the most restarts, which is usually the one that explains them.
func (t *Tool) logs(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	pod := ref.Name
	chosen := ""
	if ref.Kind != KindPod {
		var sel *metav1.LabelSelector
		switch ref.Kind {
		case KindDeployment:
			d, err := c.Client.AppsV1().Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return tools.Result{}, err
			}
			sel = d.Spec.Selector
		case KindStatefulSet:
			s, err := c.Client.AppsV1().StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return tools.Result{}, err
			}
			sel = s.Spec.Selector
		case KindDaemonSet:
			d, err := c.Client.AppsV1().DaemonSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return tools.Result{}, err
			}
			sel = d.Spec.Selector
		}
		pods, err := podsOf(ctx, c, ref.Namespace, sel)
		if err != nil {
			return tools.Result{}, err
		}
		if len(pods) == 0 {
			return tools.Result{}, refused("describe it to see why it has no pods", "%s has no pods", ref)
		}
		slices.SortFunc(pods, problemFirst)
		pod = pods[0].Name
		chosen = fmt.Sprintf("chose pod %s of %d (problems first: not running, not ready, most restarts)", pod, len(pods))
	}
	tail := int64(defaultTail)
	if a.Tail > 0 {
		tail = int64(a.Tail)
	}
	opts := &corev1.PodLogOptions{Container: a.Container, TailLines: &tail, Previous: a.Previous, LimitBytes: ptr(int64(maxLogBytes))}
	if a.Since != "" {
		d, _ := parseSince(a.Since)
		opts.SinceSeconds = ptr(int64(d.Seconds()))
	}
	stream, err := c.Client.CoreV1().Pods(ref.Namespace).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	defer stream.Close()
	raw, err := io.ReadAll(io.LimitReader(stream, maxLogBytes+1))
	if err != nil {
		return tools.Result{}, err
	}
	text, truncated := string(raw), false
	if len(text) > keptLogBytes {
		text, truncated = tailText(text, keptLogBytes), true
	}
	out := map[string]any{"cluster": c.Name, "namespace": ref.Namespace, "pod": pod, "container": a.Container,
		"previous": a.Previous, "lines": strings.Count(text, "\n"), "output": text, "truncated": truncated}
	if chosen != "" {
		out["note"] = chosen
	}
	if truncated {
		out["truncation"] = fmt.Sprintf("only the last %d KiB of %d bytes are shown; ask for fewer lines (tail) or a shorter since", keptLogBytes/1024, len(raw))
	}
	return tools.Result{Envelope: tools.OK(out), Output: text}, nil
}

func ptr[T any](v T) *T { return &v }

// tailText keeps at most n bytes of the end of s, from a line start.
func tailText(s string, n int) string {
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(s, "")
}

// Revision is one entry of a rollout history.
type Revision struct {
	Revision    int64     `json:"revision"`
	Name        string    `json:"name"`
	Created     time.Time `json:"created"`
	ChangeCause string    `json:"change_cause,omitempty"`
	Images      []string  `json:"images,omitempty"`
	Replicas    int32     `json:"replicas"`
	Current     bool      `json:"current,omitempty"`
}

// history lists a workload's revisions, newest first.
func (t *Tool) history(ctx context.Context, c *Cluster, ref ObjectRef) (tools.Result, error) {
	revs, err := revisions(ctx, c, ref)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Envelope: tools.OK(map[string]any{"cluster": c.Name, "object": string(ref.Kind) + "/" + ref.Namespace + "/" + ref.Name,
		"revisions": firstN(revs, 30), "total": len(revs)})}, nil
}

// revisions lists a deployment's replica sets, or a statefulset's or
// daemonset's controller revisions, newest first.
func revisions(ctx context.Context, c *Cluster, ref ObjectRef) ([]Revision, error) {
	var out []Revision
	switch ref.Kind {
	case KindDeployment:
		d, err := c.Client.AppsV1().Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		rss, err := replicaSetsOf(ctx, c, d)
		if err != nil {
			return nil, err
		}
		current := revisionOf(d.ObjectMeta)
		for _, rs := range rss {
			r := Revision{Revision: revisionOf(rs.ObjectMeta), Name: rs.Name, Created: ts(rs.CreationTimestamp),
				ChangeCause: rs.Annotations["kubernetes.io/change-cause"], Images: images(rs.Spec.Template.Spec), Replicas: rs.Status.Replicas}
			r.Current = r.Revision == current
			out = append(out, r)
		}
	default:
		var uid types.UID
		var sel *metav1.LabelSelector
		var current string
		if ref.Kind == KindStatefulSet {
			s, err := c.Client.AppsV1().StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			uid, sel, current = s.UID, s.Spec.Selector, s.Status.UpdateRevision
		} else {
			d, err := c.Client.AppsV1().DaemonSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			uid, sel = d.UID, d.Spec.Selector
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, refused("", "the object's selector cannot be read: %v", err)
		}
		crs, err := c.Client.AppsV1().ControllerRevisions(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.String()})
		if err != nil {
			return nil, err
		}
		for _, cr := range crs.Items {
			if !ownedBy(cr.OwnerReferences, uid) {
				continue
			}
			out = append(out, Revision{Revision: cr.Revision, Name: cr.Name, Created: ts(cr.CreationTimestamp), Current: cr.Name == current,
				ChangeCause: cr.Annotations["kubernetes.io/change-cause"]})
		}
	}
	slices.SortFunc(out, func(a, b Revision) int { return cmp.Compare(b.Revision, a.Revision) })
	return out, nil
}

func ownedBy(refs []metav1.OwnerReference, uid types.UID) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

// replicaSetsOf lists the replica sets a deployment owns.
func replicaSetsOf(ctx context.Context, c *Cluster, d *appsv1.Deployment) ([]appsv1.ReplicaSet, error) {
	s, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, refused("", "the deployment's selector cannot be read: %v", err)
	}
	l, err := c.Client.AppsV1().ReplicaSets(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.String()})
	if err != nil {
		return nil, err
	}
	var out []appsv1.ReplicaSet
	for _, rs := range l.Items {
		if ownedBy(rs.OwnerReferences, d.UID) {
			out = append(out, rs)
		}
	}
	return out, nil
}

// Usage is one pod's or node's resource usage.
type Usage struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	CPU       string `json:"cpu"`
	Memory    string `json:"memory"`
	// CPUPercent and MemoryPercent are of the node's allocatable.
	CPUPercent    int   `json:"cpu_percent,omitempty"`
	MemoryPercent int   `json:"memory_percent,omitempty"`
	milliCPU      int64 // for ordering
}

// top reads metrics-server: pods by CPU, or nodes with their share of
// allocatable.
func (t *Tool) top(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	if c.Metrics == nil {
		return tools.Result{}, errNoMetrics
	}
	var us []Usage
	if ref.Kind == KindNode {
		raw, err := c.Metrics.Get(ctx, "/nodes")
		if err != nil {
			return tools.Result{}, err
		}
		ml, err := decodeMetrics[nodeMetricsList](raw)
		if err != nil {
			return tools.Result{}, err
		}
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return tools.Result{}, err
		}
		alloc := map[string]corev1.ResourceList{}
		for _, n := range nodes.Items {
			alloc[n.Name] = n.Status.Allocatable
		}
		for _, it := range ml.Items {
			cpu, mem := parseQ(it.Usage["cpu"]), parseQ(it.Usage["memory"])
			u := Usage{Name: it.Metadata.Name, CPU: fmt.Sprintf("%dm", cpu.MilliValue()), Memory: fmt.Sprintf("%dMi", mem.Value()>>20), milliCPU: cpu.MilliValue()}
			if al, ok := alloc[it.Metadata.Name]; ok {
				if v := al.Cpu().MilliValue(); v > 0 {
					u.CPUPercent = int(cpu.MilliValue() * 100 / v)
				}
				if v := al.Memory().Value(); v > 0 {
					u.MemoryPercent = int(mem.Value() * 100 / v)
				}
			}
			us = append(us, u)
		}
	} else {
		for _, ns := range c.scope(a.Namespace) {
			path := "/pods"
			if ns != "" {
				path = "/namespaces/" + ns + "/pods"
			}
			raw, err := c.Metrics.Get(ctx, path)
			if err != nil {
				return tools.Result{}, err
			}
			ml, err := decodeMetrics[podMetricsList](raw)
			if err != nil {
				return tools.Result{}, err
			}
			for _, it := range ml.Items {
				var cpu, mem int64
				for _, ct := range it.Containers {
					q := parseQ(ct.Usage["cpu"])
					cpu += q.MilliValue()
					m := parseQ(ct.Usage["memory"])
					mem += m.Value()
				}
				us = append(us, Usage{Name: it.Metadata.Name, Namespace: it.Metadata.Namespace, CPU: fmt.Sprintf("%dm", cpu),
					Memory: fmt.Sprintf("%dMi", mem>>20), milliCPU: cpu})
			}
		}
	}
	slices.SortFunc(us, func(x, y Usage) int {
		if d := cmp.Compare(y.milliCPU, x.milliCPU); d != 0 {
			return d
		}
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	lr := capList(us, listResult{Kind: string(ref.Kind), Cluster: c.Name, Namespace: a.Namespace, OrderedBy: "CPU, highest first"})
	return tools.Result{Envelope: tools.OK(lr)}, nil
}

func parseQ(s string) resource.Quantity {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return resource.Quantity{}
	}
	return q
}
