package slack_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/audit"
)

// TestEndToEndKubeActsAsThePerson: with an identity mapping, Alice's
// reads reach the API server impersonating her Kubernetes identity, the
// change she asks for runs with the identity of Bob, who approves it
// (mapped through his Slack user group), the card and the thread say whose
// permissions are used, and the audit trail names both identities.
func TestEndToEndKubeActsAsThePerson(t *testing.T) {
	api := kubeapi.Start(t)
	kubeconfig := api.Kubeconfig(t)
	e := startE2E(t, slack.ModeSocket, func(o *testkit.Options) {
		o.Configure = func(c *config.Config) {
			c.Kubernetes.Clusters = []config.KubeCluster{{Name: "prod", Kubeconfig: kubeconfig, Context: "vigil", Namespaces: []string{"shop"}}}
			c.Identities = policy.Identities{Unmapped: policy.UnmappedRefuse, Rules: []policy.IdentityRule{
				{Name: "alice", Match: []string{e2eAlice}, Targets: policy.Targets{Kube: policy.KubeIdentity{User: "alice@example.org", Groups: []string{"sre"}}}},
				{Name: "oncall", Match: []string{"usergroup:S0ONCALL"}, Targets: policy.Targets{Kube: policy.KubeIdentity{User: "oncall", Groups: []string{"oncall", "shop-admins"}}}},
			}}
		}
	})
	get := modeltest.Call("kube", testkit.Args("action", "get", "namespace", "shop", "kind", "deployment", "name", "checkout"))
	e.model.Script(
		modeltest.Calls(get),
		modeltest.Calls(modeltest.Call("kube", testkit.Args("action", "rollout_restart", "namespace", "shop", "kind", "deployment", "name", "checkout"))),
		modeltest.Calls(get),
		modeltest.Text("Restarted checkout."),
	)
	e.event("EvKubeAs", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> restart checkout in shop", e2eRoot, ""), false)

	card := e.waitPost("the approval card", "Approval needed")
	if !strings.Contains(card.Text(), "runs as") || !strings.Contains(card.Text(), "approver's own mapped identity") {
		t.Errorf("the card does not say whose permissions the change uses:\n%s", card.Text())
	}
	var approve string
	for _, b := range card.Buttons() {
		if b.ActionID == "vigil_approve" {
			approve = b.Value
		}
	}
	e.idle()
	for _, r := range api.Writes() {
		t.Fatalf("a write reached the API server before approval: %s %s", r.Method, r.Path)
	}
	e.click(e2eBob, "vigil_approve", approve, card.TS, "1700005020.000001")
	e.waitPost("whose identity the change uses", "k8s user oncall, groups oncall, shop-admins")
	e.waitPost("the final answer", "Restarted checkout.")
	e.idle()

	var reads, patches int
	for _, r := range api.Requests() {
		user, groups := r.Header.Get("Impersonate-User"), r.Header.Values("Impersonate-Group")
		switch {
		case r.Method == http.MethodPatch:
			patches++
			if user != "oncall" || !slices.Equal(groups, []string{"oncall", "shop-admins"}) {
				t.Errorf("the approved change impersonated %q %q, want the approver's oncall [oncall shop-admins]", user, groups)
			}
		case r.Path == "/apis/apps/v1/namespaces/shop/deployments/checkout" && user == "alice@example.org":
			reads++
			if !slices.Equal(groups, []string{"sre"}) {
				t.Errorf("alice's read impersonated groups %q", groups)
			}
		case user != "" && user != "oncall":
			t.Errorf("%s %s impersonated %q", r.Method, r.Path, user)
		}
	}
	if patches != 1 || reads < 2 {
		t.Fatalf("%d PATCHes and %d reads as alice, want 1 and 2", patches, reads)
	}

	recs, err := e.st.Stores.Audit.RecentAudit(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var read, executed bool
	for _, r := range recs {
		if r.Tool != "kube" {
			continue
		}
		switch {
		case r.Action == audit.Executed && r.ApprovalID != "":
			executed = r.Actor == e2eAlice && r.Identity == e2eBob && r.ActedAs == "k8s user oncall, groups oncall, shop-admins"
			if !executed {
				t.Errorf("executed record = %+v", r)
			}
		case r.Action == audit.Allow && r.Identity == e2eAlice && r.ActedAs == "k8s user alice@example.org, groups sre":
			read = true
		}
	}
	if !read || !executed {
		t.Fatalf("audit records lack the identities (read %v, executed %v): %+v", read, executed, recs)
	}

	// Mallory has no mapping and unmapped is refuse: her read is refused
	// before it reaches the cluster, and the refusal names why.
	before := len(api.Requests())
	e.model.Script(modeltest.Calls(get), modeltest.Text("I cannot read the cluster for you."))
	e.event("EvKubeMallory", slackfake.AppMention(e2eChan, e2eMallet, "<@U0VIGIL> how is checkout?", "1700005030.000100", ""), false)
	e.waitPost("the answer to mallory", "I cannot read the cluster for you.")
	e.idle()
	if n := len(api.Requests()) - before; n != 0 {
		t.Fatalf("mallory's refused read sent %d requests", n)
	}
	recs, err = e.st.Stores.Audit.RecentAudit(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, r := range recs {
		refused = refused || (r.Actor == e2eMallet && r.Tool == "kube" && strings.Contains(r.Reason, e2eMallet+" has no Kubernetes identity") &&
			strings.Contains(r.Reason, "identities.unmapped is refuse"))
	}
	if !refused {
		t.Fatalf("no audit record of mallory's refused read naming the reason: %+v", recs)
	}
}
