package bot

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/agent/facts"
	"github.com/vigilops/vigil/policy"
)

// fakeResolver knows web1 and the two checkout services, and recognises
// them in text the way the inventory resolver would.
type fakeResolver struct{}

var (
	web1        = policy.Resource{ID: "host:web1", Kind: "host", Name: "web1", Target: "web1"}
	checkoutAPI = policy.Resource{ID: "service:web1:checkout-api", Kind: "service", Name: "checkout-api", Target: "checkout-api", Parent: "host:web1"}
	checkoutDB  = policy.Resource{ID: "service:web1:checkout-db", Kind: "service", Name: "checkout-db", Target: "checkout-db", Parent: "host:web1"}
)

func (fakeResolver) ResolveMention(name string) ([]policy.Resource, bool) {
	if name == "web1" {
		return []policy.Resource{web1}, true
	}
	return nil, false
}

func (fakeResolver) RecognizeMentions(text string) []Recognized {
	var out []Recognized
	if strings.Contains(text, "checkout api") {
		out = append(out, Recognized{Text: "checkout api", Chains: [][]policy.Resource{{checkoutAPI, web1}}, Confidence: 0.95})
	} else if strings.Contains(text, "checkout") {
		out = append(out, Recognized{Text: "checkout", Chains: [][]policy.Resource{{checkoutAPI, web1}, {checkoutDB, web1}}, Confidence: 0.8, Ambiguous: true})
	}
	return out
}

type fakeRunbooks struct {
	err       error
	resources []string
}

func (f *fakeRunbooks) Offer(q string, resources []string) (string, error) {
	f.resources = resources
	if f.err != nil {
		return "", f.err
	}
	return "Runbooks that may apply: runbooks/checkout.md", nil
}
func (f *fakeRunbooks) Draft(*agent.RunRecord, []facts.Fact) (RunbookDraft, error) {
	return RunbookDraft{}, ErrNotEligible
}
func (f *fakeRunbooks) Save(string, string) (string, error) { return "", errors.New("no") }

func testBot(rb Runbooks) *conversation {
	return &conversation{runtime: &runtime{opt: Options{Resolver: fakeResolver{}, Runbooks: rb}, log: slog.New(slog.DiscardHandler), now: time.Now}}
}

func TestMessageContext(t *testing.T) {
	rb := &fakeRunbooks{}
	b := testBot(rb)
	s := &agent.Session{Policy: policy.NewSessionState()}
	got := b.messageContext(s, Message{Text: "why is checkout api slow on @web1 and @nope?", Mentions: []Mention{{Name: "web1"}, {Name: "nope"}}})
	want := []string{
		"Context from vigil (authoritative):\n- @web1 is host:web1 (host); use target \"web1\"\n- @nope: not found in inventory\n" +
			"- \"checkout api\" probably means service:web1:checkout-api (service); use target \"checkout-api\"; routing: service:web1:checkout-api -> host:web1",
		"resolve it with query or discover before you change it",
		"\n\nRunbooks that may apply: runbooks/checkout.md",
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Fatalf("context lacks %q:\n%s", w, got)
		}
	}
	if strings.Count(got, "Context from vigil") != 1 {
		t.Fatalf("two headers:\n%s", got)
	}
	// The @mention is resolved; the recognised name is not.
	if _, ok := s.Policy.Context.Lookup("web1", time.Now()); !ok {
		t.Fatal("@web1 not resolved")
	}
	if _, ok := s.Policy.Context.Lookup("checkout-api", time.Now()); ok {
		t.Fatal("a name recognised without @ was resolved")
	}
	if strings.Join(rb.resources, ",") != "web1,nope,checkout-api" {
		t.Fatalf("runbooks asked about %v", rb.resources)
	}

	// Ambiguous: listed, nothing resolved, no resource passed on as sure.
	got = b.messageContext(&agent.Session{Policy: policy.NewSessionState()}, Message{Text: "why is checkout slow"})
	if !strings.HasPrefix(got, "Context from vigil (authoritative):\n- \"checkout\" may mean any of: checkout-api (service:web1:checkout-api, service), checkout-db (service:web1:checkout-db, service)") {
		t.Fatalf("ambiguous context:\n%s", got)
	}
	if len(rb.resources) != 0 {
		t.Fatalf("an ambiguous name was passed on as a resource: %v", rb.resources)
	}

	// Runbooks that fail to load do not stop the question.
	b = testBot(&fakeRunbooks{err: errors.New("disk gone")})
	if got := b.messageContext(&agent.Session{Policy: policy.NewSessionState()}, Message{Text: "hello"}); got != "" {
		t.Fatalf("context %q", got)
	}
}
