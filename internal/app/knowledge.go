package app

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/textmatch"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/runbook"
	"github.com/vigilops/vigil/tools"
)

// inventoryResolver answers the bot's mention lookups from the inventory:
// @names exactly, and names written without @ by fuzzy recognition over
// every resource's name and aliases, whatever its kind.
type inventoryResolver struct {
	inv *tools.Inventory
	rec *textmatch.Recognizer
}

var (
	_ bot.Resolver     = inventoryResolver{}
	_ bot.TextResolver = inventoryResolver{}
)

func newInventoryResolver(inv *tools.Inventory) inventoryResolver {
	var cands []textmatch.Candidate
	for _, r := range inv.All() {
		cands = append(cands, textmatch.Candidate{ID: string(r.ID), Names: append([]string{r.Name}, r.Aliases...)})
	}
	return inventoryResolver{inv: inv, rec: textmatch.NewRecognizer(cands)}
}

func (r inventoryResolver) ResolveMention(name string) ([]policy.Resource, bool) {
	res, ok := r.inv.Lookup(name)
	if !ok {
		return nil, false
	}
	return r.chain(res), true
}

func (r inventoryResolver) chain(res tools.Resource) []policy.Resource {
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
	return out
}

// runbookLibrary is the runbook directory as the bot uses it.
type runbookLibrary struct {
	lib *runbook.Library
	now func() time.Time
}

var _ bot.Runbooks = runbookLibrary{}

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
