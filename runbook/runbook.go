// Package runbook keeps vigil's runbooks: Markdown files with a small front
// matter in one directory (knowledge.runbooks_dir). It selects the ones that
// fit an alert (its labels first, then a ranked text match) or a question
// (a BM25 ranking over title, keywords, resources and body), and drafts new
// ones from resolved investigations; a draft is saved only after a person
// approves it (the bot's approval flow), through Save.
//
// A runbook file looks like this:
//
//	---
//	title: Checkout API slow
//	match: {alertname: CheckoutLatencyHigh, service: checkout}
//	keywords: [checkout, latency, upstream, pool]
//	resources: [checkout-api]
//	---
//	## Symptoms
//	...
package runbook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Errors of parsing and saving.
var (
	ErrNoFrontMatter = errors.New("runbook: no front matter (the file must start with a line \"---\", the YAML, and a line \"---\")")
	ErrInvalid       = errors.New("runbook: invalid")
	ErrBadPath       = errors.New("runbook: bad file name")
	ErrExists        = errors.New("runbook: a runbook with that file name exists")
)

// Runbook is one parsed runbook file.
type Runbook struct {
	// Path is the file's path relative to the runbooks directory, with
	// forward slashes ("checkout-slow.md", "k8s/crashloop.md").
	Path string
	FrontMatter
	// Body is the Markdown after the front matter.
	Body string
}

// FrontMatter is the YAML at the top of a runbook.
type FrontMatter struct {
	// Title names the runbook; required.
	Title string `yaml:"title"`
	// Match lists alert labels the runbook is for: every one must match the
	// alert's label of that name. A value is matched as a shell pattern
	// (path.Match: "*", "?", "[a-z]"), so "checkout*" matches
	// "checkout-api".
	Match map[string]string `yaml:"match,omitempty"`
	// Keywords are words a question about the problem would use.
	Keywords []string `yaml:"keywords,omitempty"`
	// Resources are inventory names the runbook concerns.
	Resources []string `yaml:"resources,omitempty"`
	// Source says where the runbook came from (a vigil run, a person).
	Source string `yaml:"source,omitempty"`
}

// maxRunbookSize bounds a runbook file.
const maxRunbookSize = 256 * 1024

// Parse reads a runbook file's content. rel is its path in the directory,
// used in errors and kept in the result.
func Parse(rel string, data []byte) (Runbook, error) {
	if len(data) > maxRunbookSize {
		return Runbook{}, fmt.Errorf("%w: %s is %d bytes, over the limit of %d", ErrInvalid, rel, len(data), maxRunbookSize)
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return Runbook{}, fmt.Errorf("%s: %w", rel, ErrNoFrontMatter)
	}
	rest := text[len("---\n"):]
	end := strings.Index(rest, "\n---\n")
	var fm, body string
	switch {
	case end >= 0:
		fm, body = rest[:end], rest[end+len("\n---\n"):]
	case strings.HasSuffix(rest, "\n---"):
		fm = strings.TrimSuffix(rest, "\n---")
	default:
		return Runbook{}, fmt.Errorf("%s: %w", rel, ErrNoFrontMatter)
	}
	var f FrontMatter
	dec := yaml.NewDecoder(strings.NewReader(fm))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Runbook{}, fmt.Errorf("%w: %s: front matter: %v (known keys: title, match, keywords, resources, source)", ErrInvalid, rel, err)
	}
	f.Title = strings.TrimSpace(f.Title)
	if f.Title == "" {
		return Runbook{}, fmt.Errorf("%w: %s: front matter has no title", ErrInvalid, rel)
	}
	for k, v := range f.Match {
		if _, err := path.Match(v, ""); err != nil {
			return Runbook{}, fmt.Errorf("%w: %s: match.%s: %q is not a valid pattern: %v", ErrInvalid, rel, k, v, err)
		}
	}
	return Runbook{Path: rel, FrontMatter: f, Body: strings.TrimSpace(body)}, nil
}

// Render writes a runbook file: front matter and body.
func Render(f FrontMatter, body string) (string, error) {
	raw, err := yaml.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("runbook: encode front matter: %w", err)
	}
	return "---\n" + string(raw) + "---\n\n" + strings.TrimSpace(body) + "\n", nil
}

// matchesLabels reports whether every label the runbook matches on is set
// on the alert to a matching value, and how many there are (more is more
// specific). A runbook without match never matches by labels.
func (r Runbook) matchesLabels(labels map[string]string) (bool, int) {
	if len(r.Match) == 0 {
		return false, 0
	}
	for k, pat := range r.Match {
		v, ok := labels[k]
		if !ok {
			return false, 0
		}
		if ok, _ := path.Match(pat, v); !ok {
			return false, 0
		}
	}
	return true, len(r.Match)
}
