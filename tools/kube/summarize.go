package kube

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The summaries below are what the model reads of an object: the fields an
// on-call engineer looks at, never the whole object. Environment variables,
// volumes and configmap or secret contents are never included.

const maxMessage = 300

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func ts(t metav1.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

// Condition is an object condition that is worth reading.
type Condition struct {
	Type    string    `json:"type"`
	Status  string    `json:"status"`
	Reason  string    `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Since   time.Time `json:"since,omitzero"`
}

// Termination is how a container last ended.
type Termination struct {
	Reason     string    `json:"reason"`
	ExitCode   int32     `json:"exit_code"`
	Signal     int32     `json:"signal,omitempty"`
	Message    string    `json:"message,omitempty"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// ContainerInfo is one container of a pod.
type ContainerInfo struct {
	Name     string `json:"name"`
	Image    string `json:"image"`
	Ready    bool   `json:"ready"`
	Restarts int32  `json:"restarts"`
	// State is running, waiting: <reason> or terminated: <reason>.
	State           string       `json:"state"`
	StateMessage    string       `json:"state_message,omitempty"`
	Since           time.Time    `json:"since,omitzero"`
	LastTermination *Termination `json:"last_termination,omitempty"`
}

// PodInfo is a pod's summary.
type PodInfo struct {
	Name       string          `json:"name"`
	Namespace  string          `json:"namespace"`
	Phase      string          `json:"phase"`
	Reason     string          `json:"reason,omitempty"`
	Node       string          `json:"node,omitempty"`
	IP         string          `json:"ip,omitempty"`
	Ready      string          `json:"ready"`
	Restarts   int32           `json:"restarts"`
	Owner      string          `json:"owner,omitempty"`
	Created    time.Time       `json:"created"`
	Containers []ContainerInfo `json:"containers"`
	// Conditions lists the ones that are not True.
	Conditions []Condition `json:"conditions,omitempty"`
}

func summarizePod(p *corev1.Pod) PodInfo {
	out := PodInfo{
		Name: p.Name, Namespace: p.Namespace, Phase: string(p.Status.Phase), Reason: p.Status.Reason,
		Node: p.Spec.NodeName, IP: p.Status.PodIP, Created: ts(p.CreationTimestamp),
	}
	if len(p.OwnerReferences) > 0 {
		out.Owner = p.OwnerReferences[0].Kind + "/" + p.OwnerReferences[0].Name
	}
	statuses := map[string]corev1.ContainerStatus{}
	for _, s := range p.Status.ContainerStatuses {
		statuses[s.Name] = s
	}
	ready := 0
	for _, c := range p.Spec.Containers {
		ci := ContainerInfo{Name: c.Name, Image: c.Image}
		if s, ok := statuses[c.Name]; ok {
			ci.Ready, ci.Restarts = s.Ready, s.RestartCount
			out.Restarts += s.RestartCount
			if s.Ready {
				ready++
			}
			switch st := s.State; {
			case st.Running != nil:
				ci.State, ci.Since = "running", ts(st.Running.StartedAt)
			case st.Waiting != nil:
				ci.State, ci.StateMessage = "waiting: "+st.Waiting.Reason, clip(st.Waiting.Message, maxMessage)
			case st.Terminated != nil:
				ci.State, ci.StateMessage, ci.Since = "terminated: "+st.Terminated.Reason, clip(st.Terminated.Message, maxMessage), ts(st.Terminated.FinishedAt)
			}
			if t := s.LastTerminationState.Terminated; t != nil {
				ci.LastTermination = &Termination{Reason: t.Reason, ExitCode: t.ExitCode, Signal: t.Signal,
					Message: clip(t.Message, maxMessage), FinishedAt: ts(t.FinishedAt)}
			}
		} else {
			ci.State = "not started"
		}
		out.Containers = append(out.Containers, ci)
	}
	out.Ready = fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers))
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			out.Conditions = append(out.Conditions, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason,
				Message: clip(c.Message, maxMessage), Since: ts(c.LastTransitionTime)})
		}
	}
	return out
}

func images(spec corev1.PodSpec) []string {
	out := make([]string, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		out = append(out, c.Name+"="+c.Image)
	}
	return out
}

// WorkloadInfo summarises a deployment, statefulset or daemonset.
type WorkloadInfo struct {
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	Created   time.Time `json:"created"`
	// Desired, Ready, Updated and Available are replica (or, for a
	// daemonset, node) counts.
	Desired     int32       `json:"desired"`
	Ready       int32       `json:"ready"`
	Updated     int32       `json:"updated"`
	Available   int32       `json:"available"`
	Unavailable int32       `json:"unavailable,omitempty"`
	Revision    string      `json:"revision,omitempty"`
	Strategy    string      `json:"strategy,omitempty"`
	Paused      bool        `json:"paused,omitempty"`
	Images      []string    `json:"images"`
	Selector    string      `json:"selector,omitempty"`
	Conditions  []Condition `json:"conditions,omitempty"`
}

func conditions[T any](cs []T, get func(T) Condition) []Condition {
	var out []Condition
	for _, c := range cs {
		x := get(c)
		x.Message = clip(x.Message, maxMessage)
		out = append(out, x)
	}
	return out
}

func summarizeDeployment(d *appsv1.Deployment) WorkloadInfo {
	out := WorkloadInfo{
		Kind: "deployment", Name: d.Name, Namespace: d.Namespace, Created: ts(d.CreationTimestamp),
		Ready: d.Status.ReadyReplicas, Updated: d.Status.UpdatedReplicas, Available: d.Status.AvailableReplicas,
		Unavailable: d.Status.UnavailableReplicas, Revision: d.Annotations["deployment.kubernetes.io/revision"],
		Strategy: string(d.Spec.Strategy.Type), Paused: d.Spec.Paused, Images: images(d.Spec.Template.Spec),
		Selector: metav1.FormatLabelSelector(d.Spec.Selector),
	}
	out.Desired = desiredReplicas(d.Spec.Replicas)
	out.Conditions = conditions(d.Status.Conditions, func(c appsv1.DeploymentCondition) Condition {
		return Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: ts(c.LastTransitionTime)}
	})
	return out
}

// desiredReplicas is spec.replicas, which the API server defaults to 1.
func desiredReplicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func summarizeStatefulSet(s *appsv1.StatefulSet) WorkloadInfo {
	out := WorkloadInfo{
		Kind: "statefulset", Name: s.Name, Namespace: s.Namespace, Created: ts(s.CreationTimestamp),
		Ready: s.Status.ReadyReplicas, Updated: s.Status.UpdatedReplicas, Available: s.Status.AvailableReplicas,
		Revision: s.Status.UpdateRevision, Strategy: string(s.Spec.UpdateStrategy.Type), Images: images(s.Spec.Template.Spec),
		Selector: metav1.FormatLabelSelector(s.Spec.Selector),
	}
	out.Desired = desiredReplicas(s.Spec.Replicas)
	out.Conditions = conditions(s.Status.Conditions, func(c appsv1.StatefulSetCondition) Condition {
		return Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: ts(c.LastTransitionTime)}
	})
	return out
}

func summarizeDaemonSet(d *appsv1.DaemonSet) WorkloadInfo {
	out := WorkloadInfo{
		Kind: "daemonset", Name: d.Name, Namespace: d.Namespace, Created: ts(d.CreationTimestamp),
		Desired: d.Status.DesiredNumberScheduled, Ready: d.Status.NumberReady, Updated: d.Status.UpdatedNumberScheduled,
		Available: d.Status.NumberAvailable, Unavailable: d.Status.NumberUnavailable,
		Strategy: string(d.Spec.UpdateStrategy.Type), Images: images(d.Spec.Template.Spec),
		Selector: metav1.FormatLabelSelector(d.Spec.Selector),
	}
	out.Conditions = conditions(d.Status.Conditions, func(c appsv1.DaemonSetCondition) Condition {
		return Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message, Since: ts(c.LastTransitionTime)}
	})
	return out
}

// ServiceInfo is a service's summary.
type ServiceInfo struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	Type      string    `json:"type"`
	ClusterIP string    `json:"cluster_ip,omitempty"`
	External  []string  `json:"external,omitempty"`
	Ports     []string  `json:"ports"`
	Selector  string    `json:"selector,omitempty"`
	Created   time.Time `json:"created"`
}

func summarizeService(s *corev1.Service) ServiceInfo {
	out := ServiceInfo{Name: s.Name, Namespace: s.Namespace, Type: string(s.Spec.Type), ClusterIP: s.Spec.ClusterIP,
		Created: ts(s.CreationTimestamp), Ports: []string{}}
	for _, in := range s.Status.LoadBalancer.Ingress {
		out.External = append(out.External, cmp.Or(in.IP, in.Hostname))
	}
	out.External = append(out.External, s.Spec.ExternalIPs...)
	for _, p := range s.Spec.Ports {
		port := fmt.Sprintf("%d/%s→%s", p.Port, p.Protocol, p.TargetPort.String())
		if p.NodePort != 0 {
			port += fmt.Sprintf(" (node port %d)", p.NodePort)
		}
		if p.Name != "" {
			port = p.Name + " " + port
		}
		out.Ports = append(out.Ports, port)
	}
	out.Selector = metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: s.Spec.Selector})
	return out
}

// NodeInfo is a node's summary.
type NodeInfo struct {
	Name          string            `json:"name"`
	Ready         string            `json:"ready"`
	Unschedulable bool              `json:"unschedulable"`
	Roles         []string          `json:"roles,omitempty"`
	InternalIP    string            `json:"internal_ip,omitempty"`
	Kubelet       string            `json:"kubelet"`
	OS            string            `json:"os,omitempty"`
	Capacity      map[string]string `json:"capacity"`
	Allocatable   map[string]string `json:"allocatable"`
	Taints        []string          `json:"taints,omitempty"`
	// Problems are conditions in a bad state (Ready not True, pressure
	// conditions True).
	Problems []Condition `json:"problems,omitempty"`
	Created  time.Time   `json:"created"`
}

func summarizeNode(n *corev1.Node) NodeInfo {
	out := NodeInfo{Name: n.Name, Unschedulable: n.Spec.Unschedulable, Kubelet: n.Status.NodeInfo.KubeletVersion,
		OS: n.Status.NodeInfo.OSImage, Created: ts(n.CreationTimestamp), Ready: "Unknown",
		Capacity: quantities(n.Status.Capacity), Allocatable: quantities(n.Status.Allocatable)}
	for l := range n.Labels {
		if r, ok := strings.CutPrefix(l, "node-role.kubernetes.io/"); ok {
			out.Roles = append(out.Roles, r)
		}
	}
	slices.Sort(out.Roles)
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP && out.InternalIP == "" {
			out.InternalIP = a.Address
		}
	}
	for _, t := range n.Spec.Taints {
		out.Taints = append(out.Taints, t.Key+"="+t.Value+":"+string(t.Effect))
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = string(c.Status)
		}
		bad := (c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue) || (c.Type != corev1.NodeReady && c.Status == corev1.ConditionTrue)
		if bad {
			out.Problems = append(out.Problems, Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason,
				Message: clip(c.Message, maxMessage), Since: ts(c.LastTransitionTime)})
		}
	}
	return out
}

func quantities(rl corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		if q, ok := rl[k]; ok {
			out[string(k)] = q.String()
		}
	}
	return out
}

// ConfigMapInfo is all the tool shows of a configmap: its name and how
// many keys it holds, never their contents.
type ConfigMapInfo struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	Keys      int       `json:"keys"`
	Created   time.Time `json:"created"`
}

func summarizeConfigMap(c *corev1.ConfigMap) ConfigMapInfo {
	return ConfigMapInfo{Name: c.Name, Namespace: c.Namespace, Keys: len(c.Data) + len(c.BinaryData), Created: ts(c.CreationTimestamp)}
}

// EventInfo is one event.
type EventInfo struct {
	Type      string    `json:"type"`
	Reason    string    `json:"reason"`
	Object    string    `json:"object"`
	Namespace string    `json:"namespace,omitempty"`
	Message   string    `json:"message"`
	Count     int32     `json:"count"`
	FirstSeen time.Time `json:"first_seen,omitzero"`
	LastSeen  time.Time `json:"last_seen"`
	Source    string    `json:"source,omitempty"`
}

// eventTime is when an event last happened, whichever field the emitter
// filled.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.UTC()
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.UTC()
	case !e.EventTime.IsZero():
		return e.EventTime.UTC()
	}
	return e.CreationTimestamp.UTC()
}

func summarizeEvent(e *corev1.Event) EventInfo {
	count := e.Count
	if e.Series != nil && e.Series.Count > count {
		count = e.Series.Count
	}
	if count == 0 {
		count = 1
	}
	src := e.Source.Component
	if src == "" {
		src = e.ReportingController
	}
	return EventInfo{
		Type: e.Type, Reason: e.Reason, Object: strings.ToLower(e.InvolvedObject.Kind) + "/" + e.InvolvedObject.Name,
		Namespace: e.InvolvedObject.Namespace, Message: clip(e.Message, maxMessage), Count: count,
		FirstSeen: ts(e.FirstTimestamp), LastSeen: eventTime(e), Source: src,
	}
}

// sortEvents orders events warnings first, then newest first.
func sortEvents(es []EventInfo) {
	slices.SortStableFunc(es, func(a, b EventInfo) int {
		if (a.Type == corev1.EventTypeWarning) != (b.Type == corev1.EventTypeWarning) {
			if a.Type == corev1.EventTypeWarning {
				return -1
			}
			return 1
		}
		return b.LastSeen.Compare(a.LastSeen)
	})
}

// revisionOf reads a deployment or replica set's revision annotation.
func revisionOf(m metav1.ObjectMeta) int64 {
	n, _ := strconv.ParseInt(m.Annotations["deployment.kubernetes.io/revision"], 10, 64)
	return n
}
