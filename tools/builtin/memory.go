package builtin

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Memory is one long-term memory (SPEC A13): a keyed note with tags.
type Memory struct {
	Key     string    `json:"key"`
	Content string    `json:"content"`
	Tags    []string  `json:"tags,omitempty"`
	At      time.Time `json:"at"`
}

// MemoryStore keeps long-term memories. Remember replaces a memory with the
// same key. Search returns at most limit memories matching query, best
// first; an empty query returns the most recent.
type MemoryStore interface {
	Remember(ctx context.Context, m Memory) error
	Search(ctx context.Context, query string, limit int) ([]Memory, error)
}

// InMemoryStore is a MemoryStore in process memory, bounded in size: when
// full, the oldest memory goes. It is safe for concurrent use.
type InMemoryStore struct {
	mu   sync.Mutex
	max  int
	byID map[string]Memory
}

var _ MemoryStore = (*InMemoryStore)(nil)

// DefaultMemoryLimit is how many memories NewMemoryStore keeps.
const DefaultMemoryLimit = 10000

// NewMemoryStore returns an empty in-memory store.
func NewMemoryStore() *InMemoryStore {
	return &InMemoryStore{max: DefaultMemoryLimit, byID: map[string]Memory{}}
}

func (s *InMemoryStore) Remember(ctx context.Context, m Memory) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.At.IsZero() {
		m.At = time.Now()
	}
	m.Tags = slices.Clone(m.Tags)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[m.Key]; !ok && len(s.byID) >= s.max {
		var oldest string
		var at time.Time
		for k, v := range s.byID {
			if oldest == "" || v.At.Before(at) {
				oldest, at = k, v.At
			}
		}
		delete(s.byID, oldest)
	}
	s.byID[m.Key] = m
	return nil
}

func (s *InMemoryStore) Search(ctx context.Context, query string, limit int) ([]Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	terms := searchTerms(query)
	type hit struct {
		m     Memory
		score int
	}
	s.mu.Lock()
	hits := make([]hit, 0, len(s.byID))
	for _, m := range s.byID {
		if sc := scoreMemory(m, query, terms); sc > 0 || len(terms) == 0 {
			m.Tags = slices.Clone(m.Tags)
			hits = append(hits, hit{m, sc})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			return b.score - a.score
		}
		if c := b.m.At.Compare(a.m.At); c != 0 {
			return c
		}
		return strings.Compare(a.m.Key, b.m.Key)
	})
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]Memory, len(hits))
	for i, h := range hits {
		out[i] = h.m
	}
	return out, nil
}

// searchTerms splits a query into lower-case words.
func searchTerms(q string) []string {
	return strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// scoreMemory ranks a memory for a query: an exact key match first, then
// each term found in the key or a tag (3) or in the content (1).
func scoreMemory(m Memory, query string, terms []string) int {
	score := 0
	if strings.EqualFold(strings.TrimSpace(query), m.Key) {
		score += 100
	}
	key, content := strings.ToLower(m.Key), strings.ToLower(m.Content)
	tags := strings.ToLower(strings.Join(m.Tags, " "))
	for _, t := range terms {
		switch {
		case strings.Contains(key, t) || strings.Contains(tags, t):
			score += 3
		case strings.Contains(content, t):
			score++
		}
	}
	return score
}
