package policy

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)

// The homelab the seeds' regressions happen in: node delly runs LXC 141
// (homepage-docker) and LXC 142 (media-server); jellyfin is a docker
// container inside media-server, reached through it.
var (
	delly    = Resource{ID: "node:delly", Kind: "node", Name: "delly", Aliases: []string{"pve1"}, Target: "delly"}
	homepage = Resource{ID: "lxc:delly:141", Kind: "lxc", Name: "homepage-docker", Aliases: []string{"141"},
		Parent: "node:delly", Node: "delly", Target: "homepage-docker"}
	mediaServer = Resource{ID: "lxc:delly:142", Kind: "lxc", Name: "media-server",
		Parent: "node:delly", Node: "delly", Target: "media-server"}
	jellyfin = Resource{ID: "docker_container:media-server:abc123", Kind: "docker_container", Name: "jellyfin",
		Parent: "lxc:delly:142", Node: "media-server", Target: "media-server"}
)

func homelab(now time.Time) *ResolvedContext {
	c := NewResolvedContext()
	for _, r := range []Resource{delly, homepage, mediaServer, jellyfin} {
		c.Add(r, now)
	}
	return c
}

func TestResolvedLookup(t *testing.T) {
	c := homelab(t0)
	tests := []struct {
		key  string
		want ResourceID
	}{
		{"delly", "node:delly"},
		{"DELLY", "node:delly"},
		{"  Delly ", "node:delly"},
		{"node:delly", "node:delly"},
		{"NODE:Delly", "node:delly"},
		{"pve1", "node:delly"},
		{"homepage-docker", "lxc:delly:141"},
		{"141", "lxc:delly:141"},
		{"lxc:delly:141", "lxc:delly:141"},
		{"jellyfin", "docker_container:media-server:abc123"},
		{"docker_container:media-server:abc123", "docker_container:media-server:abc123"},
		{"plex", ""},
		{"", ""},
		{"lxc:delly", ""},
	}
	for _, tt := range tests {
		r, ok := c.Lookup(tt.key, t0)
		if ok != (tt.want != "") || r.ID != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.key, r.ID, ok, tt.want)
		}
	}
}

func TestResolvedLookupPrecedenceAndCopies(t *testing.T) {
	c := NewResolvedContext()
	// "web" is one resource's alias and another's name; "db" is an ID-like
	// alias shadowed by a real ID.
	c.Add(Resource{ID: "vm:a:1", Name: "frontend", Aliases: []string{"web"}}, t0)
	c.Add(Resource{ID: "vm:a:2", Name: "web"}, t0)
	c.Add(Resource{ID: "db", Name: "database"}, t0)
	c.Add(Resource{ID: "vm:a:3", Name: "other", Aliases: []string{"db"}}, t0.Add(time.Second))
	if r, _ := c.Lookup("web", t0); r.ID != "vm:a:2" {
		t.Errorf("name should beat alias, got %s", r.ID)
	}
	if r, _ := c.Lookup("db", t0); r.ID != "db" {
		t.Errorf("ID should beat alias, got %s", r.ID)
	}
	r, _ := c.Lookup("frontend", t0)
	r.Aliases[0] = "mutated"
	if again, _ := c.Lookup("frontend", t0); again.Aliases[0] != "web" {
		t.Error("Lookup returned a resource sharing memory with the context")
	}
	if r.Target != "frontend" {
		t.Errorf("empty Target not defaulted to Name: %q", r.Target)
	}
}

// Two hosts may each run a "web": the name answers with the one the session
// used last, and both stay resolvable by ID.
func TestResolvedLookupSharedName(t *testing.T) {
	c := NewResolvedContext()
	c.Add(Resource{ID: "lxc:a:1", Name: "web"}, t0)
	c.Add(Resource{ID: "lxc:b:1", Name: "web"}, t0.Add(time.Minute))
	if r, _ := c.Lookup("web", t0.Add(2*time.Minute)); r.ID != "lxc:b:1" {
		t.Fatalf("got %s, want the most recently used", r.ID)
	}
	c.Lookup("lxc:a:1", t0.Add(3*time.Minute))
	if r, _ := c.Lookup("web", t0.Add(4*time.Minute)); r.ID != "lxc:a:1" {
		t.Fatalf("got %s after using lxc:a:1", r.ID)
	}
}

func TestResolvedReAddReindexes(t *testing.T) {
	c := NewResolvedContext()
	c.AddExplicit(Resource{ID: "lxc:delly:141", Name: "homepage", Aliases: []string{"hp"}, Node: "delly"}, t0)
	c.Pin("lxc:delly:141")
	c.Add(Resource{ID: "lxc:delly:141", Name: "homepage-docker", Aliases: []string{"dash", "dash", " "}, Node: "delly"}, t0)
	for key, want := range map[string]bool{"homepage": false, "hp": false, "homepage-docker": true, "dash": true} {
		if _, ok := c.Lookup(key, t0); ok != want {
			t.Errorf("Lookup(%q) found=%v, want %v", key, ok, want)
		}
	}
	if r, _ := c.Lookup("dash", t0); !reflect.DeepEqual(r.Aliases, []string{"dash"}) {
		t.Errorf("aliases not cleaned: %q", r.Aliases)
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d", c.Len())
	}
	// The explicit mark and the pin survive a refresh from bulk discovery.
	if b := c.CheckRouting("delly", t0); b == nil {
		t.Error("re-adding dropped the explicit mark")
	}
	if c.Empty(t0.Add(24 * time.Hour)) {
		t.Error("re-adding dropped the pin")
	}
}

func TestResolvedIgnoresResourceWithoutID(t *testing.T) {
	c := NewResolvedContext()
	c.Add(Resource{Name: "ghost"}, t0)
	c.AddExplicit(Resource{Name: "ghost"}, t0)
	c.MarkExplicit("nope", t0)
	c.Pin("nope")
	if c.Len() != 0 {
		t.Fatalf("Len = %d, want 0", c.Len())
	}
}

func TestResolvedTTLSliding(t *testing.T) {
	c := NewResolvedContext()
	c.Add(delly, t0)
	c.Add(homepage, t0)
	at := t0
	// Each access restarts the window: touching delly every 44 minutes keeps
	// it for hours while homepage, untouched, expires.
	for range 5 {
		at = at.Add(44 * time.Minute)
		if _, ok := c.Lookup("delly", at); !ok {
			t.Fatalf("delly expired at %v despite access every 44m", at.Sub(t0))
		}
	}
	if _, ok := c.Lookup("homepage-docker", at); ok {
		t.Fatal("homepage-docker outlived its TTL")
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d after expiry, want 1", c.Len())
	}
	// Exactly at the end of the window the resource is gone.
	if c.Empty(at.Add(DefaultResolvedTTL - time.Nanosecond)) {
		t.Fatal("expired a nanosecond early")
	}
	if !c.Empty(at.Add(DefaultResolvedTTL)) {
		t.Fatal("still present when the TTL ran out")
	}
}

func TestResolvedTTLChecksAreAccess(t *testing.T) {
	c := homelab(t0)
	at := t0.Add(40 * time.Minute)
	if b := c.CheckWrite("delly", at); b != nil {
		t.Fatal(b)
	}
	at = at.Add(40 * time.Minute) // 80m after add, 40m after the check
	if _, ok := c.Lookup("delly", at); !ok {
		t.Fatal("a passed write check did not refresh the TTL")
	}
	if _, ok := c.Lookup("jellyfin", at); ok {
		t.Fatal("untouched resource survived")
	}
}

func TestResolvedTTLPinned(t *testing.T) {
	c := homelab(t0)
	c.Pin("lxc:delly:141")
	c.Pin("lxc:delly:141") // idempotent
	later := t0.Add(10 * time.Hour)
	if _, ok := c.Lookup("homepage-docker", later); !ok {
		t.Fatal("pinned resource expired")
	}
	if c.Len() != 1 {
		t.Fatalf("Len = %d, want only the pinned one", c.Len())
	}
}

// A call with an earlier time than one already seen (clock skew between
// replicas) must not resurrect or reorder anything.
func TestResolvedClockNeverRunsBackwards(t *testing.T) {
	c := NewResolvedContext()
	c.Add(delly, t0.Add(time.Hour))
	c.Add(homepage, t0) // skewed: treated as t0+1h
	if !c.Empty(t0.Add(time.Hour + DefaultResolvedTTL)) {
		t.Fatal("skewed add kept an entry past the TTL measured from the latest time")
	}
}

func TestResolvedLRUEviction(t *testing.T) {
	res := func(i int) Resource {
		return Resource{ID: ResourceID(fmt.Sprintf("lxc:n:%d", i)), Name: fmt.Sprintf("ct%d", i)}
	}
	t.Run("oldest goes at 501", func(t *testing.T) {
		c := NewResolvedContext()
		for i := range DefaultResolvedMaxEntries {
			c.Add(res(i), t0.Add(time.Duration(i)*time.Millisecond))
		}
		if c.Len() != DefaultResolvedMaxEntries {
			t.Fatalf("Len = %d", c.Len())
		}
		c.Add(res(500), t0.Add(time.Second))
		if c.Len() != DefaultResolvedMaxEntries {
			t.Fatalf("Len = %d after the 501st, want %d", c.Len(), DefaultResolvedMaxEntries)
		}
		if _, ok := c.Lookup("ct0", t0.Add(time.Second)); ok {
			t.Fatal("least recently used entry not evicted")
		}
		for _, k := range []string{"ct1", "ct499", "ct500"} {
			if _, ok := c.Lookup(k, t0.Add(time.Second)); !ok {
				t.Fatalf("%s evicted", k)
			}
		}
	})
	t.Run("pinned and recently used are spared", func(t *testing.T) {
		c := NewResolvedContext()
		for i := range DefaultResolvedMaxEntries {
			c.Add(res(i), t0.Add(time.Duration(i)*time.Millisecond))
		}
		c.Pin("lxc:n:0")
		c.Lookup("ct1", t0.Add(time.Second)) // now most recently used
		c.Add(res(500), t0.Add(2*time.Second))
		c.Add(res(501), t0.Add(3*time.Second))
		for k, want := range map[string]bool{"ct0": true, "ct1": true, "ct2": false, "ct3": false, "ct4": true, "ct501": true} {
			if _, ok := c.Lookup(k, t0.Add(3*time.Second)); ok != want {
				t.Errorf("%s present=%v, want %v", k, ok, want)
			}
		}
		if c.Len() != DefaultResolvedMaxEntries {
			t.Fatalf("Len = %d", c.Len())
		}
	})
	t.Run("only pins hold it over the bound", func(t *testing.T) {
		c := NewResolvedContext()
		c.maxEntries = 3
		for i := range 3 {
			c.Add(res(i), t0)
			c.Pin(res(i).ID)
		}
		c.Add(res(3), t0)
		if _, ok := c.Lookup("ct3", t0); !ok || c.Len() != 4 {
			t.Fatalf("just-added resource evicted (Len %d); it would be unusable", c.Len())
		}
		c.Add(res(4), t0)
		if _, ok := c.Lookup("ct3", t0); ok || c.Len() != 4 {
			t.Fatalf("unpinned overflow not evicted (Len %d)", c.Len())
		}
	})
}

// Add, Lookup and every check are general access; only AddExplicit and
// MarkExplicit count for routing.
func TestResolvedExplicitVersusGeneralAccess(t *testing.T) {
	tests := []struct {
		name     string
		access   func(c *ResolvedContext)
		explicit bool
	}{
		{"Add", func(c *ResolvedContext) { c.Add(homepage, t0) }, false},
		{"Lookup", func(c *ResolvedContext) { c.Lookup("homepage-docker", t0) }, false},
		{"CheckWrite", func(c *ResolvedContext) { c.CheckWrite("homepage-docker", t0) }, false},
		{"CheckRead", func(c *ResolvedContext) { c.CheckRead("homepage-docker", t0) }, false},
		{"Pin", func(c *ResolvedContext) { c.Pin(homepage.ID) }, false},
		{"AddExplicit", func(c *ResolvedContext) { c.AddExplicit(homepage, t0) }, true},
		{"MarkExplicit", func(c *ResolvedContext) { c.MarkExplicit(homepage.ID, t0) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := homelab(t0)
			tt.access(c)
			b := c.CheckWrite("delly", t0)
			if (b != nil) != tt.explicit {
				t.Fatalf("write to delly after %s: %v, want blocked=%v", tt.name, b, tt.explicit)
			}
		})
	}
}

func TestResolvedCheckWriteStrict(t *testing.T) {
	c := homelab(t0)
	for _, target := range []string{"delly", "PVE1", "node:delly", "jellyfin", "141"} {
		if b := c.CheckWrite(target, t0); b != nil {
			t.Errorf("CheckWrite(%q) = %v, want allowed", target, b)
		}
	}
	tests := []struct {
		target      string
		suggestions []string
	}{
		{"jelyfin", []string{"jellyfin"}},                                       // typo
		{"homepage", []string{"homepage-docker"}},                               // containment
		{"media", []string{"jellyfin", "media-server"}},                         // containment, also in jellyfin's ID
		{"media-srv", []string{"jellyfin", "media-server"}},                     // shared part
		{"lxc:delly:999", []string{"delly", "homepage-docker", "media-server"}}, // shared ID parts
		{"plex", []string{}},
	}
	for _, tt := range tests {
		b := c.CheckWrite(tt.target, t0)
		assertGuardBlock(t, b, CodeStrictResolution, true, "use query or discover to resolve "+tt.target+" first")
		if got := b.Details["suggestions"].([]string); !reflect.DeepEqual(got, tt.suggestions) {
			t.Errorf("CheckWrite(%q) suggestions = %q, want %q", tt.target, got, tt.suggestions)
		}
		if b.Details["target"] != tt.target || !strings.Contains(b.Message, tt.target) {
			t.Errorf("block does not name the target: %+v", b)
		}
	}
}

func TestResolvedCheckWriteExpiredOrEmpty(t *testing.T) {
	c := homelab(t0)
	b := c.CheckWrite("delly", t0.Add(DefaultResolvedTTL))
	assertGuardBlock(t, b, CodeStrictResolution, true, "resolve delly")
	for _, target := range []string{"", "   "} {
		assertGuardBlock(t, c.CheckWrite(target, t0), CodeInvalidInput, false, "target")
		assertGuardBlock(t, c.CheckRead(target, t0), CodeInvalidInput, false, "target")
	}
}

func TestResolvedSuggestionsBounded(t *testing.T) {
	c := NewResolvedContext()
	for i := range 20 {
		c.Add(Resource{ID: ResourceID(fmt.Sprintf("lxc:n:%d", i)), Name: fmt.Sprintf("web-%02d", i)}, t0)
	}
	b := c.CheckWrite("web", t0)
	if got := b.Details["suggestions"].([]string); len(got) != maxSuggestions || got[0] != "web-00" {
		t.Fatalf("suggestions = %q", got)
	}
}

// The scoped read bypass: a read may name an unresolved target once the
// session has resolved anything, never before.
func TestResolvedCheckReadScopedBypass(t *testing.T) {
	c := NewResolvedContext()
	b := c.CheckRead("web1", t0)
	assertGuardBlock(t, b, CodeStrictResolution, true, "use query or discover to resolve web1 first")
	assertGuardBlock(t, c.CheckReadScope("web1", t0), CodeStrictResolution, true, "resolve web1")

	c.Add(delly, t0)
	for _, target := range []string{"delly", "web1", "10.0.0.7"} {
		if b := c.CheckRead(target, t0); b != nil {
			t.Errorf("CheckRead(%q) with context = %v", target, b)
		}
		if b := c.CheckReadScope(target, t0); b != nil {
			t.Errorf("CheckReadScope(%q) with context = %v", target, b)
		}
	}
	if b := c.CheckWrite("web1", t0); b == nil {
		t.Error("the read bypass leaked into writes")
	}
	// When the context expires the bypass goes with it.
	if b := c.CheckRead("web1", t0.Add(DefaultResolvedTTL)); b == nil {
		t.Error("read allowed after every resource expired")
	}
}

// Seed regression (Failure Mode 5, the homepage scenario): the user mentions
// @homepage-docker; a file edit aimed at the node delly is refused, naming
// the LXC, and the suggested retry reaches the LXC.
func TestResolvedRoutingMismatchHomepage(t *testing.T) {
	c := homelab(t0)
	c.AddExplicit(homepage, t0.Add(time.Minute))
	at := t0.Add(2 * time.Minute)
	for _, target := range []string{"delly", "DELLY", "node:delly", "pve1"} {
		b := c.CheckWrite(target, at)
		assertGuardBlock(t, b, CodeRoutingMismatch, true, "retry with target=homepage-docker")
		if b.SuggestedRewrite != "homepage-docker" {
			t.Errorf("%s: SuggestedRewrite = %q", target, b.SuggestedRewrite)
		}
		if b.Details["target_resource_id"] != "lxc:delly:141" {
			t.Errorf("%s: target_resource_id = %v", target, b.Details["target_resource_id"])
		}
		if got := b.Details["more_specific"]; !reflect.DeepEqual(got, []string{"homepage-docker"}) {
			t.Errorf("%s: more_specific = %v", target, got)
		}
		if !strings.Contains(b.Message, "lxc:delly:141") || !strings.Contains(b.Message, "homepage-docker") {
			t.Errorf("%s: message does not name the child: %q", target, b.Message)
		}
	}
	for _, target := range []string{"homepage-docker", "lxc:delly:141", "141", "media-server", "jellyfin"} {
		if b := c.CheckWrite(target, at); b != nil {
			t.Errorf("CheckWrite(%q) = %v, want allowed", target, b)
		}
	}
	// Reads that act inside a resource are routed too; reads about it are not.
	assertGuardBlock(t, c.CheckRead("delly", at), CodeRoutingMismatch, true, "homepage-docker")
	if b := c.CheckReadScope("delly", at); b != nil {
		t.Errorf("CheckReadScope(delly) = %v; node metrics should stay readable", b)
	}
}

// The seed's jellyfin routing chain: a docker container inside LXC
// media-server on node delly, reached through media-server.
func TestResolvedRoutingMismatchNestedChain(t *testing.T) {
	t.Run("reached through its host", func(t *testing.T) {
		c := homelab(t0)
		c.MarkExplicit(jellyfin.ID, t0)
		b := c.CheckWrite("delly", t0)
		assertGuardBlock(t, b, CodeRoutingMismatch, true, "retry with target=media-server")
		if b.SuggestedRewrite != "media-server" || b.Details["target_resource_id"] != string(jellyfin.ID) {
			t.Fatalf("got %+v", b)
		}
		// The suggested target is the child's route, so the retry passes.
		if b := c.CheckWrite("media-server", t0); b != nil {
			t.Fatalf("retry with the suggested target blocked: %v", b)
		}
	})
	t.Run("reached directly", func(t *testing.T) {
		c := homelab(t0)
		direct := jellyfin
		direct.Target = "jellyfin"
		c.AddExplicit(direct, t0)
		for _, target := range []string{"delly", "media-server", "lxc:delly:142"} {
			b := c.CheckWrite(target, t0)
			assertGuardBlock(t, b, CodeRoutingMismatch, true, "retry with target=jellyfin")
		}
		if b := c.CheckWrite("jellyfin", t0); b != nil {
			t.Fatal(b)
		}
	})
}

// Seed regression: bulk discovery must not poison routing.
func TestResolvedRoutingBulkDiscoveryDoesNotPoison(t *testing.T) {
	c := NewResolvedContext()
	c.Add(delly, t0)
	for i := range 50 {
		c.Add(Resource{
			ID: ResourceID(fmt.Sprintf("lxc:delly:%d", 200+i)), Kind: "lxc", Name: fmt.Sprintf("ct-%d", i),
			Parent: "node:delly", Node: "delly",
		}, t0)
	}
	for i := range 50 {
		c.Lookup(fmt.Sprintf("ct-%d", i), t0) // the model looks at each one
	}
	if b := c.CheckWrite("delly", t0); b != nil {
		t.Fatalf("write to delly after bulk discovery = %v", b)
	}
	if b := c.CheckRead("delly", t0); b != nil {
		t.Fatalf("read on delly after bulk discovery = %v", b)
	}
	// Seed regression: an explicit get of one of them does count.
	c.MarkExplicit("lxc:delly:207", t0)
	b := c.CheckWrite("delly", t0)
	assertGuardBlock(t, b, CodeRoutingMismatch, true, "retry with target=ct-7")
}

func TestResolvedRoutingIntentOrder(t *testing.T) {
	// Child meant first, then the node itself: the node is the intent now.
	c := homelab(t0)
	c.AddExplicit(homepage, t0)
	c.AddExplicit(delly, t0.Add(time.Minute))
	if b := c.CheckWrite("delly", t0.Add(2*time.Minute)); b != nil {
		t.Fatalf("node mentioned after the child still blocked: %v", b)
	}
	// Mentioning the child again makes it the intent again.
	c.MarkExplicit(homepage.ID, t0.Add(3*time.Minute))
	if b := c.CheckWrite("delly", t0.Add(4*time.Minute)); b == nil {
		t.Fatal("child mentioned after the node not enforced")
	}
	// Both in one message ("copy from @delly to @homepage-docker"): the node
	// was named explicitly, so it may be targeted.
	c = homelab(t0)
	c.AddExplicit(homepage, t0)
	c.AddExplicit(delly, t0)
	if b := c.CheckWrite("delly", t0); b != nil {
		t.Fatalf("node and child mentioned together: %v", b)
	}
}

func TestResolvedRoutingSeveralChildren(t *testing.T) {
	c := homelab(t0)
	c.AddExplicit(homepage, t0)
	c.AddExplicit(mediaServer, t0.Add(time.Minute))
	b := c.CheckWrite("delly", t0.Add(time.Minute))
	assertGuardBlock(t, b, CodeRoutingMismatch, true, "retry with target=media-server")
	if got := b.Details["more_specific"]; !reflect.DeepEqual(got, []string{"media-server", "homepage-docker"}) {
		t.Fatalf("more_specific = %v, want most recent first", got)
	}
	if got := b.Details["more_specific_resource_ids"]; !reflect.DeepEqual(got, []string{"lxc:delly:142", "lxc:delly:141"}) {
		t.Fatalf("more_specific_resource_ids = %v", got)
	}
}

func TestResolvedRoutingEdges(t *testing.T) {
	t.Run("sibling is not a parent", func(t *testing.T) {
		c := homelab(t0)
		c.AddExplicit(homepage, t0)
		if b := c.CheckWrite("media-server", t0); b != nil {
			t.Fatal(b)
		}
	})
	t.Run("unresolved node named by the child", func(t *testing.T) {
		c := NewResolvedContext()
		c.AddExplicit(homepage, t0) // delly itself never resolved
		b := c.CheckRouting("delly", t0)
		assertGuardBlock(t, b, CodeRoutingMismatch, true, "homepage-docker")
		// A read passes the scoped bypass, and is still routed.
		assertGuardBlock(t, c.CheckRead("delly", t0), CodeRoutingMismatch, true, "homepage-docker")
		// A write fails strict resolution first.
		assertGuardBlock(t, c.CheckWrite("delly", t0), CodeStrictResolution, true, "resolve delly")
	})
	t.Run("expired child no longer routes", func(t *testing.T) {
		c := homelab(t0)
		c.AddExplicit(homepage, t0)
		at := t0.Add(30 * time.Minute)
		c.Lookup("delly", at)
		if b := c.CheckWrite("delly", t0.Add(50*time.Minute)); b != nil {
			t.Fatalf("expired child still blocks: %v", b)
		}
	})
	t.Run("parent cycle terminates", func(t *testing.T) {
		c := NewResolvedContext()
		c.Add(Resource{ID: "vm:x:1", Name: "a", Parent: "vm:x:2"}, t0)
		c.AddExplicit(Resource{ID: "vm:x:2", Name: "b", Parent: "vm:x:1"}, t0)
		c.Add(Resource{ID: "node:z", Name: "z"}, t0)
		if b := c.CheckWrite("z", t0); b != nil {
			t.Fatal(b)
		}
		if b := c.CheckWrite("a", t0); b == nil {
			t.Fatal("a is b's parent")
		}
	})
	t.Run("empty target", func(t *testing.T) {
		c := homelab(t0)
		c.AddExplicit(homepage, t0)
		if b := c.CheckRouting("", t0); b != nil {
			t.Fatal(b)
		}
	})
}

func TestResolvedReset(t *testing.T) {
	c := homelab(t0)
	c.AddExplicit(homepage, t0)
	c.Pin(delly.ID)
	c.Reset()
	got, _ := json.Marshal(c)
	want, _ := json.Marshal(NewResolvedContext())
	if string(got) != string(want) {
		t.Fatalf("reset context %s differs from a new one %s", got, want)
	}
	if c.Len() != 0 || !c.Empty(t0) {
		t.Fatalf("Len = %d after Reset", c.Len())
	}
	c.Add(delly, t0)
	if b := c.CheckWrite("delly", t0); b != nil {
		t.Fatalf("explicit mark survived Reset: %v", b)
	}
}

func TestResolvedZeroValueUsable(t *testing.T) {
	var c ResolvedContext
	if !c.Empty(t0) || c.Len() != 0 {
		t.Fatal("zero value not empty")
	}
	c.Add(delly, t0)
	if _, ok := c.Lookup("delly", t0); !ok {
		t.Fatal("zero value lost an Add")
	}
	if !c.Empty(t0.Add(DefaultResolvedTTL)) {
		t.Fatal("zero value has no default TTL")
	}
}

func TestResolvedJSONRoundTrip(t *testing.T) {
	c := homelab(t0)
	c.Add(Resource{ID: "vm:minipc:203", Kind: "vm", Name: "builder", Aliases: []string{"ci", "203"}, Node: "minipc"}, t0.Add(time.Minute))
	c.AddExplicit(homepage, t0.Add(2*time.Minute))
	c.Pin(delly.ID)
	c.Lookup("jellyfin", t0.Add(3*time.Minute))
	c.Empty(t0.Add(4 * time.Minute)) // advances the clock past every access

	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got ResolvedContext
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, data)
	}
	again, err := json.Marshal(&got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Fatalf("round trip changed the context:\n got %s\nwant %s", again, data)
	}

	// The restored context behaves like the original in every respect:
	// lookups, routing, pins, expiry and LRU order.
	for _, rc := range []*ResolvedContext{c, &got} {
		at := t0.Add(5 * time.Minute)
		if r, ok := rc.Lookup("ci", at); !ok || r.ID != "vm:minipc:203" {
			t.Fatalf("alias lookup after round trip: %v %v", r, ok)
		}
		assertGuardBlock(t, rc.CheckWrite("delly", at), CodeRoutingMismatch, true, "homepage-docker")
		rc.maxEntries = rc.Len()
		rc.Add(Resource{ID: "lxc:delly:300", Name: "new"}, at)
		// LRU order, oldest first: media-server, homepage, jellyfin, builder.
		if _, ok := rc.Lookup("media-server", at); ok {
			t.Fatal("LRU order not preserved: media-server should have been evicted")
		}
		rc.maxEntries = DefaultResolvedMaxEntries
		end := t0.Add(4*time.Minute + DefaultResolvedTTL + 2*time.Minute)
		if rc.Empty(end) || rc.Len() != 1 {
			t.Fatalf("after expiry Len = %d, want only the pinned node", rc.Len())
		}
	}
}

func TestResolvedJSONForms(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		data, _ := json.Marshal(NewResolvedContext())
		if string(data) != `{"ttl":"45m0s","max_entries":500,"entries":[]}` {
			t.Fatalf("got %s", data)
		}
		var c ResolvedContext
		if err := json.Unmarshal(data, &c); err != nil || c.Len() != 0 {
			t.Fatalf("err %v len %d", err, c.Len())
		}
	})
	bad := map[string]string{
		"no ttl":       `{"max_entries":500,"entries":[]}`,
		"negative ttl": `{"ttl":"-1m","max_entries":500,"entries":[]}`,
		"no size":      `{"ttl":"45m0s","entries":[]}`,
		"no id":        `{"ttl":"45m0s","max_entries":500,"entries":[{"resource":{"name":"x"},"last_access":"2026-03-14T09:30:00Z"}]}`,
		"duplicate id": `{"ttl":"45m0s","max_entries":500,"entries":[{"resource":{"id":"a"},"last_access":"2026-03-14T09:30:00Z"},{"resource":{"id":"a"},"last_access":"2026-03-14T09:30:00Z"}]}`,
		"not json":     `{"ttl":`,
	}
	for name, in := range bad {
		var c ResolvedContext
		if err := json.Unmarshal([]byte(in), &c); err == nil {
			t.Errorf("%s: accepted %s", name, in)
		}
	}
}

func TestResolvedConcurrentUse(t *testing.T) {
	c := homelab(t0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				at := t0.Add(time.Duration(i) * time.Second)
				c.Add(Resource{ID: ResourceID(fmt.Sprintf("lxc:g%d:%d", g, i)), Name: fmt.Sprintf("g%d-%d", g, i)}, at)
				c.Lookup("delly", at)
				c.CheckWrite("homepage-docker", at)
				c.CheckRead("delly", at)
				if i%50 == 0 {
					c.MarkExplicit(homepage.ID, at)
					if _, err := json.Marshal(c); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if c.Len() != DefaultResolvedMaxEntries {
		t.Fatalf("Len = %d", c.Len())
	}
}

// benchContext is a full context: a node with 499 guests, three of them
// explicitly mentioned.
func benchContext() *ResolvedContext {
	c := NewResolvedContext()
	c.Add(delly, t0)
	for i := range DefaultResolvedMaxEntries - 1 {
		c.Add(Resource{
			ID: ResourceID(fmt.Sprintf("lxc:delly:%d", 1000+i)), Kind: "lxc", Name: fmt.Sprintf("guest-%d", i),
			Aliases: []string{fmt.Sprintf("%d", 1000+i)}, Parent: "node:delly", Node: "delly",
		}, t0)
	}
	for _, id := range []ResourceID{"lxc:delly:1001", "lxc:delly:1002", "lxc:delly:1003"} {
		c.MarkExplicit(id, t0)
	}
	return c
}

func BenchmarkResolvedLookup(b *testing.B) {
	c := benchContext()
	keys := []string{"guest-250", "lxc:delly:1400", "1100", "Guest-7", "missing"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c.Lookup(keys[i%len(keys)], t0)
		i++
	}
}

func BenchmarkResolvedCheckWrite(b *testing.B) {
	c := benchContext()
	b.ReportAllocs()
	for b.Loop() {
		if blk := c.CheckWrite("guest-250", t0); blk != nil {
			b.Fatal(blk)
		}
	}
}

func BenchmarkResolvedCheckWriteRoutingMismatch(b *testing.B) {
	c := benchContext()
	b.ReportAllocs()
	for b.Loop() {
		if blk := c.CheckWrite("delly", t0); blk == nil {
			b.Fatal("want a mismatch")
		}
	}
}
