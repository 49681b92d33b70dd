package kube

import (
	"regexp"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vigilops/vigil/tools"
)

// Action is the kube tool's action.
type Action string

const (
	ActionGet            Action = "get"
	ActionList           Action = "list"
	ActionDescribe       Action = "describe"
	ActionLogs           Action = "logs"
	ActionEvents         Action = "events"
	ActionRolloutHistory Action = "rollout_history"
	ActionTop            Action = "top"
	ActionRolloutRestart Action = "rollout_restart"
	ActionScale          Action = "scale"
	ActionDeletePod      Action = "delete_pod"
	ActionCordon         Action = "cordon"
	ActionUncordon       Action = "uncordon"
	ActionRolloutUndo    Action = "rollout_undo"
)

// EnumValues implements the tools package's closed-set argument contract.
func (Action) EnumValues() []string {
	return []string{"get", "list", "describe", "logs", "events", "rollout_history", "top",
		"rollout_restart", "scale", "delete_pod", "cordon", "uncordon", "rollout_undo"}
}

// writes are the actions that change the cluster.
var writes = map[Action]bool{
	ActionRolloutRestart: true, ActionScale: true, ActionDeletePod: true,
	ActionCordon: true, ActionUncordon: true, ActionRolloutUndo: true,
}

// Kind is the kind of object an action is about. Secrets are not a kind
// the tool knows: their values are never read.
type Kind string

const (
	KindPod         Kind = "pod"
	KindDeployment  Kind = "deployment"
	KindStatefulSet Kind = "statefulset"
	KindDaemonSet   Kind = "daemonset"
	KindService     Kind = "service"
	KindNode        Kind = "node"
	KindEvent       Kind = "event"
	KindConfigMap   Kind = "configmap"
)

// EnumValues implements the tools package's closed-set argument contract.
func (Kind) EnumValues() []string {
	return []string{"pod", "deployment", "statefulset", "daemonset", "service", "node", "event", "configmap"}
}

// namespaced reports whether objects of the kind live in a namespace.
func (k Kind) namespaced() bool { return k != KindNode }

// Limits of the kube tool.
const (
	defaultTail = 100
	maxTail     = 2000
	maxReplicas = 1000
	// maxShown is how many objects a list or events call shows.
	maxShown = 100
	// maxLogBytes is the most log text asked of the API server and the
	// most kept (the end of it).
	maxLogBytes  = 256 * 1024
	keptLogBytes = 24 * 1024
)

// Args are the kube tool's arguments (names fixed by the tool contract).
type Args struct {
	Action    Action `json:"action" jsonschema:"reads: get (one object, summarised), list (objects of a kind), describe (an object with its conditions, restarts, last termination reasons and recent events), logs (a pod's recent log lines; for a deployment, statefulset or daemonset, its pod with the most restarts), events (recent events, warnings first), rollout_history (revisions of a deployment, statefulset or daemonset), top (CPU and memory of pods or nodes from metrics-server). Changes, which need approval: rollout_restart, scale (replicas), delete_pod, cordon, uncordon (a node), rollout_undo (a deployment, to revision or the previous one)."`
	Cluster   string `json:"cluster,omitempty" jsonschema:"which configured cluster; may be left out when only one is configured"`
	Namespace string `json:"namespace,omitempty" jsonschema:"the namespace of the object; for list, events and top, leave it out to cover every allowed namespace"`
	Kind      Kind   `json:"kind,omitempty" jsonschema:"the kind of object; secrets are never read and configmaps are shown by name only"`
	Name      string `json:"name,omitempty" jsonschema:"the object's name"`
	Container string `json:"container,omitempty" jsonschema:"logs: the container (default: the pod's first)"`
	Tail      int    `json:"tail,omitempty" jsonschema:"logs: how many of the last lines (default 100, at most 2000)"`
	Previous  bool   `json:"previous,omitempty" jsonschema:"logs: the previous container instance's logs (after a crash or restart)"`
	Since     string `json:"since,omitempty" jsonschema:"logs: only lines newer than this, e.g. 15m or 2h; events: only events newer than this"`
	Replicas  *int   `json:"replicas,omitempty" jsonschema:"scale: the number of replicas to set"`
	Revision  int    `json:"revision,omitempty" jsonschema:"rollout_undo: the revision to roll back to (default: the previous one)"`
}

var (
	// dnsSubdomain is an object name; nodes may hold dots.
	dnsSubdomain   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	dnsLabel       = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	clusterPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)
	sincePattern   = regexp.MustCompile(`^([1-9][0-9]{0,5})(s|m|h|d)$`)
)

// parseSince reads 30s, 15m, 2h or 1d.
func parseSince(s string) (time.Duration, bool) {
	m := sincePattern.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return time.Duration(n) * map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]], true
}

// kindsFor lists the kinds each action accepts; the first is the default
// when kind is left out ("" means it must be given).
var kindsFor = map[Action][]Kind{
	ActionGet:            {"", KindPod, KindDeployment, KindStatefulSet, KindDaemonSet, KindService, KindNode, KindConfigMap},
	ActionList:           {"", KindPod, KindDeployment, KindStatefulSet, KindDaemonSet, KindService, KindNode, KindEvent, KindConfigMap},
	ActionDescribe:       {"", KindPod, KindDeployment, KindStatefulSet, KindDaemonSet, KindService, KindNode},
	ActionLogs:           {KindPod, KindDeployment, KindStatefulSet, KindDaemonSet},
	ActionEvents:         {KindEvent, KindPod, KindDeployment, KindStatefulSet, KindDaemonSet, KindService, KindNode},
	ActionRolloutHistory: {KindDeployment, KindStatefulSet, KindDaemonSet},
	ActionTop:            {KindPod, KindNode},
	ActionRolloutRestart: {KindDeployment, KindStatefulSet, KindDaemonSet},
	ActionScale:          {KindDeployment, KindStatefulSet},
	ActionDeletePod:      {KindPod},
	ActionCordon:         {KindNode},
	ActionUncordon:       {KindNode},
	ActionRolloutUndo:    {KindDeployment},
}

// kind is the call's kind: the one given or the action's default.
func (a Args) kind() Kind {
	if a.Kind != "" {
		return a.Kind
	}
	return kindsFor[a.Action][0]
}

// Validate checks what the types cannot.
func (a *Args) Validate() error {
	act := string(a.Action)
	if a.Cluster != "" && !clusterPattern.MatchString(a.Cluster) {
		return tools.FieldErrorf("cluster", "want a configured cluster name such as prod, got %q", a.Cluster)
	}
	if a.Namespace != "" && !dnsLabel.MatchString(a.Namespace) {
		return tools.FieldErrorf("namespace", "want a namespace name such as shop, got %q", a.Namespace)
	}
	if a.Name != "" && !dnsSubdomain.MatchString(a.Name) {
		return tools.FieldErrorf("name", "want an object name such as checkout (lower case letters, digits, - and .), got %q", a.Name)
	}
	if a.Container != "" && !dnsLabel.MatchString(a.Container) {
		return tools.FieldErrorf("container", "want a container name such as app, got %q", a.Container)
	}
	allowed := kindsFor[a.Action]
	k := a.kind()
	if k == "" {
		return tools.FieldErrorf("kind", "required for action %s", act)
	}
	ok := false
	var names []string
	for _, x := range allowed {
		if x == k {
			ok = true
		}
		if x != "" {
			names = append(names, string(x))
		}
	}
	if !ok {
		return tools.FieldErrorf("kind", "action %s takes kind %v, not %s", act, names, k)
	}
	needName := a.Action != ActionList && a.Action != ActionEvents && a.Action != ActionTop
	switch {
	case needName && a.Name == "":
		return tools.FieldErrorf("name", "required for action %s", act)
	case !needName && a.Action != ActionEvents && a.Name != "":
		return tools.NotUsed("name", act, true)
	case a.Action == ActionEvents && k == KindEvent && a.Name != "":
		return tools.FieldErrorf("name", "for events about one object, give its kind (pod, deployment, node, ...) with the name")
	case a.Action == ActionEvents && k != KindEvent && a.Name == "":
		return tools.FieldErrorf("name", "required with kind %s: the object whose events to show (or leave kind out for all events)", k)
	}
	if needName && k.namespaced() && a.Namespace == "" {
		return tools.FieldErrorf("namespace", "required for a %s", k)
	}
	if !k.namespaced() && a.Namespace != "" && a.Action != ActionEvents {
		return tools.FieldErrorf("namespace", "a node has no namespace; leave it out")
	}
	if a.Tail < 0 || a.Tail > maxTail {
		return tools.FieldErrorf("tail", "must be between 1 and %d, got %d", maxTail, a.Tail)
	}
	if a.Since != "" {
		if _, ok := parseSince(a.Since); !ok {
			return tools.FieldErrorf("since", "want a number and a unit s, m, h or d, e.g. 15m; got %q", a.Since)
		}
	}
	if a.Action != ActionLogs {
		for _, f := range []struct {
			name string
			set  bool
		}{{"container", a.Container != ""}, {"tail", a.Tail != 0}, {"previous", a.Previous}} {
			if err := tools.NotUsed(f.name, act, f.set); err != nil {
				return err
			}
		}
		if a.Action != ActionEvents {
			if err := tools.NotUsed("since", act, a.Since != ""); err != nil {
				return err
			}
		}
	}
	if a.Action == ActionScale {
		if a.Replicas == nil {
			return tools.FieldErrorf("replicas", "required for action scale")
		}
		if *a.Replicas < 0 || *a.Replicas > maxReplicas {
			return tools.FieldErrorf("replicas", "must be between 0 and %d, got %d", maxReplicas, *a.Replicas)
		}
	} else if err := tools.NotUsed("replicas", act, a.Replicas != nil); err != nil {
		return err
	}
	if a.Action == ActionRolloutUndo {
		if a.Revision < 0 {
			return tools.FieldErrorf("revision", "must be a positive revision number, got %d", a.Revision)
		}
	} else if err := tools.NotUsed("revision", act, a.Revision != 0); err != nil {
		return err
	}
	return nil
}

// TuneSchema adds the constraints struct tags cannot carry.
func (*Args) TuneSchema(s *jsonschema.Schema) {
	if p := s.Properties["tail"]; p != nil {
		p.Minimum, p.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(maxTail))
	}
	if p := s.Properties["replicas"]; p != nil {
		p.Type, p.Types = "integer", nil
		p.Minimum, p.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(maxReplicas))
	}
	if p := s.Properties["revision"]; p != nil {
		p.Minimum = jsonschema.Ptr(1.0)
	}
	if p := s.Properties["since"]; p != nil {
		p.Pattern = sincePattern.String()
	}
}
