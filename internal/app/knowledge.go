package app

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/runbook"
)

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

func (r runbookLibrary) Draft(rec *agent.RunRecord, known []facts.Fact) (bot.RunbookDraft, error) {
	if ok, why := runbook.Eligible(rec); !ok {
		return bot.RunbookDraft{}, fmt.Errorf("%w: %s", bot.ErrNotEligible, why)
	}
	d, err := r.lib.Draft(rec, known, r.now())
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
