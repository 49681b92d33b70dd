package matrix_test

import (
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/kubeapi"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// TestE2EKubeScaleApprovedByReaction: @checkout resolves to a deployment
// on the stand-in API server; scaling it is a write whose card shows the
// cluster, namespace, object and change, and only the moderator's ✅ sends
// the scale request.
func TestE2EKubeScaleApprovedByReaction(t *testing.T) {
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
		}
	})
	root := x.h.Say(x.h.Alice(), x.h.Mention("scale @checkout to 5 replicas"))
	card, approvalID := x.card(t, root)
	body := card.Content.AsMessage().Body
	for _, want := range []string{"- cluster: prod", "- namespace: shop", "- object: deployment/checkout", "- change: set replicas to 5",
		"k8s_deployment:prod:shop/checkout", "!approve " + approvalID} {
		if !strings.Contains(body, want) {
			t.Fatalf("card lacks %q:\n%s", want, body)
		}
	}
	x.idle(t)
	if w := api.Writes(); len(w) != 0 {
		t.Fatalf("the cluster was changed before approval: %+v", w)
	}
	x.h.React(x.h.Mod(), card.ID, "✅")
	x.waitEdit(t, card.ID, "approved")
	x.h.WaitBotMessage("the final answer", func(e *event.Event) bool {
		return inThread(e, root) && strings.Contains(e.Content.AsMessage().Body, "Scaled checkout to 5 replicas.")
	})
	x.idle(t)
	w := api.Writes()
	if len(w) != 1 || w[0].Method != "PUT" || w[0].Path != "/apis/apps/v1/namespaces/shop/deployments/checkout/scale" {
		t.Fatalf("writes = %+v, want one scale PUT", w)
	}
}
