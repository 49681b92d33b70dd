package runbook

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Library is a runbooks directory. It reads the directory again on every
// selection, reparsing only files that changed, so runbooks added by hand,
// by another replica or by Save are found at once. It is safe for
// concurrent use.
type Library struct {
	dir string
	// shown is the directory as configured, for the paths the model sees.
	shown string
	log   *slog.Logger

	mu    sync.Mutex
	files map[string]cached
}

type cached struct {
	mod  time.Time
	size int64
	rb   Runbook
	err  error
}

// Limits of a directory scan.
const (
	maxFiles = 2000
	maxDepth = 4
)

// Open returns the library over dir, which must exist. Files that do not
// parse are reported to log (once per version of the file) and left out.
func Open(dir string, log *slog.Logger) (*Library, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("runbooks directory %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("runbooks directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("runbooks directory: %s is not a directory", dir)
	}
	l := &Library{dir: abs, shown: filepath.ToSlash(filepath.Clean(dir)), log: log, files: map[string]cached{}}
	if _, err := l.All(); err != nil {
		return nil, err
	}
	return l, nil
}

// Dir is the directory as configured.
func (l *Library) Dir() string { return l.shown }

// Shown is how a runbook's path is shown to people and the model: the
// directory as configured, then the file ("runbooks/checkout-slow.md").
func (l *Library) Shown(rel string) string { return path.Join(l.shown, rel) }

// All returns every valid runbook, by path.
func (l *Library) All() ([]Runbook, error) {
	seen := map[string]bool{}
	var out []Runbook
	err := filepath.WalkDir(l.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == l.dir {
				return err
			}
			l.log.Warn("runbooks: cannot read", "path", p, "err", err)
			return nil
		}
		rel, _ := filepath.Rel(l.dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != l.dir && (strings.HasPrefix(d.Name(), ".") || strings.Count(rel, "/") >= maxDepth) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") || strings.HasPrefix(d.Name(), ".") || !d.Type().IsRegular() {
			return nil
		}
		if len(seen) >= maxFiles {
			return filepath.SkipAll
		}
		seen[rel] = true
		if rb, ok := l.load(p, rel); ok {
			out = append(out, rb)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("runbooks directory %s: %w", l.shown, err)
	}
	l.mu.Lock()
	for rel := range l.files {
		if !seen[rel] {
			delete(l.files, rel)
		}
	}
	l.mu.Unlock()
	slices.SortFunc(out, func(a, b Runbook) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// load returns the parsed file, from the cache when it did not change.
func (l *Library) load(p, rel string) (Runbook, bool) {
	st, err := os.Stat(p)
	if err != nil {
		return Runbook{}, false
	}
	l.mu.Lock()
	c, ok := l.files[rel]
	l.mu.Unlock()
	if ok && c.mod.Equal(st.ModTime()) && c.size == st.Size() {
		return c.rb, c.err == nil
	}
	c = cached{mod: st.ModTime(), size: st.Size()}
	data, err := os.ReadFile(p)
	if err == nil {
		c.rb, err = Parse(rel, data)
	}
	c.err = err
	if err != nil {
		l.log.Warn("runbooks: skipping a file that does not parse", "path", l.Shown(rel), "err", err)
	}
	l.mu.Lock()
	l.files[rel] = c
	l.mu.Unlock()
	return c.rb, err == nil
}

// Match is a runbook selected for an alert or a question.
type Match struct {
	Runbook
	// Score orders matches: a runbook_url hit first, then label matches,
	// then text relevance.
	Score float64
	// Why says how it matched ("runbook_url", "labels alertname, service",
	// "words checkout, slow").
	Why string
}

// Thresholds and weights of selection.
const (
	scoreURL   = 1000
	scoreLabel = 100
	// Field weights of the text ranking (BM25F): a word in the title or
	// keywords counts three times, a resource twice.
	weightTitle    = 3
	weightKeywords = 3
	weightResource = 2
	bm25K1         = 1.2
	bm25B          = 0.75
	// DefaultLimit is how many runbooks a selection offers.
	DefaultLimit = 3
)

// ignoredLabels say nothing about the problem itself.
var ignoredLabels = setOf("severity", "prometheus", "receiver", "monitor", "replica", "cluster_id", "endpoint")

// ForAlert selects runbooks for an alert: the file its runbook_url points
// at, when that is a runbook in the directory; then runbooks whose match
// labels all hold, the most specific first; then the best text matches of
// its label values. At most limit (DefaultLimit when 0).
func (l *Library) ForAlert(labels map[string]string, runbookURL string, limit int) ([]Match, error) {
	all, err := l.All()
	if err != nil {
		return nil, err
	}
	var words []string
	for _, k := range sortedKeys(labels) {
		if !ignoredLabels[k] && !strings.HasPrefix(k, "__") {
			words = append(words, labels[k])
		}
	}
	byText := rank(all, tokens(strings.Join(words, " ")), nil)
	direct := l.byURL(all, runbookURL)
	var out []Match
	for _, rb := range all {
		m := Match{Runbook: rb}
		var why []string
		if rb.Path == direct {
			m.Score += scoreURL
			why = append(why, "runbook_url")
		}
		if ok, n := rb.matchesLabels(labels); ok {
			m.Score += scoreLabel * float64(n)
			why = append(why, "labels "+strings.Join(sortedKeys(rb.Match), ", "))
		}
		if t, ok := byText[rb.Path]; ok {
			m.Score += t.score
			why = append(why, "words "+strings.Join(t.words, ", "))
		}
		if m.Score > 0 {
			m.Why = strings.Join(why, "; ")
			out = append(out, m)
		}
	}
	return top(out, limit), nil
}

// ForQuestion selects runbooks for a question: a BM25 ranking of the
// question's words over each runbook's title, keywords, resources and
// body, with the resources the question names (recognised inventory names)
// counted as resource matches. A runbook needs two of the question's words,
// or one in its title, keywords or resources, to be offered.
func (l *Library) ForQuestion(question string, resources []string, limit int) ([]Match, error) {
	all, err := l.All()
	if err != nil {
		return nil, err
	}
	byText := rank(all, tokens(question), resources)
	var out []Match
	for _, rb := range all {
		t, ok := byText[rb.Path]
		if !ok {
			continue
		}
		out = append(out, Match{Runbook: rb, Score: t.score, Why: "words " + strings.Join(t.words, ", ")})
	}
	return top(out, limit), nil
}

func top(ms []Match, limit int) []Match {
	if limit <= 0 {
		limit = DefaultLimit
	}
	slices.SortStableFunc(ms, func(a, b Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	if len(ms) > limit {
		ms = ms[:limit]
	}
	return ms
}

// byURL is the runbook a runbook_url points at, or "": a file URL or path
// inside the directory, or any URL whose path ends with a runbook's path
// ("https://git.example.org/ops/runbooks/-/blob/main/checkout-slow.md").
func (l *Library) byURL(all []Runbook, raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	p := raw
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		p = u.Path
	} else if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	p = filepath.ToSlash(p)
	if filepath.IsAbs(filepath.FromSlash(p)) {
		if rel, err := filepath.Rel(l.dir, filepath.Clean(filepath.FromSlash(p))); err == nil && !strings.HasPrefix(rel, "..") {
			p = filepath.ToSlash(rel)
		}
	}
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	best := ""
	for _, rb := range all {
		if (p == rb.Path || strings.HasSuffix(p, "/"+rb.Path)) && len(rb.Path) > len(best) {
			best = rb.Path
		}
	}
	return best
}

// textHit is a runbook's text relevance to a query.
type textHit struct {
	score float64
	words []string
}

// rank scores every runbook against the query words with BM25F, and
// keeps the relevant ones: two query words matched, or one in a strong
// field (title, keywords, resources).
func rank(all []Runbook, query []string, resources []string) map[string]textHit {
	out := map[string]textHit{}
	if len(all) == 0 || (len(query) == 0 && len(resources) == 0) {
		return out
	}
	type doc struct {
		tf     map[string]float64
		strong map[string]bool
		length float64
	}
	docs := make([]doc, len(all))
	df := map[string]int{}
	total := 0.0
	for i, rb := range all {
		d := doc{tf: map[string]float64{}, strong: map[string]bool{}}
		addField := func(text string, w float64, strong bool) {
			for _, t := range tokens(text) {
				d.tf[t] += w
				d.length += w
				if strong {
					d.strong[t] = true
				}
			}
		}
		addField(rb.Title, weightTitle, true)
		addField(strings.Join(rb.Keywords, " "), weightKeywords, true)
		for _, r := range rb.Resources {
			key := "res:" + strings.ToLower(r)
			d.tf[key] += weightResource
			d.strong[key] = true
			addField(r, weightResource, true)
		}
		addField(rb.Body, 1, false)
		for t := range d.tf {
			df[t]++
		}
		docs[i] = d
		total += d.length
	}
	avg := total / float64(len(docs))
	terms := slices.Clone(query)
	for _, r := range resources {
		terms = append(terms, "res:"+strings.ToLower(r))
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	n := float64(len(docs))
	for i, d := range docs {
		score := 0.0
		var matched []string
		strong := false
		for _, t := range terms {
			tf := d.tf[t]
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			score += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*d.length/avg))
			matched = append(matched, strings.TrimPrefix(t, "res:"))
			strong = strong || d.strong[t]
		}
		if len(matched) >= 2 || (len(matched) == 1 && strong) {
			slices.Sort(matched)
			out[all[i].Path] = textHit{score: score, words: slices.Compact(matched)}
		}
	}
	return out
}

// stopwords carry no meaning for matching.
var stopwords = setOf(strings.Fields(`a an and are as at be been but by can could did do does for from had has have how i if in
into is it its me my no not of on or our so than that the their them then there these they this to too up us was we were what
when where which while who why will with would you your please now just again still any all some also very get got see
check look tell show find`)...)

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

var reWord = regexp.MustCompile(`[\p{L}\p{N}]+`)

// tokens splits text into lower-case words, without stopwords and with a
// plural s dropped ("timeouts" is "timeout").
func tokens(text string) []string {
	var out []string
	for _, w := range reWord.FindAllString(strings.ToLower(text), -1) {
		if len(w) < 2 || isStop(w) {
			continue
		}
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && unicode.IsLetter(rune(w[len(w)-2])) {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

func isStop(w string) bool { return stopwords[w] }

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// reFileName is what a saved runbook may be called.
var reFileName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,78}\.md$`)

// ValidFileName reports whether name is a file name Save accepts: lower-case
// letters, digits and dashes, ending in .md, at the top of the directory.
func ValidFileName(name string) bool { return reFileName.MatchString(name) }

// Save writes a new runbook file: name is a plain file name (ValidFileName),
// content a valid runbook. It never replaces a file (ErrExists), and a
// reader never sees half a file.
func (l *Library) Save(name, content string) error {
	if !ValidFileName(name) {
		return fmt.Errorf("%w: %q (want lower-case letters, digits and dashes, ending in .md)", ErrBadPath, name)
	}
	if _, err := Parse(name, []byte(content)); err != nil {
		return err
	}
	final := filepath.Join(l.dir, name)
	tmp, err := os.CreateTemp(l.dir, ".draft-*.md")
	if err != nil {
		return fmt.Errorf("runbook: save %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return fmt.Errorf("runbook: save %s: %w", name, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("runbook: save %s: %w", name, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("runbook: save %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("runbook: save %s: %w", name, err)
	}
	// A hard link fails when the name is taken: no file is ever replaced.
	if err := os.Link(tmp.Name(), final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrExists, l.Shown(name))
		}
		return fmt.Errorf("runbook: save %s: %w", name, err)
	}
	return nil
}

// Exists reports whether a file of that name is in the directory.
func (l *Library) Exists(name string) bool {
	_, err := os.Lstat(filepath.Join(l.dir, filepath.FromSlash(name)))
	return err == nil
}
