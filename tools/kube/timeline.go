package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/changes"
)

// Changes answers the changes tool for Kubernetes objects: it resolves the
// names people use (through the Discovery cache, or a canonical ID) and
// reads an object's recent rollouts, warning events and restarts.
type Changes struct {
	clusters  map[string]*Cluster
	discovery *Discovery
}

var _ changes.Kube = (*Changes)(nil)

// NewChanges returns the changes source over clusters; d may be nil.
func NewChanges(clusters []*Cluster, d *Discovery) *Changes {
	m := make(map[string]*Cluster, len(clusters))
	for _, c := range clusters {
		m[c.Name] = c
	}
	return &Changes{clusters: m, discovery: d}
}

// Resolve finds an object by ID, or by name or alias in the discovery
// cache. An ID names an object even before discovery has seen it.
func (k *Changes) Resolve(target string) (policy.Resource, bool) {
	if ref, ok := ParseID(strings.TrimSpace(target)); ok {
		if c, ok := k.clusters[ref.Cluster]; ok && (ref.Namespace == "" || c.allows(ref.Namespace)) {
			if k.discovery != nil {
				if r, ok := k.discovery.Lookup(string(ref.ID())); ok {
					return r, true
				}
			}
			return ref.resource(""), true
		}
		return policy.Resource{}, false
	}
	if k.discovery == nil {
		return policy.Resource{}, false
	}
	return k.discovery.Lookup(target)
}

// Timeline reads the object's changes since start.
func (k *Changes) Timeline(ctx context.Context, id policy.ResourceID, start time.Time, actor *policy.Actor) ([]changes.Event, error) {
	ref, ok := ParseID(string(id))
	if !ok {
		return nil, fmt.Errorf("%s is not a Kubernetes object ID", id)
	}
	c, ok := k.clusters[ref.Cluster]
	if !ok {
		return nil, fmt.Errorf("no cluster named %s", ref.Cluster)
	}
	if ref.Namespace != "" && !c.allows(ref.Namespace) {
		return nil, fmt.Errorf("namespace %s is not allowed in cluster %s", ref.Namespace, c.Name)
	}
	if actor != nil {
		// Like the kube tool: the person's own identity, or nothing.
		if err := actor.KubeRefusal(); err != nil {
			return nil, err
		}
		var err error
		if c, err = c.actingAs(actor.Kube); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	subject := string(ref.Kind) + "/" + ref.Name
	if ref.Namespace != "" {
		subject = string(ref.Kind) + "/" + ref.Namespace + "/" + ref.Name
	}
	var out []changes.Event
	ev := func(at time.Time, kind, subj, detail string) {
		if !at.Before(start) {
			out = append(out, changes.Event{At: at, Source: "kubernetes", Kind: kind, Subject: subj, Detail: detail})
		}
	}
	// Events about the object itself: all of a workload's (scaling,
	// rollouts), warnings of a pod or node.
	addEvents := func(r ObjectRef, uid types.UID, warningsOnly bool) error {
		evs, err := objectEvents(ctx, c, r, uid, start)
		if err != nil {
			return err
		}
		for _, e := range evs {
			if warningsOnly && e.Type != corev1.EventTypeWarning {
				continue
			}
			kind := "event"
			if e.Type == corev1.EventTypeWarning {
				kind = "warning"
			}
			detail := e.Reason + ": " + e.Message
			if e.Count > 1 {
				detail += fmt.Sprintf(" (%d times)", e.Count)
			}
			ev(e.LastSeen, kind, e.Object, detail)
		}
		return nil
	}
	// Restarts of pods, from their containers' last terminations.
	addPods := func(pods []corev1.Pod) error {
		for i := range pods {
			p := &pods[i]
			for _, s := range p.Status.ContainerStatuses {
				if t := s.LastTerminationState.Terminated; t != nil {
					ev(t.FinishedAt.UTC(), "restart", "pod/"+p.Namespace+"/"+p.Name,
						fmt.Sprintf("container %s restarted after %s (exit %d); %d restarts in all", s.Name, t.Reason, t.ExitCode, s.RestartCount))
				}
			}
			ev(p.CreationTimestamp.UTC(), "pod_created", "pod/"+p.Namespace+"/"+p.Name, "on node "+p.Spec.NodeName)
			if err := addEvents(ObjectRef{Cluster: c.Name, Kind: KindPod, Namespace: p.Namespace, Name: p.Name}, p.UID, true); err != nil {
				return err
			}
		}
		return nil
	}
	podsBySelector := func(sel *metav1.LabelSelector) ([]corev1.Pod, error) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return nil, err
		}
		items, _, err := listAll(ctx, func(o metav1.ListOptions) ([]corev1.Pod, string, error) {
			o.LabelSelector = s.String()
			l, err := c.Client.CoreV1().Pods(ref.Namespace).List(ctx, o)
			if err != nil {
				return nil, "", err
			}
			return l.Items, l.Continue, nil
		})
		return items, err
	}

	switch ref.Kind {
	case KindDeployment, KindStatefulSet, KindDaemonSet:
		revs, err := revisions(ctx, c, ref)
		if err != nil {
			return nil, err
		}
		for _, r := range revs {
			detail := fmt.Sprintf("revision %d rolled out", r.Revision)
			if len(r.Images) > 0 {
				detail += ": " + strings.Join(r.Images, ", ")
			}
			if r.ChangeCause != "" {
				detail += " (" + r.ChangeCause + ")"
			}
			ev(r.Created, "rollout", subject, detail)
		}
		var sel *metav1.LabelSelector
		var uid types.UID
		switch ref.Kind {
		case KindDeployment:
			d, err := c.Client.AppsV1().Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			sel, uid = d.Spec.Selector, d.UID
		case KindStatefulSet:
			s, err := c.Client.AppsV1().StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			sel, uid = s.Spec.Selector, s.UID
		default:
			d, err := c.Client.AppsV1().DaemonSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			sel, uid = d.Spec.Selector, d.UID
		}
		if err := addEvents(ref, uid, false); err != nil {
			return nil, err
		}
		pods, err := podsBySelector(sel)
		if err != nil {
			return nil, err
		}
		if err := addPods(pods); err != nil {
			return nil, err
		}
	case KindPod:
		p, err := c.Client.CoreV1().Pods(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if err := addPods([]corev1.Pod{*p}); err != nil {
			return nil, err
		}
	case KindNode:
		n, err := c.Client.CoreV1().Nodes().Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for _, cond := range n.Status.Conditions {
			ev(cond.LastTransitionTime.UTC(), "condition", subject,
				fmt.Sprintf("%s became %s (%s) %s", cond.Type, cond.Status, cond.Reason, cond.Message))
		}
		if err := addEvents(ref, n.UID, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}
