package policy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vigilops/vigil/textmatch"
)

// ResourceID is a resource's canonical identity:
// "{kind}:{host}:{provider_uid}" for scoped resources ("lxc:delly:141",
// "docker_container:media-server:abc123") or "{kind}:{provider_uid}" for
// global ones ("node:delly") (SPEC T3).
type ResourceID string

// Resource is one resolved resource as policy needs to know it: who it is,
// what it is called, what it runs on, and how a tool reaches it.
type Resource struct {
	ID      ResourceID `json:"id"`
	Kind    string     `json:"kind"`
	Name    string     `json:"name"`
	Aliases []string   `json:"aliases,omitempty"`
	// Parent is the resource this one runs inside ("" for top level), e.g.
	// the LXC a docker container runs in, or the node an LXC runs on.
	Parent ResourceID `json:"parent,omitempty"`
	// Node is the host or node this runs on, e.g. "delly".
	Node string `json:"node,omitempty"`
	// Target is what a tool passes as `target` to reach this resource. The
	// context fills it with Name when a provider leaves it empty.
	Target string `json:"target,omitempty"`
}

const (
	// DefaultResolvedTTL is how long a resolved resource stays known without
	// being used (SPEC P3). The window slides: every access restarts it.
	DefaultResolvedTTL = 45 * time.Minute
	// DefaultResolvedMaxEntries bounds the context; beyond it the least
	// recently used unpinned resource is evicted.
	DefaultResolvedMaxEntries = 500

	// maxSuggestions bounds the similar names a STRICT_RESOLUTION block
	// offers.
	maxSuggestions = 5
	// maxParentDepth bounds walks up the Parent chain, so a cycle in provider
	// data cannot hang a check.
	maxParentDepth = 16
)

// ResolvedContext is a session's record of the resources it has resolved:
// the only targets a write may name (strict resolution, SPEC P3) and the
// evidence for routing validation (SPEC P4). Resources enter it from
// discovery and queries, never from the model's say-so.
//
// Two kinds of access are tracked apart. Every add and lookup is a general
// access: it refreshes the sliding TTL and the LRU position. Explicit access
// records user intent — an @mention, a single-resource get or discover — and
// only it feeds routing validation, so that a bulk discovery that lists fifty
// containers on a node does not make the node itself untouchable.
//
// Time is always passed in. Internally the context never lets time run
// backwards: a call with an earlier time than one already seen (clock skew
// between replicas) is treated as happening at the latest time seen, which
// keeps the LRU order and the expiry order the same.
//
// A ResolvedContext is safe for concurrent use. The zero value is an empty
// context with the default TTL and size. It persists with its run through its
// JSON form, which round-trips unchanged, so a run resumes on any replica; it
// is session state and never belongs in long-term memory, where yesterday's
// inventory would pass for today's.
type ResolvedContext struct {
	mu         sync.Mutex
	ttl        time.Duration
	maxEntries int
	clock      time.Time // latest time seen, UTC; zero before the first call

	entries map[ResourceID]*entry
	byID    keyIndex // folded ID -> entries
	byName  keyIndex // folded name -> entries
	byAlias keyIndex // folded alias -> entries
	// explicit holds the entries the session explicitly accessed; it is
	// small, so routing checks scan it instead of the whole context.
	explicit map[ResourceID]*entry
	// head and tail form the LRU list of unpinned entries, most recently
	// used at head. Pinned entries are not on it: they are never evicted.
	head, tail *entry
}

// entry is one resolved resource with its access bookkeeping.
type entry struct {
	res Resource
	// keys are the folded strings the resource answers to.
	id, name, target, node, parent string
	aliases                        []string

	last       time.Time // last general access (TTL and LRU)
	explicitAt time.Time // last explicit access; zero if never
	pinned     bool

	prev, next *entry // LRU list links while unpinned
}

// keyIndex maps a folded key to the entries answering to it. Names are not
// unique (two hosts may each run a "web"), so a key may hold several.
type keyIndex map[string][]*entry

func (ix keyIndex) add(k string, e *entry) {
	if k != "" {
		ix[k] = append(ix[k], e)
	}
}

func (ix keyIndex) remove(k string, e *entry) {
	list := slices.DeleteFunc(ix[k], func(x *entry) bool { return x == e })
	if len(list) == 0 {
		delete(ix, k)
		return
	}
	ix[k] = list
}

// best returns the most recently accessed entry for k, or nil.
func (ix keyIndex) best(k string) *entry {
	var best *entry
	for _, e := range ix[k] {
		if best == nil || e.last.After(best.last) || (e.last.Equal(best.last) && e.res.ID < best.res.ID) {
			best = e
		}
	}
	return best
}

// NewResolvedContext returns an empty context with a 45-minute sliding TTL
// and room for 500 resources.
func NewResolvedContext() *ResolvedContext {
	c := &ResolvedContext{}
	c.init()
	return c
}

// init makes the zero value usable.
func (c *ResolvedContext) init() {
	if c.ttl <= 0 {
		c.ttl = DefaultResolvedTTL
	}
	if c.maxEntries <= 0 {
		c.maxEntries = DefaultResolvedMaxEntries
	}
	if c.entries == nil {
		c.entries = make(map[ResourceID]*entry)
		c.byID = make(keyIndex)
		c.byName = make(keyIndex)
		c.byAlias = make(keyIndex)
		c.explicit = make(map[ResourceID]*entry)
	}
}

// begin locks the context, prepares it, drops what has expired by now and
// returns the time to act at. The caller must unlock.
func (c *ResolvedContext) begin(now time.Time) time.Time {
	c.mu.Lock()
	c.init()
	now = now.UTC()
	if now.Before(c.clock) {
		now = c.clock
	}
	c.clock = now
	c.expire(now)
	return now
}

// Add records a resource found by general access (bulk discovery, search
// results, prefetch). It refreshes an already known resource, replacing its
// description and keeping its explicit mark and pin. A resource without an ID
// cannot be indexed and is ignored.
func (c *ResolvedContext) Add(r Resource, now time.Time) {
	now = c.begin(now)
	defer c.mu.Unlock()
	c.put(r, now)
}

// AddExplicit records a resource the user meant: an @mention, or the single
// result of a get or discover. It counts for routing validation.
func (c *ResolvedContext) AddExplicit(r Resource, now time.Time) {
	now = c.begin(now)
	defer c.mu.Unlock()
	if e := c.put(r, now); e != nil {
		c.markExplicit(e, now)
	}
}

// MarkExplicit records explicit access to a resource already in the context;
// an unknown ID is ignored.
func (c *ResolvedContext) MarkExplicit(id ResourceID, now time.Time) {
	now = c.begin(now)
	defer c.mu.Unlock()
	if e := c.entries[id]; e != nil {
		c.touch(e, now)
		c.markExplicit(e, now)
	}
}

// Pin protects a resource in the context from LRU eviction and TTL expiry,
// for the primary targets of a conversation. An unknown ID is ignored.
func (c *ResolvedContext) Pin(id ResourceID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	if e := c.entries[id]; e != nil && !e.pinned {
		c.unlink(e)
		e.pinned = true
	}
}

// Lookup finds a resource by canonical ID, name or alias, case-insensitively,
// in that order of precedence; among resources sharing a name the most
// recently used wins. A hit is a general access: it refreshes the TTL but
// does not count as explicit.
func (c *ResolvedContext) Lookup(nameOrIDOrAlias string, now time.Time) (Resource, bool) {
	now = c.begin(now)
	defer c.mu.Unlock()
	e := c.find(fold(nameOrIDOrAlias))
	if e == nil {
		return Resource{}, false
	}
	c.touch(e, now)
	return e.res.clone(), true
}

// Peek is Lookup without the access: it changes nothing, for checks that
// only read the session (the scope gate).
func (c *ResolvedContext) Peek(nameOrIDOrAlias string) (Resource, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	e := c.find(fold(nameOrIDOrAlias))
	if e == nil || (!c.clock.IsZero() && !e.pinned && c.clock.Sub(e.last) >= c.ttl) {
		return Resource{}, false
	}
	return e.res.clone(), true
}

// Len reports how many resources the context holds, counting any that have
// expired since the last call that was given a time.
func (c *ResolvedContext) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Empty reports whether the session has no live resolved resource at now.
func (c *ResolvedContext) Empty(now time.Time) bool {
	c.begin(now)
	defer c.mu.Unlock()
	return len(c.entries) == 0
}

// Reset forgets every resource, mark and pin, keeping the TTL and size.
func (c *ResolvedContext) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock = time.Time{}
	c.entries = nil
	c.head, c.tail = nil, nil
	c.init()
}

// CheckWrite enforces strict resolution for a write (SPEC P3): target must
// name a resource resolved in this session, or the write is refused with
// STRICT_RESOLUTION listing resolved names that look like what the model
// meant. A resolved target is then checked for routing (CheckRouting).
func (c *ResolvedContext) CheckWrite(target string, now time.Time) *Block {
	if b := requireTarget(target); b != nil {
		return b
	}
	now = c.begin(now)
	defer c.mu.Unlock()
	e := c.find(fold(target))
	if e == nil {
		return c.strictBlock(target, "a write must target a resource resolved in this session")
	}
	c.touch(e, now)
	return c.routing(target, e)
}

// CheckRead is for reads that act inside a resource — commands, files, logs
// (the read tool and file_edit read). It applies the scoped read bypass: the
// read may go ahead when target is resolved, or when the session has resolved
// anything at all, because a read cannot do harm through a wrong name but
// must not run blind before any discovery. It then applies routing, as the
// seed does for its read tool: reading the node's copy of a file while the
// user asked about a container's answers the wrong question as surely as
// editing it changes the wrong file.
func (c *ResolvedContext) CheckRead(target string, now time.Time) *Block {
	if b := requireTarget(target); b != nil {
		return b
	}
	now = c.begin(now)
	defer c.mu.Unlock()
	e, b := c.readScope(target, now)
	if b != nil {
		return b
	}
	return c.routing(target, e)
}

// CheckReadScope is CheckRead without routing, for reads that ask about a
// resource rather than act inside it (metrics, alerts): a node's load is a
// fair question while investigating a container on it.
func (c *ResolvedContext) CheckReadScope(target string, now time.Time) *Block {
	if b := requireTarget(target); b != nil {
		return b
	}
	now = c.begin(now)
	defer c.mu.Unlock()
	_, b := c.readScope(target, now)
	return b
}

// CheckRouting refuses ROUTING_MISMATCH when target is a parent or node of a
// resource the session explicitly accessed (SPEC P4): a file at the same path
// on the node is not the file inside the container, and editing the wrong one
// "succeeds" with no effect. The block names the child, and its
// SuggestedRewrite is the child's target, so the agent can retry on its own.
//
// The target is allowed when it is itself the child's route (a docker
// container reached through its host) or when the user explicitly accessed
// the parent after the child: "now look at @delly itself" is intent too.
// Target need not be resolved: routing protects reads that the scoped bypass
// let through.
func (c *ResolvedContext) CheckRouting(target string, now time.Time) *Block {
	c.begin(now)
	defer c.mu.Unlock()
	return c.routing(target, c.find(fold(target)))
}

// readScope applies the scoped read bypass, touching a resolved target.
func (c *ResolvedContext) readScope(target string, now time.Time) (*entry, *Block) {
	e := c.find(fold(target))
	if e != nil {
		c.touch(e, now)
		return e, nil
	}
	if len(c.entries) == 0 {
		return nil, c.strictBlock(target, "nothing has been resolved in this session, so a read has no context")
	}
	return nil, nil
}

// routing implements CheckRouting; t is target's entry, or nil.
func (c *ResolvedContext) routing(target string, t *entry) *Block {
	if len(c.explicit) == 0 {
		return nil
	}
	key := fold(target)
	var children []*entry
	for _, ch := range c.explicit {
		if ch == t || ch.answersTo(key) {
			continue // operating on the child itself
		}
		if t != nil && !t.explicitAt.IsZero() && !ch.explicitAt.After(t.explicitAt) {
			continue // the parent was meant at least as recently
		}
		if ch.target == key || (t != nil && t.answersTo(ch.target)) {
			continue // target is the child's own route
		}
		if c.isAncestor(ch, key, t) {
			children = append(children, ch)
		}
	}
	if len(children) == 0 {
		return nil
	}
	slices.SortFunc(children, func(a, b *entry) int {
		if d := b.explicitAt.Compare(a.explicitAt); d != 0 {
			return d
		}
		return cmp.Compare(a.res.ID, b.res.ID)
	})
	return routingBlock(target, t, children)
}

// isAncestor reports whether the resource target names (key, or its entry t)
// is a node or parent that ch runs on.
func (c *ResolvedContext) isAncestor(ch *entry, key string, t *entry) bool {
	hit := func(k string) bool { return k != "" && (k == key || (t != nil && t.answersTo(k))) }
	if hit(ch.node) {
		return true
	}
	cur := ch
	for range maxParentDepth {
		if cur.parent == "" {
			return false
		}
		if hit(cur.parent) {
			return true
		}
		pe := c.entries[cur.res.Parent]
		if pe == nil {
			return false
		}
		if pe.answersTo(key) || hit(pe.node) {
			return true
		}
		cur = pe
	}
	return false
}

// routingBlock builds the ROUTING_MISMATCH block for children, most recently
// meant first.
func routingBlock(target string, t *entry, children []*entry) *Block {
	child := children[0]
	names := make([]string, len(children))
	ids := make([]string, len(children))
	for i, ch := range children {
		names[i] = ch.res.Name
		ids[i] = string(ch.res.ID)
	}
	what := fmt.Sprintf("%q", target)
	details := map[string]any{
		"target":                     target,
		"target_resource_id":         string(child.res.ID),
		"more_specific":              names,
		"more_specific_resource_ids": ids,
	}
	if t != nil {
		what = fmt.Sprintf("%q (%s)", target, t.res.ID)
		details["target_id"] = string(t.res.ID)
	}
	msg := fmt.Sprintf("%s is a host of %s (%s), which this session explicitly referenced; "+
		"operating on the host would not reach inside it", what, child.res.Name, child.res.ID)
	b := newGuardBlock(CodeRoutingMismatch, msg, "retry with target="+child.res.Target, true, details)
	b.SuggestedRewrite = child.res.Target
	return b
}

// strictBlock builds the STRICT_RESOLUTION block for an unresolved target.
func (c *ResolvedContext) strictBlock(target, why string) *Block {
	return newGuardBlock(CodeStrictResolution,
		fmt.Sprintf("%q is not resolved: %s", target, why),
		"use query or discover to resolve "+target+" first",
		true, map[string]any{
			"target":      target,
			"suggestions": c.similar(fold(target)),
		})
}

// requireTarget refuses a check without a target: policy cannot vouch for
// a call that does not say what it operates on.
func requireTarget(target string) *Block {
	if strings.TrimSpace(target) != "" {
		return nil
	}
	return newGuardBlock(CodeInvalidInput, "target is required",
		"name the resource to operate on in the target parameter", false, nil)
}

// put inserts or refreshes r and returns its entry, or nil if r has no ID.
func (c *ResolvedContext) put(r Resource, now time.Time) *entry {
	if r.ID == "" {
		return nil
	}
	r = r.normalized()
	e := c.entries[r.ID]
	if e == nil {
		e = &entry{}
		c.entries[r.ID] = e
	} else {
		c.unindex(e)
	}
	e.setResource(r)
	c.index(e)
	c.touch(e, now)
	c.evict(e)
	return e
}

func (c *ResolvedContext) index(e *entry) {
	c.byID.add(e.id, e)
	c.byName.add(e.name, e)
	for _, a := range e.aliases {
		c.byAlias.add(a, e)
	}
}

func (c *ResolvedContext) unindex(e *entry) {
	c.byID.remove(e.id, e)
	c.byName.remove(e.name, e)
	for _, a := range e.aliases {
		c.byAlias.remove(a, e)
	}
}

// remove drops e from the context entirely.
func (c *ResolvedContext) remove(e *entry) {
	c.unlink(e)
	c.unindex(e)
	delete(c.entries, e.res.ID)
	delete(c.explicit, e.res.ID)
}

// find resolves a folded key: canonical ID first, then name, then alias.
func (c *ResolvedContext) find(key string) *entry {
	if key == "" {
		return nil
	}
	if e := c.byID.best(key); e != nil {
		return e
	}
	if e := c.byName.best(key); e != nil {
		return e
	}
	return c.byAlias.best(key)
}

// touch records a general access at now.
func (c *ResolvedContext) touch(e *entry, now time.Time) {
	e.last = now
	if !e.pinned {
		c.unlink(e)
		c.pushFront(e)
	}
}

func (c *ResolvedContext) markExplicit(e *entry, now time.Time) {
	e.explicitAt = now
	c.explicit[e.res.ID] = e
}

// expire drops unpinned entries whose TTL ran out by now. The LRU list is in
// access-time order, so expired entries sit at its tail.
func (c *ResolvedContext) expire(now time.Time) {
	for c.tail != nil && now.Sub(c.tail.last) >= c.ttl {
		c.remove(c.tail)
	}
}

// evict drops least recently used unpinned entries until the context fits,
// sparing keep (the entry just added, which a caller is about to use). Only
// pinned entries can hold the context over its bound.
func (c *ResolvedContext) evict(keep *entry) {
	for len(c.entries) > c.maxEntries {
		victim := c.tail
		if victim == keep {
			victim = victim.prev
		}
		if victim == nil {
			return
		}
		c.remove(victim)
	}
}

func (c *ResolvedContext) pushFront(e *entry) {
	e.prev, e.next = nil, c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

// unlink takes e off the LRU list if it is on it.
func (c *ResolvedContext) unlink(e *entry) {
	if e.prev == nil && e.next == nil && c.head != e {
		return
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// setResource stores r (already normalized) with its folded keys.
func (e *entry) setResource(r Resource) {
	e.res = r
	e.id, e.name, e.target = fold(string(r.ID)), fold(r.Name), fold(r.Target)
	e.node, e.parent = fold(r.Node), fold(string(r.Parent))
	e.aliases = make([]string, len(r.Aliases))
	for i, a := range r.Aliases {
		e.aliases[i] = fold(a)
	}
}

// answersTo reports whether the folded key names e.
func (e *entry) answersTo(key string) bool {
	return key != "" && (key == e.id || key == e.name || slices.Contains(e.aliases, key))
}

// similar returns resolved names that look like the folded key, for the
// suggestions of a STRICT_RESOLUTION block. It scans the whole context, which
// is bounded and only happens on the refusal path.
func (c *ResolvedContext) similar(key string) []string {
	seen := make(map[string]bool)
	out := []string{} // "suggestions": [] rather than null for the model
	for _, e := range c.entries {
		show := cmp.Or(e.res.Name, string(e.res.ID))
		if seen[show] {
			continue
		}
		if looksLike(key, e.name) || looksLike(key, e.id) || slices.ContainsFunc(e.aliases, func(a string) bool { return looksLike(key, a) }) {
			seen[show] = true
			out = append(out, show)
		}
	}
	slices.Sort(out)
	if len(out) > maxSuggestions {
		out = out[:maxSuggestions]
	}
	return out
}

// looksLike is a cheap similarity test for suggestions: containment, a shared
// prefix of four or more, a shared hyphen- or underscore-separated part, or a
// small edit distance (one for short names, where two would match anything,
// two from six characters up).
func looksLike(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if strings.Contains(a, b) || strings.Contains(b, a) {
		return true
	}
	if n := textmatch.CommonPrefix(a, b); n >= 4 {
		return true
	}
	split := func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ':' }
	for _, pa := range strings.FieldsFunc(a, split) {
		if len(pa) >= 3 && slices.Contains(strings.FieldsFunc(b, split), pa) {
			return true
		}
	}
	if min(len(a), len(b)) < 4 {
		return false
	}
	limit := 1
	if min(len(a), len(b)) >= 6 {
		limit = 2
	}
	return textmatch.Within(a, b, limit)
}

// fold is the case-insensitive key for names, aliases and IDs.
func fold(s string) string {
	return strings.ToLower(strings.TrimSpace(s))
}

// normalized returns a copy of r that owns its alias slice (trimmed, without
// empties or duplicates, nil when empty) and has a Target.
func (r Resource) normalized() Resource {
	var aliases []string
	for _, a := range r.Aliases {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(aliases, a) {
			aliases = append(aliases, a)
		}
	}
	r.Aliases = aliases
	if r.Target == "" {
		r.Target = cmp.Or(r.Name, string(r.ID))
	}
	return r
}

// clone returns a copy that does not share the alias slice.
func (r Resource) clone() Resource {
	r.Aliases = slices.Clone(r.Aliases)
	return r
}

// resolvedJSON is the persisted form of a ResolvedContext.
type resolvedJSON struct {
	TTL        string      `json:"ttl"`
	MaxEntries int         `json:"max_entries"`
	Clock      time.Time   `json:"clock,omitzero"`
	Entries    []entryJSON `json:"entries"`
}

type entryJSON struct {
	Resource   Resource  `json:"resource"`
	LastAccess time.Time `json:"last_access"`
	ExplicitAt time.Time `json:"explicit_at,omitzero"`
	Pinned     bool      `json:"pinned,omitempty"`
}

// MarshalJSON writes the context with its unpinned entries in LRU order,
// most recent first, followed by the pinned ones ordered by ID.
func (c *ResolvedContext) MarshalJSON() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	out := resolvedJSON{
		TTL:        c.ttl.String(),
		MaxEntries: c.maxEntries,
		Clock:      c.clock,
		Entries:    make([]entryJSON, 0, len(c.entries)),
	}
	for e := c.head; e != nil; e = e.next {
		out.Entries = append(out.Entries, e.toJSON())
	}
	var pinned []entryJSON
	for _, e := range c.entries {
		if e.pinned {
			pinned = append(pinned, e.toJSON())
		}
	}
	slices.SortFunc(pinned, func(a, b entryJSON) int { return cmp.Compare(a.Resource.ID, b.Resource.ID) })
	out.Entries = append(out.Entries, pinned...)
	return json.Marshal(out)
}

func (e *entry) toJSON() entryJSON {
	return entryJSON{Resource: e.res.clone(), LastAccess: e.last, ExplicitAt: e.explicitAt, Pinned: e.pinned}
}

// UnmarshalJSON restores a context written by MarshalJSON. It validates what
// it reads — a positive TTL and size, an ID on every resource, no ID twice —
// because a resumed run must not trust a store more than the model.
func (c *ResolvedContext) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil
	}
	var in resolvedJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("policy: resolved context: %w", err)
	}
	ttl, err := time.ParseDuration(in.TTL)
	if err != nil || ttl <= 0 {
		return fmt.Errorf("policy: resolved context: invalid ttl %q", in.TTL)
	}
	if in.MaxEntries <= 0 {
		return fmt.Errorf("policy: resolved context: invalid max_entries %d", in.MaxEntries)
	}
	fresh := ResolvedContext{ttl: ttl, maxEntries: in.MaxEntries, clock: in.Clock.UTC()}
	fresh.init()
	if err := fresh.load(in.Entries); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ttl, c.maxEntries, c.clock = fresh.ttl, fresh.maxEntries, fresh.clock
	c.entries, c.explicit = fresh.entries, fresh.explicit
	c.byID, c.byName, c.byAlias = fresh.byID, fresh.byName, fresh.byAlias
	c.head, c.tail = fresh.head, fresh.tail
	return nil
}

// load rebuilds entries, indexes and the LRU list. Unpinned entries are
// ordered by last access, most recent first (stably, so a context's own
// output keeps its order), which restores the invariant expire relies on.
func (c *ResolvedContext) load(in []entryJSON) error {
	slices.SortStableFunc(in, func(a, b entryJSON) int { return b.LastAccess.Compare(a.LastAccess) })
	for _, ej := range in {
		r := ej.Resource
		if r.ID == "" {
			return fmt.Errorf("policy: resolved context: resource without id")
		}
		if c.entries[r.ID] != nil {
			return fmt.Errorf("policy: resolved context: duplicate id %q", r.ID)
		}
		e := &entry{
			last:       ej.LastAccess.UTC(),
			explicitAt: ej.ExplicitAt.UTC(),
			pinned:     ej.Pinned,
		}
		e.setResource(r.normalized())
		c.entries[r.ID] = e
		c.index(e)
		if !e.explicitAt.IsZero() {
			c.explicit[r.ID] = e
		}
		if !e.pinned {
			c.pushBack(e)
		}
		if e.last.After(c.clock) {
			c.clock = e.last
		}
	}
	return nil
}

func (c *ResolvedContext) pushBack(e *entry) {
	e.prev, e.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = e
	}
	c.tail = e
	if c.head == nil {
		c.head = e
	}
}
