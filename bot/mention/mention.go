// Package mention resolves the resources a chat message names: @mentions
// exactly, and names written without @ by fuzzy recognition, over the
// inventory and a live provider (Kubernetes discovery). It implements the
// bot's Resolver and TextResolver ports.
package mention

import (
	"sync"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/textmatch"
	"github.com/vigilops/vigil/tools/inventory"
)

// Resolver answers the bot's mention lookups: @names exactly, from the
// static inventory and then from a live provider (Kubernetes objects) when
// there is one; and names written without @ by fuzzy recognition over every
// resource's name and aliases, whatever its kind.
type Resolver struct {
	inv  *inventory.Inventory
	rec  *textmatch.Recognizer
	live bot.Resolver
	// liveRec is the recogniser over the live provider's resources, built
	// again only when the provider's resources change.
	liveRec *liveRecognizer
}

var (
	_ bot.Resolver     = Resolver{}
	_ bot.TextResolver = Resolver{}
)

// liveResources is what a live provider offers fuzzy recognition: its
// current resources and a number that changes whenever they do. A live
// provider without this method answers @mentions only.
type liveResources interface {
	bot.Resolver
	Resources() (gen uint64, rs []policy.Resource)
}

// liveRecognizer caches the recogniser over a live provider's resources.
type liveRecognizer struct {
	mu  sync.Mutex
	gen uint64
	rec *textmatch.Recognizer
}

// New is the resolver over inv; live, which may be nil, is asked for the
// @names inv does not hold, and recognised in text too when it lists its
// resources (Resources() (gen uint64, rs []policy.Resource)).
func New(inv *inventory.Inventory, live bot.Resolver) Resolver {
	var cands []textmatch.Candidate
	for _, r := range inv.All() {
		cands = append(cands, textmatch.Candidate{ID: string(r.ID), Names: append([]string{r.Name}, r.Aliases...)})
	}
	return Resolver{inv: inv, rec: textmatch.NewRecognizer(cands), live: live, liveRec: &liveRecognizer{}}
}

// ResolveMention implements bot.Resolver: the routing chain of the
// resource an @name names.
func (r Resolver) ResolveMention(name string) ([]policy.Resource, bool) {
	res, ok := r.inv.Lookup(name)
	if !ok {
		if r.live != nil {
			return r.live.ResolveMention(name)
		}
		return nil, false
	}
	return r.chain(res), true
}

func (r Resolver) chain(res inventory.Resource) []policy.Resource {
	chain := r.inv.RoutingChain(res.ID)
	out := make([]policy.Resource, 0, len(chain))
	for _, c := range chain {
		out = append(out, c.ToPolicy())
	}
	if len(out) == 0 {
		out = append(out, res.ToPolicy())
	}
	return out
}

// RecognizeMentions implements bot.TextResolver.
func (r Resolver) RecognizeMentions(text string) []bot.Recognized {
	var out []bot.Recognized
	for _, m := range r.rec.Recognize(text, textmatch.DefaultThreshold) {
		rc := bot.Recognized{Text: m.Text, Confidence: m.Confidence, Ambiguous: m.Ambiguous}
		for _, id := range m.IDs {
			if res, ok := r.inv.Get(policy.ResourceID(id)); ok {
				rc.Chains = append(rc.Chains, r.chain(res))
			}
		}
		if len(rc.Chains) > 0 {
			out = append(out, rc)
		}
	}
	return append(out, r.recognizeLive(text)...)
}

// recognizeLive recognises the live provider's resources (Kubernetes
// objects) in text; the chain of each is what an @mention of its ID gives.
func (r Resolver) recognizeLive(text string) []bot.Recognized {
	lr, ok := r.live.(liveResources)
	if !ok || r.liveRec == nil {
		return nil
	}
	rec := r.liveRec.current(lr)
	var out []bot.Recognized
	for _, m := range rec.Recognize(text, textmatch.DefaultThreshold) {
		rc := bot.Recognized{Text: m.Text, Confidence: m.Confidence, Ambiguous: m.Ambiguous}
		for _, id := range m.IDs {
			if chain, ok := lr.ResolveMention(id); ok {
				rc.Chains = append(rc.Chains, chain)
			}
		}
		if len(rc.Chains) > 0 {
			out = append(out, rc)
		}
	}
	return out
}

// current returns the recogniser for the provider's resources as they are
// now, building it again when they changed.
func (l *liveRecognizer) current(lr liveResources) *textmatch.Recognizer {
	l.mu.Lock()
	defer l.mu.Unlock()
	gen, rs := lr.Resources()
	if l.rec != nil && gen == l.gen {
		return l.rec
	}
	cands := make([]textmatch.Candidate, 0, len(rs))
	for _, res := range rs {
		cands = append(cands, textmatch.Candidate{ID: string(res.ID), Names: append([]string{res.Name}, res.Aliases...)})
	}
	l.gen, l.rec = gen, textmatch.NewRecognizer(cands)
	return l.rec
}

var _ policy.ScopeResolver = Resolver{}

// Reaches implements policy.ScopeResolver: what target names, for channel
// scopes. An inventory resource comes with what it runs inside; a live
// resource (a Kubernetes object) is placed by its cluster and namespace.
func (r Resolver) Reaches(target string) ([]policy.Reach, bool) {
	if rs, ok := r.inv.ScopeReaches(target); ok {
		return rs, true
	}
	if kr, ok := policy.KubeReach(policy.ResourceID(target)); ok {
		return []policy.Reach{kr}, true
	}
	if r.live == nil {
		return nil, false
	}
	chain, ok := r.live.ResolveMention(target)
	if !ok || len(chain) == 0 {
		return nil, false
	}
	kr, ok := policy.KubeReach(chain[0].ID)
	if !ok {
		return nil, false
	}
	return []policy.Reach{kr}, true
}
