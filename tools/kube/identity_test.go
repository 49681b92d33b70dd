package kube

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// identities is the mapping the impersonation tests act under: alice (a
// Slack user) and the Matrix room's moderators are mapped, nobody else.
var identities = &policy.Identities{
	Unmapped: policy.UnmappedRefuse,
	Rules: []policy.IdentityRule{
		{Name: "alice", Match: []string{"U0ALICE"}, Targets: policy.Targets{
			Kube: policy.KubeIdentity{User: "alice@example.org", Groups: []string{"sre", "oncall"}}}},
		{Name: "moderators", Match: []string{"power_level:50"}, Targets: policy.Targets{
			Kube: policy.KubeIdentity{User: "matrix-mods", Groups: []string{"shop-admins"}}}},
	},
}

// impersonation returns what a request asked to be authorised as.
func impersonation(r kubeapi.Request) (user string, groups []string) {
	return r.Header.Get("Impersonate-User"), r.Header.Values("Impersonate-Group")
}

// TestImpersonationAgainstAPIServer runs the kube tool with identity
// mapping against the stand-in API server: a read carries the asking
// person's identity in Impersonate-User and one Impersonate-Group header
// per group, an approved change the approver's, an unmapped person is
// refused before any request, and without mapping nothing is
// impersonated.
func TestImpersonationAgainstAPIServer(t *testing.T) {
	s := kubeapi.Start(t)
	c, err := Connect(ClusterConfig{Name: "prod", Kubeconfig: s.Kubeconfig(t), Context: "vigil", Namespaces: []string{"shop"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tool := New([]*Cluster{c}, nil, WithIdentities(identities))
	power := 50
	asker := identities.Resolve(policy.Subject{User: "U0ALICE"}, "slack:C1")
	approver := identities.Resolve(policy.Subject{User: "@mod:example.org", PowerLevel: &power}, "matrix:!ops:example.org")
	stranger := identities.Resolve(policy.Subject{User: "U0MALLORY"}, "slack:C1")

	run := func(t *testing.T, args string, actor *policy.Actor) (tools.Result, []kubeapi.Request) {
		t.Helper()
		before := len(s.Requests())
		p, b := tool.Propose(json.RawMessage(args))
		if b != nil {
			t.Fatalf("propose %s: %+v", args, b)
		}
		p.Actor = actor
		res := tool.Execute(context.Background(), p)
		return res, s.Requests()[before:]
	}

	t.Run("a read acts as the asker", func(t *testing.T) {
		res, reqs := run(t, `{"action":"get","namespace":"shop","kind":"deployment","name":"checkout"}`, asker)
		if !res.Envelope.OK || len(reqs) == 0 {
			t.Fatalf("read = %s, %d requests", res.Envelope.JSON(), len(reqs))
		}
		for _, r := range reqs {
			u, g := impersonation(r)
			if u != "alice@example.org" || !slices.Equal(g, []string{"sre", "oncall"}) {
				t.Fatalf("%s %s impersonated user %q groups %q, want alice@example.org [sre oncall]", r.Method, r.Path, u, g)
			}
			if r.Header.Get("Authorization") != "Bearer "+kubeapi.Token {
				t.Fatalf("vigil's own credentials were not sent: %q", r.Header.Get("Authorization"))
			}
		}
		if res.ActedAs != "k8s user alice@example.org, groups sre, oncall" {
			t.Fatalf("ActedAs = %q", res.ActedAs)
		}
	})

	t.Run("an approved change acts as the approver", func(t *testing.T) {
		res, reqs := run(t, `{"action":"rollout_restart","namespace":"shop","kind":"deployment","name":"checkout"}`, approver)
		if !res.Envelope.OK {
			t.Fatalf("restart = %s", res.Envelope.JSON())
		}
		var patched bool
		for _, r := range reqs {
			u, g := impersonation(r)
			if u != "matrix-mods" || !slices.Equal(g, []string{"shop-admins"}) {
				t.Fatalf("%s %s impersonated user %q groups %q, want the approver's matrix-mods [shop-admins]", r.Method, r.Path, u, g)
			}
			patched = patched || r.Method == http.MethodPatch
		}
		if !patched {
			t.Fatalf("no PATCH was sent: %+v", reqs)
		}
	})

	t.Run("an unmapped person is refused before any request", func(t *testing.T) {
		res, reqs := run(t, `{"action":"list","namespace":"shop","kind":"pod"}`, stranger)
		if res.Envelope.OK || res.Envelope.Error.Code != policy.CodeActionNotAllowed {
			t.Fatalf("unmapped read = %s", res.Envelope.JSON())
		}
		msg := res.Envelope.Error.Message
		for _, want := range []string{"U0MALLORY has no Kubernetes identity", "identities.unmapped is refuse"} {
			if !strings.Contains(msg, want) {
				t.Errorf("refusal %q does not say %q", msg, want)
			}
		}
		if len(reqs) != 0 {
			t.Fatalf("the refused call still sent %d requests", len(reqs))
		}
	})

	t.Run("the card says whose permissions a change uses", func(t *testing.T) {
		p, b := tool.Propose(json.RawMessage(`{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":2}`))
		if b != nil {
			t.Fatal(b)
		}
		last := p.Details[len(p.Details)-1]
		if last.Label != "runs as" || !strings.Contains(last.Value, "approver's own mapped identity") || !strings.Contains(last.Value, "unmapped approver is refused") {
			t.Fatalf("card lines = %+v", p.Details)
		}
	})

	t.Run("without mapping vigil acts as itself", func(t *testing.T) {
		plain := New([]*Cluster{c}, nil)
		before := len(s.Requests())
		res := call(t, plain, `{"action":"list","namespace":"shop","kind":"deployment"}`)
		if !res.Envelope.OK || res.ActedAs != "" {
			t.Fatalf("plain read = %s, acted as %q", res.Envelope.JSON(), res.ActedAs)
		}
		for _, r := range s.Requests()[before:] {
			if u, g := impersonation(r); u != "" || len(g) != 0 {
				t.Fatalf("impersonated %q %q without a mapping", u, g)
			}
		}
		p, _ := plain.Propose(json.RawMessage(`{"action":"scale","namespace":"shop","kind":"deployment","name":"checkout","replicas":2}`))
		for _, d := range p.Details {
			if d.Label == "runs as" {
				t.Fatalf("a card line about identities without a mapping: %+v", d)
			}
		}
	})

	t.Run("a cluster built from a client cannot impersonate", func(t *testing.T) {
		bare := New([]*Cluster{{Name: "prod", Client: c.Client, Namespaces: []string{"shop"}}}, nil)
		p, _ := bare.Propose(json.RawMessage(`{"action":"list","namespace":"shop","kind":"deployment"}`))
		p.Actor = asker
		res := bare.Execute(context.Background(), p)
		if res.Envelope.OK || !strings.Contains(res.Envelope.Error.Message, "cannot act as") {
			t.Fatalf("bare cluster = %s", res.Envelope.JSON())
		}
	})

	t.Run("the changes timeline reads as the asker too", func(t *testing.T) {
		ch := NewChanges([]*Cluster{c}, nil)
		before := len(s.Requests())
		if _, err := ch.Timeline(context.Background(), "k8s_deployment:prod:shop/checkout", time.Time{}, asker); err != nil {
			t.Fatal(err)
		}
		reqs := s.Requests()[before:]
		if len(reqs) == 0 {
			t.Fatal("the timeline sent no requests")
		}
		for _, r := range reqs {
			if u, g := impersonation(r); u != "alice@example.org" || !slices.Equal(g, []string{"sre", "oncall"}) {
				t.Fatalf("%s %s impersonated %q %q", r.Method, r.Path, u, g)
			}
		}
		before = len(s.Requests())
		if _, err := ch.Timeline(context.Background(), "k8s_deployment:prod:shop/checkout", time.Time{}, stranger); !errors.Is(err, policy.ErrNoIdentity) {
			t.Fatalf("unmapped timeline: %v", err)
		}
		if n := len(s.Requests()) - before; n != 0 {
			t.Fatalf("the refused timeline sent %d requests", n)
		}
	})

	if err := stranger.KubeRefusal(); !errors.Is(err, policy.ErrNoIdentity) {
		t.Fatalf("KubeRefusal = %v", err)
	}
}

// A channel's scope narrows a cluster's namespaces; the narrowed cluster
// acting as someone keeps the narrowed allowlist even when the full
// cluster already made a client for the same person (the views are not
// shared), and the full cluster's view keeps the full allowlist.
func TestNarrowedClusterKeepsItsAllowlistWhenActingAs(t *testing.T) {
	s := kubeapi.Start(t)
	full, err := Connect(ClusterConfig{Name: "prod", Kubeconfig: s.Kubeconfig(t), Context: "vigil",
		Namespaces: []string{"shop", "payments"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	alice := policy.KubeIdentity{User: "alice@example.org", Groups: []string{"sre"}}
	fv, err := full.actingAs(alice)
	if err != nil {
		t.Fatal(err)
	}
	narrow := full.Narrowed([]string{"shop"})
	nv, err := narrow.actingAs(alice)
	if err != nil {
		t.Fatal(err)
	}
	if nv.allows("payments") || !nv.allows("shop") {
		t.Errorf("the narrowed cluster's view allows %v, want only shop", nv.Namespaces)
	}
	if !fv.allows("payments") {
		t.Errorf("the full cluster's view lost payments: %v", fv.Namespaces)
	}
	again, _ := full.actingAs(alice)
	if !again.allows("payments") || again == nv {
		t.Error("the full cluster's cached view was replaced by the narrowed one")
	}
}
