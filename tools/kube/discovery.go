package kube

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vigilops/vigil/policy"
)

// Discovery keeps the deployments, statefulsets, daemonsets, pods and
// nodes of every cluster as resources people can @mention. It lists them
// (paged) when Refresh runs — on start and then every interval from Run —
// and answers lookups from memory, so a question never costs a list.
type Discovery struct {
	clusters []*Cluster
	log      *slog.Logger

	mu sync.RWMutex
	// byKey maps a lower-cased name, alias or ID to the resources it
	// names; a name shared by several objects is ambiguous.
	byKey     map[string][]policy.Resource
	byID      map[policy.ResourceID]policy.Resource
	refreshed map[string]time.Time
	// gen counts the replacements of the cache's contents.
	gen uint64
}

// NewDiscovery returns an empty cache over clusters.
func NewDiscovery(clusters []*Cluster, log *slog.Logger) *Discovery {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Discovery{clusters: clusters, log: log, byKey: map[string][]policy.Resource{},
		byID: map[policy.ResourceID]policy.Resource{}, refreshed: map[string]time.Time{}}
}

// Run refreshes the cache now and then every interval until ctx ends.
func (d *Discovery) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		d.Refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh lists every cluster once. A cluster that fails keeps what was
// known of it; the failure is logged.
func (d *Discovery) Refresh(ctx context.Context) {
	for _, c := range d.clusters {
		rs, err := discover(ctx, c)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Warn("kubernetes discovery failed; @mentions use what was known", "cluster", c.Name, "err", err)
			}
			continue
		}
		d.replace(c.Name, rs)
		d.log.Debug("kubernetes discovery", "cluster", c.Name, "resources", len(rs))
	}
}

// replace swaps one cluster's resources.
func (d *Discovery) replace(cluster string, rs []policy.Resource) {
	d.mu.Lock()
	defer d.mu.Unlock()
	prefix := ":" + cluster + ":"
	for id := range d.byID {
		if strings.Contains(string(id), prefix) {
			delete(d.byID, id)
		}
	}
	for k, list := range d.byKey {
		kept := list[:0]
		for _, r := range list {
			if !strings.Contains(string(r.ID), prefix) {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(d.byKey, k)
		} else {
			d.byKey[k] = kept
		}
	}
	for _, r := range rs {
		d.byID[r.ID] = r
		for _, k := range append([]string{r.Name, string(r.ID)}, r.Aliases...) {
			k = strings.ToLower(k)
			d.byKey[k] = append(d.byKey[k], r)
		}
	}
	d.refreshed[cluster] = time.Now()
	d.gen++
}

// Resources returns every resource the cache holds, sorted by ID, and a
// generation number that changes whenever the contents do (so a caller can
// keep what it derived from them until then).
func (d *Discovery) Resources() (gen uint64, rs []policy.Resource) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	rs = make([]policy.Resource, 0, len(d.byID))
	for _, r := range d.byID {
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b policy.Resource) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return d.gen, rs
}

// Lookup finds the one resource a name, alias (namespace.name,
// cluster.namespace.name) or ID names. A name several objects share is
// ambiguous and found only by a longer alias or the ID; so is a name shared
// by a deployment and its pods, where the workload wins.
func (d *Discovery) Lookup(name string) (policy.Resource, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	list := d.byKey[strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "@"))]
	if len(list) == 1 {
		return list[0], true
	}
	var workloads []policy.Resource
	for _, r := range list {
		if r.Kind != ResourcePod && r.Kind != ResourceNode {
			workloads = append(workloads, r)
		}
	}
	if len(workloads) == 1 {
		return workloads[0], true
	}
	return policy.Resource{}, false
}

// ResolveMention answers the bot's @mention lookups: the object and, for a
// pod, the node it runs on.
func (d *Discovery) ResolveMention(name string) ([]policy.Resource, bool) {
	r, ok := d.Lookup(name)
	if !ok {
		return nil, false
	}
	chain := []policy.Resource{r}
	if r.Parent != "" {
		d.mu.RLock()
		p, ok := d.byID[r.Parent]
		d.mu.RUnlock()
		if ok {
			chain = append(chain, p)
		}
	}
	return chain, true
}

// Len is how many resources the cache holds.
func (d *Discovery) Len() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.byID)
}

// discover lists one cluster's resources.
func discover(ctx context.Context, c *Cluster) ([]policy.Resource, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*c.timeout())
	defer cancel()
	var out []policy.Resource
	add := func(k Kind, ns, name, node string) {
		out = append(out, ObjectRef{Cluster: c.Name, Kind: k, Namespace: ns, Name: name}.resource(node))
	}
	nodes, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Node, string, error) {
		l, err := c.Client.CoreV1().Nodes().List(ctx, o)
		if err != nil {
			return nil, "", err
		}
		return l.Items, l.Continue, nil
	})
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		add(KindNode, "", n.Name, "")
	}
	for _, ns := range c.scope("") {
		deps, _, err := listAll(ctx, func(o metav1.ListOptions) ([]appsv1.Deployment, string, error) {
			l, err := c.Client.AppsV1().Deployments(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			return nil, err
		}
		for _, x := range deps {
			add(KindDeployment, x.Namespace, x.Name, "")
		}
		sts, _, err := listAll(ctx, func(o metav1.ListOptions) ([]appsv1.StatefulSet, string, error) {
			l, err := c.Client.AppsV1().StatefulSets(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			return nil, err
		}
		for _, x := range sts {
			add(KindStatefulSet, x.Namespace, x.Name, "")
		}
		dss, _, err := listAll(ctx, func(o metav1.ListOptions) ([]appsv1.DaemonSet, string, error) {
			l, err := c.Client.AppsV1().DaemonSets(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			return nil, err
		}
		for _, x := range dss {
			add(KindDaemonSet, x.Namespace, x.Name, "")
		}
		pods, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Pod, string, error) {
			l, err := c.Client.CoreV1().Pods(ns).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		if err != nil {
			return nil, err
		}
		for _, x := range pods {
			add(KindPod, x.Namespace, x.Name, x.Spec.NodeName)
		}
	}
	return out, nil
}
