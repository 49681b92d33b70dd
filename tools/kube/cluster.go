package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/vigilops/vigil/policy"
)

// Cluster is one configured Kubernetes cluster.
type Cluster struct {
	Name string
	// Client is the typed API client (client-go's clientset, or its fake
	// in tests).
	Client kubernetes.Interface
	// Metrics reads metrics-server; nil when the cluster offers none.
	Metrics MetricsReader
	// Namespaces is the allowlist; empty allows every namespace.
	Namespaces []string
	// Timeout bounds each call (30s when zero).
	Timeout time.Duration

	// rest is the connection Connect built Client from; clients acting as
	// a person (impersonation) are built from it. Nil for a cluster made
	// from a ready client (tests), which then cannot act as anyone.
	rest *rest.Config
	mu   sync.Mutex
	as   map[string]*Cluster // impersonating views, by identity
}

// ClusterConfig describes a cluster to connect to.
type ClusterConfig struct {
	Name       string
	Kubeconfig string
	Context    string
	InCluster  bool
	Namespaces []string
	Timeout    time.Duration
}

// Connect builds the clients of a cluster from its kubeconfig and context,
// or from the pod's service account (InCluster). Nothing is contacted
// until the first call.
func Connect(c ClusterConfig) (*Cluster, error) {
	var rc *rest.Config
	var err error
	if c.InCluster {
		rc, err = rest.InClusterConfig()
	} else {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig}
		rc, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	rc.UserAgent = "vigil"
	rc.QPS, rc.Burst = 20, 40
	if c.Timeout > 0 {
		rc.Timeout = c.Timeout
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	return &Cluster{
		Name: c.Name, Client: cs, Metrics: restMetrics{cs.Discovery().RESTClient()},
		Namespaces: slices.Clone(c.Namespaces), Timeout: c.Timeout, rest: rc,
	}, nil
}

// maxIdentityClients bounds the impersonating clients a cluster keeps; past
// it they are built again as needed.
const maxIdentityClients = 64

// actingAs is the cluster as seen through a client that impersonates id:
// client-go sends Impersonate-User and one Impersonate-Group per group
// with every request, so the API server authorises each call as that
// person (vigil's own account needs only the impersonate verb for them).
func (c *Cluster) actingAs(id policy.KubeIdentity) (*Cluster, error) {
	if c.rest == nil {
		return nil, fmt.Errorf("cluster %s was not connected from a kubeconfig, so it cannot act as %s", c.Name, id)
	}
	key := id.User + "\x00" + strings.Join(id.Groups, "\x00")
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.as[key]; ok {
		return v, nil
	}
	rc := rest.CopyConfig(c.rest)
	rc.Impersonate = rest.ImpersonationConfig{UserName: id.User, Groups: slices.Clone(id.Groups)}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s as %s: %w", c.Name, id, err)
	}
	v := &Cluster{Name: c.Name, Client: cs, Metrics: restMetrics{cs.Discovery().RESTClient()},
		Namespaces: c.Namespaces, Timeout: c.Timeout}
	if c.as == nil || len(c.as) >= maxIdentityClients {
		c.as = map[string]*Cluster{}
	}
	c.as[key] = v
	return v, nil
}

// Narrowed is the cluster with its namespace allowlist replaced by ns (a
// channel's scope). It keeps the connection but none of the cluster's
// impersonating clients: those carry the allowlist they were made with,
// so a narrowed cluster builds its own.
func (c *Cluster) Narrowed(ns []string) *Cluster {
	return &Cluster{Name: c.Name, Client: c.Client, Metrics: c.Metrics, Namespaces: slices.Clone(ns),
		Timeout: c.Timeout, rest: c.rest}
}

// allows reports whether ns is in the cluster's allowlist.
func (c *Cluster) allows(ns string) bool {
	return len(c.Namespaces) == 0 || slices.Contains(c.Namespaces, ns)
}

// scope is the namespaces a cluster-wide read covers: every allowed one,
// or [""] (all namespaces) when there is no allowlist.
func (c *Cluster) scope(ns string) []string {
	switch {
	case ns != "":
		return []string{ns}
	case len(c.Namespaces) > 0:
		return c.Namespaces
	}
	return []string{""}
}

func (c *Cluster) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return 30 * time.Second
}

// Resource kinds of Kubernetes objects in vigil's inventory sense: what
// people @mention and what writes target.
const (
	ResourceDeployment  = "k8s_deployment"
	ResourceStatefulSet = "k8s_statefulset"
	ResourceDaemonSet   = "k8s_daemonset"
	ResourcePod         = "k8s_pod"
	ResourceNode        = "k8s_node"
)

var resourceKinds = map[Kind]string{
	KindDeployment: ResourceDeployment, KindStatefulSet: ResourceStatefulSet, KindDaemonSet: ResourceDaemonSet,
	KindPod: ResourcePod, KindNode: ResourceNode,
}

// ObjectRef names one object in one cluster.
type ObjectRef struct {
	Cluster   string
	Kind      Kind
	Namespace string
	Name      string
}

// ID is the object's canonical resource ID: k8s_deployment:prod:shop/checkout,
// or k8s_node:prod:node-1 for a node. Kinds that are not inventory
// resources (services, configmaps) have none.
func (o ObjectRef) ID() policy.ResourceID {
	rk, ok := resourceKinds[o.Kind]
	if !ok {
		return ""
	}
	if o.Kind == KindNode {
		return policy.ResourceID(rk + ":" + o.Cluster + ":" + o.Name)
	}
	return policy.ResourceID(rk + ":" + o.Cluster + ":" + o.Namespace + "/" + o.Name)
}

// String is kind/namespace/name in cluster, for people.
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return fmt.Sprintf("%s %s in cluster %s", o.Kind, o.Name, o.Cluster)
	}
	return fmt.Sprintf("%s %s/%s in cluster %s", o.Kind, o.Namespace, o.Name, o.Cluster)
}

// ParseID reads a canonical ID back into a reference.
func ParseID(id string) (ObjectRef, bool) {
	rk, rest, ok := strings.Cut(id, ":")
	if !ok {
		return ObjectRef{}, false
	}
	var kind Kind
	for k, v := range resourceKinds {
		if v == rk {
			kind = k
		}
	}
	cluster, obj, ok := strings.Cut(rest, ":")
	if kind == "" || !ok || !clusterPattern.MatchString(cluster) {
		return ObjectRef{}, false
	}
	ref := ObjectRef{Cluster: cluster, Kind: kind}
	if kind == KindNode {
		ref.Name = obj
	} else {
		ref.Namespace, ref.Name, ok = strings.Cut(obj, "/")
		if !ok || !dnsLabel.MatchString(ref.Namespace) {
			return ObjectRef{}, false
		}
	}
	if !dnsSubdomain.MatchString(ref.Name) {
		return ObjectRef{}, false
	}
	return ref, true
}

// resource is the object as policy's resolved context records it. A pod's
// parent is its node, so operating on the node while a pod is in focus is
// a routing mismatch like a container's host.
func (o ObjectRef) resource(node string) policy.Resource {
	r := policy.Resource{ID: o.ID(), Kind: resourceKinds[o.Kind], Name: o.Name, Target: string(o.ID())}
	if o.Namespace != "" {
		r.Aliases = []string{o.Namespace + "." + o.Name, o.Cluster + "." + o.Namespace + "." + o.Name}
	} else {
		r.Aliases = []string{o.Cluster + "." + o.Name}
	}
	if o.Kind == KindPod && node != "" {
		r.Parent = ObjectRef{Cluster: o.Cluster, Kind: KindNode, Name: node}.ID()
	}
	return r
}

// MetricsReader reads metrics-server's resource metrics.
type MetricsReader interface {
	// Get fetches an absolute path under /apis/metrics.k8s.io/v1beta1.
	Get(ctx context.Context, path string) ([]byte, error)
}

// restMetrics reads metrics-server through the cluster's REST client.
type restMetrics struct{ rc rest.Interface }

func (m restMetrics) Get(ctx context.Context, path string) ([]byte, error) {
	if m.rc == nil {
		return nil, errNoMetrics
	}
	return m.rc.Get().AbsPath("/apis/metrics.k8s.io/v1beta1" + path).DoRaw(ctx)
}

var errNoMetrics = errors.New("metrics-server is not available")

// usage is a metrics-server usage map: cpu and memory quantities.
type usage map[string]string

type podMetricsList struct {
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
		Containers []struct {
			Name  string `json:"name"`
			Usage usage  `json:"usage"`
		} `json:"containers"`
	} `json:"items"`
}

type nodeMetricsList struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Usage usage `json:"usage"`
	} `json:"items"`
}

func decodeMetrics[T any](raw []byte) (T, error) {
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("metrics-server answered something that is not a metrics list: %w", err)
	}
	return out, nil
}
