package app

import (
	"errors"
	"fmt"
	"github.com/vigilops/vigil/tools/inventory"
	"log/slog"
	"sync"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/runbook"
	"github.com/vigilops/vigil/textmatch"
)

// inventoryResolver answers the bot's mention lookups: @names exactly,
// from the static inventory and then from live providers (Kubernetes
// objects) when there are any; and names written without @ by fuzzy
// recognition over every resource's name and aliases, whatever its kind.
type inventoryResolver struct {
	inv  *inventory.Inventory
	rec  *textmatch.Recognizer
	live mentionSource
	// liveRec is the recogniser over the live provider's resources, built
	// again only when the provider's resources change.
	liveRec *liveRecognizer
}

var (
	_ bot.Resolver     = inventoryResolver{}
	_ bot.TextResolver = inventoryResolver{}
)

// liveResources is what a live provider offers fuzzy recognition: its
// current resources and a number that changes whenever they do.
type liveResources interface {
	mentionSource
	Resources() (gen uint64, rs []policy.Resource)
}

// liveRecognizer caches the recogniser over a live provider's resources.
type liveRecognizer struct {
	mu   sync.Mutex
	gen  uint64
	rec  *textmatch.Recognizer
	byID map[string]policy.Resource
}

func newInventoryResolver(inv *inventory.Inventory, live mentionSource) inventoryResolver {
	var cands []textmatch.Candidate
	for _, r := range inv.All() {
		cands = append(cands, textmatch.Candidate{ID: string(r.ID), Names: append([]string{r.Name}, r.Aliases...)})
	}
	return inventoryResolver{inv: inv, rec: textmatch.NewRecognizer(cands), live: live, liveRec: &liveRecognizer{}}
}

func (r inventoryResolver) ResolveMention(name string) ([]policy.Resource, bool) {
	res, ok := r.inv.Lookup(name)
	if !ok {
		if r.live != nil {
			return r.live.ResolveMention(name)
		}
		return nil, false
	}
	return r.chain(res), true
}

func (r inventoryResolver) chain(res inventory.Resource) []policy.Resource {
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
func (r inventoryResolver) RecognizeMentions(text string) []bot.Recognized {
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
func (r inventoryResolver) recognizeLive(text string) []bot.Recognized {
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

// runbookLibrary is the runbook directory as the bot uses it.
type runbookLibrary struct {
	lib *runbook.Library
	now func() time.Time
}

var (
	_ bot.Runbooks      = runbookLibrary{}
	_ bot.AlertRunbooks = runbookLibrary{}
)

// openRunbooks opens knowledge.runbooks_dir; nil when none is configured.
func openRunbooks(c config.Knowledge, clock func() time.Time, log *slog.Logger) (bot.Runbooks, error) {
	if c.RunbooksDir == "" {
		return nil, nil
	}
	lib, err := runbook.Open(c.RunbooksDir, log)
	if err != nil {
		return nil, fmt.Errorf("config: knowledge.runbooks_dir: %w", err)
	}
	if clock == nil {
		clock = time.Now
	}
	return runbookLibrary{lib: lib, now: clock}, nil
}

func (r runbookLibrary) Offer(question string, resources []string) (string, error) {
	ms, err := r.lib.ForQuestion(question, resources, runbook.DefaultLimit)
	if err != nil {
		return "", err
	}
	return r.lib.Offer(ms), nil
}

// OfferForAlert implements bot.AlertRunbooks with
// runbook.Library.ForAlert.
func (r runbookLibrary) OfferForAlert(labels map[string]string, runbookURL string) (string, error) {
	ms, err := r.lib.ForAlert(labels, runbookURL, runbook.DefaultLimit)
	if err != nil {
		return "", err
	}
	return r.lib.Offer(ms), nil
}

func (r runbookLibrary) Draft(rec *agent.RunRecord, facts []agent.Fact) (bot.RunbookDraft, error) {
	if ok, why := runbook.Eligible(rec); !ok {
		return bot.RunbookDraft{}, fmt.Errorf("%w: %s", bot.ErrNotEligible, why)
	}
	d, err := r.lib.Draft(rec, facts, r.now())
	if err != nil {
		return bot.RunbookDraft{}, err
	}
	return bot.RunbookDraft{Name: d.Name, Path: r.lib.Shown(d.Name), Title: d.Title, Content: d.Content, Summary: d.Summary}, nil
}

func (r runbookLibrary) Save(name, content string) (string, error) {
	if err := r.lib.Save(name, content); err != nil {
		if errors.Is(err, runbook.ErrExists) {
			return "", fmt.Errorf("%w; ask for a new draft", err)
		}
		return "", err
	}
	return r.lib.Shown(name), nil
}
