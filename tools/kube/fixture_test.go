package kube

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vigilops/vigil/tools"
)

// now is the fixtures' present.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func mt(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func int32p(v int32) *int32 { return &v }

// shop is a small cluster: the checkout deployment at revision 3 (three
// replica sets), two of its pods (one crash-looping after an OOM kill), two
// nodes (one not ready), events, a configmap and a secret whose values
// must never show.
func shop() []runtime.Object {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "checkout"}}
	tmpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "checkout", "pod-template-hash": "h-" + image}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shop/checkout:" + image}}},
		}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "shop", UID: "dep-uid", ResourceVersion: "10",
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "3"}, CreationTimestamp: mt(72 * time.Hour)},
		Spec: appsv1.DeploymentSpec{Replicas: int32p(3), Selector: sel, Template: tmpl("v3"),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}},
		Status: appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2, UnavailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable",
				Message: "Deployment does not have minimum availability.", LastTransitionTime: mt(20 * time.Minute)}}},
	}
	rs := func(rev, image string, age time.Duration, replicas int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "checkout-" + image, Namespace: "shop", Labels: map[string]string{"app": "checkout"},
				Annotations:       map[string]string{"deployment.kubernetes.io/revision": rev, "kubernetes.io/change-cause": "deploy " + image},
				OwnerReferences:   []metav1.OwnerReference{{Kind: "Deployment", Name: "checkout", UID: "dep-uid"}},
				CreationTimestamp: mt(age)},
			Spec:   appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl(image)},
			Status: appsv1.ReplicaSetStatus{Replicas: replicas},
		}
	}
	pod := func(name, node string, restarts int32, ready bool, last *corev1.ContainerStateTerminated, state corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name + "-uid"), Labels: map[string]string{"app": "checkout"},
				OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "checkout-v3"}}, CreationTimestamp: mt(30 * time.Minute)},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "shop/checkout:v3",
				Env: []corev1.EnvVar{{Name: "DB_PASSWORD", Value: "env-secret-value"}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7", ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: ready, RestartCount: restarts, State: state,
				LastTerminationState: corev1.ContainerState{Terminated: last}}}},
		}
	}
	crashing := pod("checkout-7d9f-abcde", "node-1", 5, false,
		&corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137, FinishedAt: mt(2 * time.Minute)},
		corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"}})
	healthy := pod("checkout-7d9f-fghij", "node-2", 0, true, nil,
		corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mt(30 * time.Minute)}})
	node := func(name string, ready corev1.ConditionStatus, pressure bool) *corev1.Node {
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"node-role.kubernetes.io/worker": ""}, CreationTimestamp: mt(240 * time.Hour)},
			Status: corev1.NodeStatus{
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, Reason: "KubeletReady", LastTransitionTime: mt(10 * time.Minute)}},
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
				NodeInfo:    corev1.NodeSystemInfo{KubeletVersion: "v1.33.1"},
				Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.1.10"}},
			},
		}
		if pressure {
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue,
				Reason: "KubeletHasInsufficientMemory", LastTransitionTime: mt(12 * time.Minute)})
		}
		return n
	}
	event := func(name, typ, reason, kind, obj, msg string, age time.Duration, count int32) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "shop"},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: obj, Namespace: "shop"},
			Type:           typ, Reason: reason, Message: msg, Count: count,
			FirstTimestamp: mt(age + time.Minute), LastTimestamp: mt(age), Source: corev1.EventSource{Component: "kubelet"},
		}
	}
	return []runtime.Object{
		dep, rs("1", "v1", 72*time.Hour, 0), rs("2", "v2", 24*time.Hour, 0), rs("3", "v3", 30*time.Minute, 2),
		crashing, healthy,
		node("node-1", corev1.ConditionTrue, false), node("node-2", corev1.ConditionFalse, true),
		event("e1", corev1.EventTypeNormal, "ScalingReplicaSet", "Deployment", "checkout", "Scaled up replica set checkout-v3 to 3", 30*time.Minute, 1),
		event("e2", corev1.EventTypeWarning, "BackOff", "Pod", "checkout-7d9f-abcde", "Back-off restarting failed container app", 2*time.Minute, 14),
		event("e3", corev1.EventTypeNormal, "Pulled", "Pod", "checkout-7d9f-abcde", "Container image already present", 3*time.Minute, 6),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "checkout-config", Namespace: "shop"}, Data: map[string]string{"db_password": "cm-secret-value", "mode": "prod"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "checkout-db", Namespace: "shop"}, Data: map[string][]byte{"password": []byte("secret-value")}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
	}
}

// fakeCluster is the shop cluster on client-go's fake clientset, with the
// scale subresource the fake lacks and a metrics-server answering JSON.
func fakeCluster(t *testing.T, namespaces ...string) (*Cluster, *fake.Clientset) {
	t.Helper()
	cs := fake.NewSimpleClientset(shop()...)
	cs.PrependReactor("get", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ga := a.(k8stesting.GetAction)
		if ga.GetSubresource() != "scale" {
			return false, nil, nil
		}
		obj, err := cs.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), ga.GetNamespace(), ga.GetName())
		if err != nil {
			return true, nil, err
		}
		d := obj.(*appsv1.Deployment)
		return true, &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: d.Namespace}, Spec: autoscalingv1.ScaleSpec{Replicas: *d.Spec.Replicas}}, nil
	})
	cs.PrependReactor("update", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ua := a.(k8stesting.UpdateAction)
		if ua.GetSubresource() != "scale" {
			return false, nil, nil
		}
		s := ua.GetObject().(*autoscalingv1.Scale)
		obj, err := cs.Tracker().Get(appsv1.SchemeGroupVersion.WithResource("deployments"), ua.GetNamespace(), s.Name)
		if err != nil {
			return true, nil, err
		}
		d := obj.(*appsv1.Deployment).DeepCopy()
		d.Spec.Replicas = int32p(s.Spec.Replicas)
		return true, s, cs.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("deployments"), d, d.Namespace)
	})
	return &Cluster{Name: "prod", Client: cs, Metrics: fixedMetrics{}, Namespaces: namespaces, Timeout: 5 * time.Second}, cs
}

// fixedMetrics is a metrics-server with two pods and two nodes.
type fixedMetrics struct{}

func (fixedMetrics) Get(_ context.Context, path string) ([]byte, error) {
	if path == "/nodes" {
		return []byte(`{"items":[{"metadata":{"name":"node-1"},"usage":{"cpu":"1500m","memory":"2Gi"}},
			{"metadata":{"name":"node-2"},"usage":{"cpu":"3","memory":"7Gi"}}]}`), nil
	}
	return []byte(`{"items":[{"metadata":{"name":"checkout-7d9f-abcde","namespace":"shop"},"containers":[{"name":"app","usage":{"cpu":"950m","memory":"512Mi"}}]},
		{"metadata":{"name":"checkout-7d9f-fghij","namespace":"shop"},"containers":[{"name":"app","usage":{"cpu":"20m","memory":"128Mi"}}]}]}`), nil
}

func call(t *testing.T, tool tools.Tool, args string) tools.Result {
	t.Helper()
	p, b := tool.Propose(json.RawMessage(args))
	if b != nil {
		t.Fatalf("propose %s: %+v", args, b)
	}
	return tool.Execute(context.Background(), p)
}

func dataOf(t *testing.T, r tools.Result) map[string]any {
	t.Helper()
	if !r.Envelope.OK {
		t.Fatalf("not ok: %s", r.Envelope.JSON())
	}
	raw, _ := json.Marshal(r.Envelope.Data)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
