package eval

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/kube"
)

// KubeCluster is the name of a scenario's simulated cluster.
const KubeCluster = "eval"

// Now is the simulated clock of the Kubernetes side: object and event
// times in scenarios are written relative to it (2026-11-24 22:00 UTC), so
// ages come out the same on every run.
var Now = time.Date(2026, 11, 24, 22, 0, 0, 0, time.UTC)

// parseKube decodes a scenario's Kubernetes objects (manifests, as kubectl
// get -o yaml prints them).
func parseKube(nodes []yaml.Node) ([]runtime.Object, error) {
	var out []runtime.Object
	for i := range nodes {
		raw, err := yaml.Marshal(&nodes[i])
		if err != nil {
			return nil, fmt.Errorf("kube[%d]: %w", i, err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("kube[%d]: %w", i, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// kubeTool is the real kube tool over client-go's fake clientset holding
// the scenario's objects: reads list and describe them, approved writes
// (rollout undo, scale, delete pod…) change them.
func kubeTool(sc *Scenario) tools.Tool {
	objs := make([]runtime.Object, len(sc.kube))
	for i, o := range sc.kube {
		objs[i] = o.DeepCopyObject()
	}
	cs := fake.NewClientset(objs...)
	return kube.New([]*kube.Cluster{{Name: KubeCluster, Client: cs}}, func() time.Time { return Now })
}

// kubeCall describes a kube call for matchers: its command is
// "kind namespace name" (the parts given), its target the object's ID.
func kubeCall(c *Call, p tools.Proposal) {
	a, ok := p.Args.(kube.Args)
	if !ok {
		return
	}
	kind := a.Kind
	if kind == "" {
		kind = kube.KindPod
	}
	var parts []string
	for _, s := range []string{string(kind), a.Namespace, a.Name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	c.Command = strings.Join(parts, " ")
	if a.Name != "" {
		if id := (kube.ObjectRef{Cluster: KubeCluster, Kind: kind, Namespace: a.Namespace, Name: a.Name}).ID(); id != "" {
			c.Target, c.ID = string(id), id
		}
	}
}
