package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/vigilops/vigil/tools"
)

// restartAnnotation is the annotation kubectl rollout restart sets on the
// pod template; changing it makes the controller replace every pod.
const restartAnnotation = "kubectl.kubernetes.io/restartedAt"

// write performs one approved change. Each returns what it changed, read
// back where the API says, so the model can report and verify it.
func (t *Tool) write(ctx context.Context, c *Cluster, a Args, ref ObjectRef) (tools.Result, error) {
	var data map[string]any
	var err error
	switch a.Action {
	case ActionRolloutRestart:
		data, err = t.restart(ctx, c, ref)
	case ActionScale:
		data, err = scale(ctx, c, ref, int32(*a.Replicas))
	case ActionDeletePod:
		err = c.Client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{})
		data = map[string]any{"deleted": true}
	case ActionCordon, ActionUncordon:
		data, err = cordon(ctx, c, ref, a.Action == ActionCordon)
	case ActionRolloutUndo:
		data, err = undo(ctx, c, ref, int64(a.Revision))
	default:
		err = fmt.Errorf("kube: unknown write %q", a.Action)
	}
	if err != nil {
		return tools.Result{}, err
	}
	data["cluster"], data["object"] = c.Name, ref.String()
	data["verify"] = "read it back (describe, get or rollout_history) to confirm the change took effect"
	return tools.Result{Envelope: tools.OK(data)}, nil
}

func (t *Tool) restart(ctx context.Context, c *Cluster, ref ObjectRef) (map[string]any, error) {
	at := t.now().UTC().Format(time.RFC3339)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{
		"metadata": map[string]any{"annotations": map[string]string{restartAnnotation: at}}}}})
	if err != nil {
		return nil, err
	}
	opts := metav1.PatchOptions{FieldManager: "vigil"}
	switch ref.Kind {
	case KindDeployment:
		_, err = c.Client.AppsV1().Deployments(ref.Namespace).Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, opts)
	case KindStatefulSet:
		_, err = c.Client.AppsV1().StatefulSets(ref.Namespace).Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, opts)
	case KindDaemonSet:
		_, err = c.Client.AppsV1().DaemonSets(ref.Namespace).Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, opts)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"restarted_at": at}, nil
}

func scale(ctx context.Context, c *Cluster, ref ObjectRef, replicas int32) (map[string]any, error) {
	var from int32
	switch ref.Kind {
	case KindDeployment:
		s, err := c.Client.AppsV1().Deployments(ref.Namespace).GetScale(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		from = s.Spec.Replicas
		s.Spec.Replicas = replicas
		if _, err := c.Client.AppsV1().Deployments(ref.Namespace).UpdateScale(ctx, ref.Name, s, metav1.UpdateOptions{FieldManager: "vigil"}); err != nil {
			return nil, err
		}
	case KindStatefulSet:
		s, err := c.Client.AppsV1().StatefulSets(ref.Namespace).GetScale(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		from = s.Spec.Replicas
		s.Spec.Replicas = replicas
		if _, err := c.Client.AppsV1().StatefulSets(ref.Namespace).UpdateScale(ctx, ref.Name, s, metav1.UpdateOptions{FieldManager: "vigil"}); err != nil {
			return nil, err
		}
	}
	return map[string]any{"replicas_before": from, "replicas": replicas}, nil
}

func cordon(ctx context.Context, c *Cluster, ref ObjectRef, unschedulable bool) (map[string]any, error) {
	n, err := c.Client.CoreV1().Nodes().Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	before := n.Spec.Unschedulable
	if before != unschedulable {
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": unschedulable}})
		if err != nil {
			return nil, err
		}
		if _, err := c.Client.CoreV1().Nodes().Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldManager: "vigil"}); err != nil {
			return nil, err
		}
	}
	out := map[string]any{"unschedulable_before": before, "unschedulable": unschedulable}
	if before == unschedulable {
		out["note"] = "the node was already in that state; nothing changed"
	}
	return out, nil
}

// undo rolls a deployment's pod template back to a revision (the previous
// one when revision is 0), as kubectl rollout undo does: the replica set
// of that revision holds the template.
func undo(ctx context.Context, c *Cluster, ref ObjectRef, revision int64) (map[string]any, error) {
	d, err := c.Client.AppsV1().Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if d.Spec.Paused {
		return nil, refused("resume the rollout first, or tell the user", "%s is paused; a paused deployment cannot be rolled back", ref)
	}
	rss, err := replicaSetsOf(ctx, c, d)
	if err != nil {
		return nil, err
	}
	current := revisionOf(d.ObjectMeta)
	var target *appsv1.ReplicaSet
	for i := range rss {
		r := revisionOf(rss[i].ObjectMeta)
		switch {
		case revision > 0 && r == revision:
			target = &rss[i]
		case revision == 0 && r < current && (target == nil || r > revisionOf(target.ObjectMeta)):
			target = &rss[i]
		}
	}
	if target == nil {
		if revision > 0 {
			return nil, refused("use rollout_history to see the revisions", "%s has no revision %d", ref, revision)
		}
		return nil, refused("use rollout_history to see the revisions", "%s has no revision before %d to roll back to", ref, current)
	}
	if revision > 0 && revision == current {
		return nil, refused("", "%s is already at revision %d", ref, revision)
	}
	tmpl := *target.Spec.Template.DeepCopy()
	tmpl.Labels = maps.Clone(tmpl.Labels)
	delete(tmpl.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": d.ResourceVersion},
		{"op": "replace", "path": "/spec/template", "value": tmpl},
	})
	if err != nil {
		return nil, err
	}
	if _, err := c.Client.AppsV1().Deployments(ref.Namespace).Patch(ctx, ref.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: "vigil"}); err != nil {
		return nil, err
	}
	return map[string]any{"from_revision": current, "to_revision": revisionOf(target.ObjectMeta),
		"images": images(tmpl.Spec), "note": "the deployment gets a new revision number for the restored template"}, nil
}
