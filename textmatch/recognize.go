package textmatch

import (
	"slices"
	"strings"
)

// Candidate is something a text may name without an @: an inventory
// resource, by its name and aliases.
type Candidate struct {
	// ID identifies the candidate in matches.
	ID string
	// Names are its name and aliases, as written.
	Names []string
}

// Match is a stretch of text that names one candidate, or several equally
// well (Ambiguous).
type Match struct {
	// Text is the words that matched, as written.
	Text string
	// IDs are the candidates named: one, or several when ambiguous.
	IDs []string
	// Names are the names or aliases that matched, one per ID.
	Names []string
	// Confidence is in (0, 1]: 1 for the exact name.
	Confidence float64
	Ambiguous  bool
	// Start is the byte offset of Text in the text.
	Start int
}

// Confidences of the ways a word can name a candidate (SPEC A8: exact
// words, containment, prefixes of four or more characters, hyphenated
// parts), and of typos.
const (
	confExact      = 1.0
	confJoined     = 0.95 // "checkout api" for checkout-api
	confSuffixed   = 0.85 // "checkouts", "web1s"
	confPart       = 0.8  // "checkout" for checkout-api
	confTypo1      = 0.8  // one edit away
	confPrefix     = 0.75 // "jelly" for jellyfin
	confTypo2      = 0.72 // two edits away, long names
	confPartTypo   = 0.7  // "chekout" for checkout-api
	confCommonWord = 0.6  // a name that is also an everyday word, alone
	// ambiguityMargin is how close two candidates' confidences must be for
	// a match to count as ambiguous.
	ambiguityMargin = 0.05
)

// DefaultThreshold is the confidence a match needs to be reported.
const DefaultThreshold = 0.7

// commonWords are words of questions and of infrastructure talk that
// never name a resource by likeness (prefix, part, typo), and name one
// exactly only next to a word that says what it is ("the backup host").
var commonWords = setOf(
	"the", "and", "for", "with", "from", "into", "onto", "that", "this", "these", "those", "what", "when", "where", "which",
	"why", "who", "how", "does", "did", "doing", "done", "has", "have", "had", "was", "were", "are", "is", "not", "can", "could",
	"should", "would", "will", "just", "again", "still", "now", "today", "yesterday", "since", "after", "before", "about",
	"there", "their", "them", "they", "then", "than", "our", "your", "its", "all", "any", "some", "please", "check", "checks",
	"look", "show", "tell", "find", "restart", "restarted", "stop", "start", "started", "running", "run", "slow", "down",
	"up", "broken", "failing", "failed", "error", "errors", "logs", "log", "latency", "memory", "disk", "disks", "cpu", "load",
	"high", "low", "full", "space", "usage", "status", "state", "health", "healthy", "alert", "alerts", "page", "paged",
	"deploy", "deployed", "deployment", "deployments", "release", "rollback", "version", "config", "configuration",
	"server", "servers", "node", "nodes", "host", "hosts", "machine", "machines", "box", "boxes", "vm", "vms", "container",
	"containers", "pod", "pods", "service", "services", "cluster", "clusters", "namespace", "database", "databases", "db",
	"web", "app", "apps", "api", "apis", "backend", "frontend", "worker", "workers", "queue", "cache", "proxy", "prod",
	"production", "staging", "dev", "test", "tests", "backup", "backups", "network", "storage", "volume", "volumes",
	"timeout", "timeouts", "requests", "request", "traffic", "users", "user", "time", "times", "everything", "something",
	"nothing", "anything", "other", "same", "also", "only", "very", "much", "many", "more", "most", "less", "over", "under",
	"out", "off", "one", "two", "three", "first", "last", "next", "new", "old", "good", "bad", "why's", "it's", "mail",
)

// kindWords say what a name is: "the delly node", "backup host".
var kindWords = setOf("node", "host", "server", "machine", "box", "vm", "lxc", "container", "pod", "pods", "service",
	"deployment", "cluster", "instance", "db", "database", "guest")

// genericParts are parts of hyphenated names that say too little alone:
// "api" names no one resource of checkout-api and cart-api.
var genericParts = setOf("api", "web", "app", "db", "svc", "service", "server", "node", "host", "prod", "production",
	"staging", "dev", "test", "worker", "main", "primary", "replica", "docker", "k8s", "lxc", "vm", "internal", "public",
	"backend", "frontend", "cache", "data", "cluster", "master", "proxy", "default")

func setOf(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// Recognizer finds candidate names in free text. It is immutable and safe
// for concurrent use.
type Recognizer struct {
	keys []rkey
}

// rkey is one name or alias of a candidate, lower-cased.
type rkey struct {
	id, name, key string
	parts         []string
	digits        string
}

// NewRecognizer indexes the candidates' names and aliases. Names shorter
// than three characters are only ever matched with an @.
func NewRecognizer(cands []Candidate) *Recognizer {
	r := &Recognizer{}
	for _, c := range cands {
		for _, n := range c.Names {
			k := strings.ToLower(strings.TrimSpace(n))
			if len(k) < 3 {
				continue
			}
			parts := strings.FieldsFunc(k, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
			r.keys = append(r.keys, rkey{id: c.ID, name: n, key: k, parts: parts, digits: digitsOf(k)})
		}
	}
	return r
}

// word is one word of the text.
type word struct {
	text  string // as written
	lower string
	start int
	// at marks a structured @mention, left to the exact resolver.
	at bool
}

// words splits text into words of letters, digits, '.', '_' and '-',
// without trailing punctuation.
func words(text string) []word {
	var out []word
	i := 0
	for i < len(text) {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		w := strings.TrimRight(text[i:j], ".-_")
		if w != "" {
			out = append(out, word{text: w, lower: strings.ToLower(w), start: i, at: i > 0 && text[i-1] == '@'})
		}
		i = j
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// span is a run of words the text may name a candidate with.
type span struct {
	from, to int // word indexes, to exclusive
	hits     map[string]hit
}

type hit struct {
	conf float64
	name string
}

// Recognize returns the stretches of text that name candidates with at
// least threshold confidence, in text order. A stretch that names several
// candidates equally well is one ambiguous match. Words after an @ are left
// out: they are structured mentions.
func (r *Recognizer) Recognize(text string, threshold float64) []Match {
	ws := words(text)
	var spans []span
	for i := range ws {
		for n := 3; n >= 1; n-- {
			if i+n > len(ws) {
				continue
			}
			sp := span{from: i, to: i + n, hits: map[string]hit{}}
			skip := false
			for _, w := range ws[i : i+n] {
				skip = skip || w.at
			}
			if skip {
				continue
			}
			for _, k := range r.keys {
				c := r.score(ws, i, n, k)
				if c > sp.hits[k.id].conf {
					sp.hits[k.id] = hit{conf: c, name: k.name}
				}
			}
			if len(sp.hits) > 0 {
				spans = append(spans, sp)
			}
		}
	}
	// The best spans first; a word belongs to one match at most.
	slices.SortStableFunc(spans, func(a, b span) int {
		ca, cb := best(a), best(b)
		switch {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return (b.to - b.from) - (a.to - a.from)
	})
	taken := make([]bool, len(ws))
	var out []Match
	seen := map[string]bool{}
	for _, sp := range spans {
		top := best(sp)
		if top < threshold {
			continue
		}
		free := true
		for i := sp.from; i < sp.to; i++ {
			free = free && !taken[i]
		}
		if !free {
			continue
		}
		var ids []string
		for id, h := range sp.hits {
			if h.conf >= top-ambiguityMargin && h.conf >= threshold {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		key := strings.Join(ids, "\x00")
		if seen[key] {
			for i := sp.from; i < sp.to; i++ {
				taken[i] = true
			}
			continue
		}
		seen[key] = true
		m := Match{
			Text:       text[ws[sp.from].start : ws[sp.to-1].start+len(ws[sp.to-1].text)],
			IDs:        ids,
			Confidence: top,
			Ambiguous:  len(ids) > 1,
			Start:      ws[sp.from].start,
		}
		for _, id := range ids {
			m.Names = append(m.Names, sp.hits[id].name)
		}
		out = append(out, m)
		for i := sp.from; i < sp.to; i++ {
			taken[i] = true
		}
	}
	// An ambiguous match whose candidates another match names for sure
	// adds nothing.
	sure := map[string]bool{}
	for _, m := range out {
		if !m.Ambiguous {
			sure[m.IDs[0]] = true
		}
	}
	out = slices.DeleteFunc(out, func(m Match) bool {
		if !m.Ambiguous {
			return false
		}
		for _, id := range m.IDs {
			if sure[id] {
				return true
			}
		}
		return false
	})
	slices.SortFunc(out, func(a, b Match) int { return a.Start - b.Start })
	return out
}

func best(sp span) float64 {
	b := 0.0
	for _, h := range sp.hits {
		b = max(b, h.conf)
	}
	return b
}

// score is how well the n words at i name key; 0 for not at all.
func (r *Recognizer) score(ws []word, i, n int, k rkey) float64 {
	if n > 1 {
		// Several words joined: "checkout api" for checkout-api.
		parts := make([]string, n)
		for j := range n {
			parts[j] = ws[i+j].lower
		}
		for _, sep := range []string{"-", "_", ""} {
			if strings.Join(parts, sep) == k.key {
				return confJoined
			}
		}
		return 0
	}
	w := ws[i].lower
	if w == k.key {
		if commonWords[w] && !nextToKind(ws, i) {
			return confCommonWord
		}
		return confExact
	}
	if len(w) < 4 || commonWords[w] {
		return 0 // likeness needs a real word
	}
	c := 0.0
	if strings.HasPrefix(w, k.key) && len(w)-len(k.key) <= 2 && !isDigit(w[len(k.key)]) {
		c = max(c, confSuffixed)
	}
	if len(k.parts) > 1 {
		for _, p := range k.parts {
			if len(p) < 4 || genericParts[p] || isNumber(p) {
				continue
			}
			if p == w {
				c = max(c, confPart)
			} else if len(p) >= 6 && w[0] == p[0] && Within(w, p, 1) && digitsOf(w) == digitsOf(p) {
				c = max(c, confPartTypo)
			}
		}
	}
	if strings.HasPrefix(k.key, w) && 2*len(w) >= len(k.key) {
		c = max(c, confPrefix)
	}
	if digitsOf(w) == k.digits && w[0] == k.key[0] {
		// A typo keeps the first letter and the numbers.
		switch {
		case len(k.key) >= 5 && Within(w, k.key, 1):
			c = max(c, confTypo1)
		case len(k.key) >= 8 && Within(w, k.key, 2):
			c = max(c, confTypo2)
		}
	}
	return c
}

// nextToKind reports whether a word saying what a thing is stands right
// before or after word i.
func nextToKind(ws []word, i int) bool {
	return i > 0 && kindWords[ws[i-1].lower] || i+1 < len(ws) && kindWords[ws[i+1].lower]
}

func digitsOf(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}
