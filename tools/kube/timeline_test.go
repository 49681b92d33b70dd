package kube

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/tools/changes"
)

func TestChangesOfADeployment(t *testing.T) {
	c, _ := fakeCluster(t)
	d := NewDiscovery([]*Cluster{c}, nil)
	d.Refresh(context.Background())
	src := NewChanges([]*Cluster{c}, d)
	tool := changes.New(changes.Config{Kube: src, Now: func() time.Time { return now }})

	p, b := tool.Propose(json.RawMessage(`{"target":"checkout"}`))
	if b != nil {
		t.Fatal(b)
	}
	if p.Command != "" || p.Target != "checkout" {
		t.Fatalf("a Kubernetes target runs no command: %+v", p)
	}
	r := tool.Execute(context.Background(), p)
	if !r.Envelope.OK || len(r.Resolved) != 1 || r.Resolved[0].ID != "k8s_deployment:prod:shop/checkout" {
		t.Fatalf("result = %s %+v", r.Envelope.JSON(), r.Resolved)
	}
	raw, _ := json.Marshal(r.Envelope.Data)
	var data struct{ Events []changes.Event }
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range data.Events {
		got = append(got, e.Kind+" "+e.Subject+": "+e.Detail)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"restart pod/shop/checkout-7d9f-abcde: container app restarted after OOMKilled (exit 137); 5 restarts in all",
		"warning pod/checkout-7d9f-abcde: BackOff: Back-off restarting failed container app (14 times)",
		"rollout deployment/shop/checkout: revision 3 rolled out: app=shop/checkout:v3 (deploy v3)",
		"event deployment/checkout: ScalingReplicaSet",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("timeline lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "revision 2") || strings.Contains(all, "Pulled") {
		t.Errorf("the timeline holds what is outside the window or not a warning:\n%s", all)
	}
	if data.Events[0].Kind != "restart" {
		t.Errorf("newest first: %s", all)
	}

	// Nodes: condition changes; IDs resolve before discovery has seen them.
	p, b = tool.Propose(json.RawMessage(`{"target":"k8s_node:prod:node-2","since":"1h"}`))
	if b != nil {
		t.Fatal(b)
	}
	if out := tool.Execute(context.Background(), p).Output; !strings.Contains(out, "MemoryPressure became True") || !strings.Contains(out, "Ready became False") {
		t.Fatalf("node timeline = %s", out)
	}
	if _, b := tool.Propose(json.RawMessage(`{"target":"k8s_node:staging:node-2"}`)); b == nil {
		t.Fatal("an object in an unknown cluster resolved")
	}
}
