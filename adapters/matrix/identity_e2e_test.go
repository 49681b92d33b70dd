package matrix_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
)

// TestE2EKubeActsByPowerLevel: on a real Dendrite, identity rules match
// room power levels: alice (power level 0) reads as the room's members,
// and the scale the moderator (50) approves with a reaction reaches the
// API server impersonating the moderators' Kubernetes identity.
func TestE2EKubeActsByPowerLevel(t *testing.T) {
	api := kubeapi.Start(t)
	kubeCall := func(kv ...any) modeltest.ToolCall { return modeltest.Call("kube", testkit.Args(kv...)) }
	x := startE2E(t, func(string) []modeltest.Step {
		return []modeltest.Step{
			modeltest.Calls(kubeCall("action", "get", "namespace", "shop", "kind", "deployment", "name", "checkout")),
			modeltest.Calls(kubeCall("action", "scale", "namespace", "shop", "kind", "deployment", "name", "checkout", "replicas", 5)),
			modeltest.Calls(kubeCall("action", "get", "namespace", "shop", "kind", "deployment", "name", "checkout")),
			modeltest.Text("Scaled checkout to 5 replicas."),
		}
	}, func(o *testkit.Options) {
		o.Configure = func(c *config.Config) {
			c.Kubernetes.Clusters = []config.KubeCluster{{Name: "prod", Kubeconfig: api.Kubeconfig(t), Context: "vigil", Namespaces: []string{"shop"}}}
			c.Identities = policy.Identities{Rules: []policy.IdentityRule{
				{Name: "moderators", Match: []string{"power_level:50"}, Targets: policy.Targets{Kube: policy.KubeIdentity{User: "matrix-mods", Groups: []string{"shop-admins"}}}},
				{Name: "members", Match: []string{"power_level:0"}, Targets: policy.Targets{Kube: policy.KubeIdentity{User: "room-member", Groups: []string{"view"}}}},
			}}
		}
	})
	root := x.h.Say(x.h.Alice(), x.h.Mention("scale @checkout to 5 replicas"))
	card, _ := x.card(t, root)
	if body := card.Content.AsMessage().Body; !strings.Contains(body, "runs as: the approver's own mapped identity") {
		t.Errorf("the card does not say whose permissions the change uses:\n%s", body)
	}
	x.idle(t)
	x.h.React(x.h.Mod(), card.ID, "✅")
	x.waitEdit(t, card.ID, "approved")
	x.h.WaitBotMessage("the final answer", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "Scaled checkout to 5 replicas.")
	})
	x.idle(t)

	var reads, writes int
	for _, r := range api.Requests() {
		user, groups := r.Header.Get("Impersonate-User"), r.Header.Values("Impersonate-Group")
		switch {
		case r.Method == http.MethodPut:
			writes++
			if user != "matrix-mods" || !slices.Equal(groups, []string{"shop-admins"}) {
				t.Errorf("the approved scale impersonated %q %q, want matrix-mods [shop-admins]", user, groups)
			}
		case r.Path == "/apis/apps/v1/namespaces/shop/deployments/checkout" && r.Method == http.MethodGet && user != "":
			reads++
			if user != "room-member" || !slices.Equal(groups, []string{"view"}) {
				t.Errorf("alice's read impersonated %q %q, want room-member [view]", user, groups)
			}
		}
	}
	if writes != 1 || reads < 2 {
		t.Fatalf("%d scale writes and %d impersonated reads, want 1 and at least 2", writes, reads)
	}
}
