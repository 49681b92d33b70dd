package policy

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestIdentityResolve(t *testing.T) {
	ids := &Identities{
		Unmapped: UnmappedFallback,
		Fallback: Targets{Kube: KubeIdentity{User: "vigil-viewer", Groups: []string{"view"}}},
		Rules: []IdentityRule{
			{Name: "alice-prod", Match: []string{"U0ALICE"}, Channels: []string{"slack:CPROD"},
				Targets: Targets{Kube: KubeIdentity{User: "alice-prod", Groups: []string{"prod-sre"}}}},
			{Name: "alice", Match: []string{"U0ALICE", "@alice:example.org"},
				Targets: Targets{Kube: KubeIdentity{User: "alice"}, SSH: SSHIdentity{User: "alice", KeyFile: "/k/alice"}}},
			{Name: "sre", Match: []string{"usergroup:S0SRE"}, Targets: Targets{SSH: SSHIdentity{User: "sre"}}},
			{Name: "mods", Match: []string{"power_level:50"}, Targets: Targets{Kube: KubeIdentity{User: "mods", Groups: []string{"admins"}}}},
			{Name: "alerts", Match: []string{"alert:alertmanager"}, Targets: Targets{Kube: KubeIdentity{User: "vigil-alerts"}}},
		},
	}
	if err := ids.Validate(); err != nil {
		t.Fatal(err)
	}
	p := func(n int) *int { return &n }
	for _, tc := range []struct {
		name    string
		s       Subject
		channel string
		kube    KubeIdentity
		kubeBy  string
		ssh     string
		sshBy   string
	}{
		{"a channel-bound rule comes first", Subject{User: "U0ALICE"}, "slack:CPROD", KubeIdentity{User: "alice-prod", Groups: []string{"prod-sre"}}, "alice-prod", "alice", "alice"},
		{"elsewhere the next rule", Subject{User: "U0ALICE"}, "slack:CDEV", KubeIdentity{User: "alice"}, "alice", "alice", "alice"},
		{"by Matrix ID", Subject{User: "@alice:example.org"}, "matrix:!r:example.org", KubeIdentity{User: "alice"}, "alice", "alice", "alice"},
		{"by user group, kube from the fallback", Subject{User: "U0BOB", Groups: []string{"usergroup:S0SRE"}}, "slack:CDEV", KubeIdentity{User: "vigil-viewer", Groups: []string{"view"}}, "fallback", "sre", "sre"},
		{"power level at the threshold", Subject{User: "@mod:example.org", PowerLevel: p(50)}, "matrix:!r:example.org", KubeIdentity{User: "mods", Groups: []string{"admins"}}, "mods", "", ""},
		{"power level below it", Subject{User: "@user:example.org", PowerLevel: p(49)}, "matrix:!r:example.org", KubeIdentity{User: "vigil-viewer", Groups: []string{"view"}}, "fallback", "", ""},
		{"an alert investigation from the source", Subject{User: "alert:alertmanager/HighLatency"}, "slack:COPS", KubeIdentity{User: "vigil-alerts"}, "alerts", "", ""},
		{"from another source", Subject{User: "alert:grafana/HighLatency"}, "slack:COPS", KubeIdentity{User: "vigil-viewer", Groups: []string{"view"}}, "fallback", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := ids.Resolve(tc.s, tc.channel)
			if !reflect.DeepEqual(a.Kube, tc.kube) || a.KubeRule != tc.kubeBy || a.SSH.User != tc.ssh || a.SSHRule != tc.sshBy {
				t.Fatalf("Resolve = %+v", a)
			}
			if (tc.ssh == "") != (a.SSHRefusal() != nil) {
				t.Fatalf("SSHRefusal = %v", a.SSHRefusal())
			}
		})
	}

	refuse := &Identities{Rules: ids.Rules}
	a := refuse.Resolve(Subject{User: "U0MALLORY"}, "slack:CDEV")
	err := a.KubeRefusal()
	if !errors.Is(err, ErrNoIdentity) || !strings.Contains(err.Error(), "U0MALLORY has no Kubernetes identity") || !strings.Contains(err.Error(), "unmapped is refuse") {
		t.Fatalf("refusal = %v", err)
	}
	if note := refuse.ApproverNote(); !strings.Contains(note, "unmapped approver is refused") {
		t.Fatalf("note = %q", note)
	}
	if note := ids.ApproverNote(); !strings.Contains(note, "k8s user vigil-viewer, groups view") {
		t.Fatalf("note = %q", note)
	}

	// An Actor survives the session's JSON (a run resumed elsewhere).
	b, _ := json.Marshal(ids.Resolve(Subject{User: "U0ALICE"}, "slack:CPROD"))
	var back Actor
	if err := json.Unmarshal(b, &back); err != nil || back.Kube.User != "alice-prod" || back.SSH.KeyFile != "/k/alice" {
		t.Fatalf("round trip %s = %+v, %v", b, back, err)
	}
	if (*Identities)(nil).Resolve(Subject{User: "U1"}, "x") != nil || (&Identities{}).Resolve(Subject{User: "U1"}, "x") != nil {
		t.Fatal("no mapping must resolve to nil (vigil's own credentials)")
	}
}
