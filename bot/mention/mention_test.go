package mention

import (
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

// fakeLive is a live provider (as Kubernetes discovery is) whose
// resources a test can change.
type fakeLive struct {
	gen   uint64
	rs    []policy.Resource
	calls int
}

func (f *fakeLive) ResolveMention(name string) ([]policy.Resource, bool) {
	for _, r := range f.rs {
		if string(r.ID) == name || r.Name == name {
			return []policy.Resource{r}, true
		}
	}
	return nil, false
}

func (f *fakeLive) Resources() (uint64, []policy.Resource) {
	f.calls++
	return f.gen, f.rs
}

// Names written without @ are recognised among live objects too
// (Kubernetes deployments), and the recogniser follows their changes.
func TestRecognizeLiveObjectsWithoutAt(t *testing.T) {
	live := &fakeLive{gen: 1, rs: []policy.Resource{
		{ID: "k8s_deployment:prod:shop/checkout", Name: "checkout", Kind: "k8s_deployment", Aliases: []string{"shop.checkout"}},
	}}
	r := New(inventory.Default(), live)

	got := r.RecognizeMentions("why is checkout slow since the deploy?")
	if len(got) != 1 || len(got[0].Chains) != 1 || got[0].Chains[0][0].ID != "k8s_deployment:prod:shop/checkout" || got[0].Ambiguous {
		t.Fatalf("recognised %+v; want the checkout deployment", got)
	}
	if got := r.RecognizeMentions("why is the cart service slow?"); len(got) != 0 {
		t.Fatalf("recognised %+v in a question naming no known object", got)
	}

	// A refresh that adds an object is seen; one that does not change the
	// generation reuses the recogniser.
	live.rs = append(live.rs, policy.Resource{ID: "k8s_deployment:prod:shop/cart", Name: "cart", Kind: "k8s_deployment"})
	if got := r.RecognizeMentions("why is the cart service slow?"); len(got) != 0 {
		t.Fatalf("a change without a new generation was seen: %+v", got)
	}
	live.gen = 2
	got = r.RecognizeMentions("why is the cart service slow?")
	if len(got) != 1 || got[0].Chains[0][0].ID != "k8s_deployment:prod:shop/cart" {
		t.Fatalf("after a refresh recognised %+v; want the cart deployment", got)
	}

	// The static inventory is still recognised beside the live objects.
	if got := r.RecognizeMentions("is localhost out of disk?"); len(got) != 1 || got[0].Chains[0][0].ID != "node:localhost" {
		t.Fatalf("recognised %+v; want localhost from the inventory", got)
	}
}
