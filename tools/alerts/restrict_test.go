package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
)

// universal are matcher sets that match every alert carrying the labels
// they name (or every alert at all): each is refused.
var universal = [][]string{
	{`alertname!=""`},
	{`alertname=~".+"`},
	{`alertname=~".*"`},
	{`alertname=~"HighLatency|.+"`},
	{`alertname=~".*x.*|.+"`},
	{`alertname=~"(?:HighLatency)|(?s:.)+"`},
	{`alertname=~"[^x].*|x.*"`},
	{`alertname=~"\\S+|\\s+|"`},
	{`alertname=~"[a-z].*"`},
	{`alertname=~"(HighLatency)?.*"`},
	{`alertname=~"H?.+"`},
	{`alertname=~".{1,}"`},
	{`alertname=~"\\w*.*"`},
	{`alertname=~"(?i).+"`},
	{`instance=~".+:9100|.*"`},
	{`alertname!~"NeverFires"`},
	{`alertname!~""`},
	{`env!=prod`, `alertname!=""`},
	{`severity=""`},
	{`alertname=~"HighLatency|"`},
	{`alertname=~"x*"`},
	{`alertname=~"^.*$"`},
	{`alertname=~"\\b.+"`},
}

// restrictive are matcher sets with at least one matcher that names
// something; they pass the static guard.
var restrictive = [][]string{
	{`alertname=HighLatency`},
	{`alertname="HighLatency"`, `instance=~".+"`},
	{`service=~"checkout|cart"`},
	{`instance=~"web-.*"`},
	{`instance=~".*:9100"`},
	{`alertname=~"(?i)highlatency"`},
	{`alertname=~"High.*|Disk.*"`},
	{`alertname=~"[Hh]igh.*"`},
	{`alertname=~"x+"`},
	{`alertname=~"a?b.*"`},
	{`env!=prod`, `job="node"`},
}

func TestRestrictiveGuard(t *testing.T) {
	tool := New(Config{})
	silence := func(ms []string) string {
		raw, _ := json.Marshal(map[string]any{"action": "silence", "matchers": ms, "duration": "1h", "comment": "maintenance"})
		return string(raw)
	}
	for _, ms := range universal {
		_, b := tool.Propose(json.RawMessage(silence(ms)))
		if b == nil || b.Code != policy.CodeInvalidInput || !strings.Contains(b.Message, "could silence every alert") {
			t.Errorf("%v: block = %+v, want a refusal saying it could silence every alert", ms, b)
		}
	}
	for _, ms := range restrictive {
		if _, b := tool.Propose(json.RawMessage(silence(ms))); b != nil {
			t.Errorf("%v: refused: %+v", ms, b)
		}
	}
	// The refusal says why for each matcher.
	_, b := tool.Propose(json.RawMessage(silence([]string{`alertname!=""`, `job=~"a|.+"`})))
	if b == nil || !strings.Contains(b.Message, `alertname!=""`) || !strings.Contains(b.Message, "accepts every value but one") ||
		!strings.Contains(b.Message, "no literal start or end") {
		t.Errorf("refusal does not explain each matcher: %+v", b)
	}
}

// The guard's proof is constructive: a restrictive regex matcher refuses
// some one-character value, which Alertmanager's own anchoring confirms.
func FuzzRestrictive(f *testing.F) {
	for _, ms := range append(universal, restrictive...) {
		for _, m := range ms {
			f.Add(m)
		}
	}
	f.Add(`a=~"[a-h]x|[i-p]y"`)
	f.Add(`a=~"(?i)k"`)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMatcher(s)
		if err != nil || !m.Restrictive() {
			return
		}
		if m.MatchesEmpty() {
			t.Fatalf("%q is restrictive but matches a missing label", s)
		}
		if !m.IsRegex {
			return
		}
		re := regexp.MustCompile("^(?:" + m.Value + ")$")
		// Some character of a small alphabet is not a whole match: the
		// allowed first (or last) characters are at most maxNarrowRunes.
		for r := rune(0x21); r < 0x21+4*maxNarrowRunes+32; r++ {
			if !re.MatchString(string(r)) {
				return
			}
		}
		t.Fatalf("%q is restrictive but matches every one-character value tried", s)
	})
}

// Against a real Alertmanager: the silences the guard refuses do silence
// every alert there, the ones it lets through do not, and a silence that
// would mute every alert firing now is refused on the card and again
// before it is created.
func TestGuardAgainstRealAlertmanager(t *testing.T) {
	am, tool, client := startAM(t)
	postAlerts(t, am.URL,
		alert("HighLatency", "page", "web1:9100", "checkout p99 above 2s"),
		alert("DiskFull", "critical", "db1:9100", "disk 95% full"),
		alert("CertExpiring", "page", "lb1:9100", "certificate expires in 3 days"),
	)
	ctx := context.Background()
	waitAlerts(t, client, 3)

	// What Alertmanager itself does with the universal silences.
	for _, ms := range [][]string{{`alertname!=""`}, {`alertname=~"HighLatency|.+"`}, {`alertname=~".*x.*|.+"`}, {`instance=~"[^x].*|x.*"`}} {
		parsed, err := parseMatchers(ms)
		if err != nil {
			t.Fatal(err)
		}
		id, err := client.CreateSilence(ctx, NewSilence{Matchers: parsed, StartsAt: time.Now().UTC(), EndsAt: time.Now().Add(time.Hour).UTC(),
			CreatedBy: "test", Comment: "what the guard refuses"})
		if err != nil {
			t.Fatalf("%v: Alertmanager refused the silence itself (%v), so the guard is not what stops it", ms, err)
		}
		if n := silencedBy(t, client, id); n != 3 {
			t.Errorf("%v silences %d of 3 alerts in Alertmanager; the guard refuses it as universal", ms, n)
		}
		if err := client.ExpireSilence(ctx, id); err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(map[string]any{"action": "silence", "matchers": ms, "duration": "1h", "comment": "c"})
		if _, b := tool.Propose(raw); b == nil || !strings.Contains(b.Message, "could silence every alert") {
			t.Errorf("%v: the tool proposed it: %+v", ms, b)
		}
	}
	waitAlerts(t, client, 3)

	// A restrictive silence that happens to match all three firing alerts
	// is refused on the card, saying which alerts.
	raw := `{"action":"silence","matchers":["severity=~\"page|critical\""],"duration":"1h","comment":"c"}`
	_, b := tool.Propose(json.RawMessage(raw))
	if b == nil || !strings.Contains(b.Message, "every alert firing now (all 3: CertExpiring, DiskFull, HighLatency)") {
		t.Fatalf("a silence of everything firing was proposed: %+v", b)
	}
	// One that pins the alert's name is fine even when it is all that
	// fires; the card says what it mutes.
	p, b := tool.Propose(json.RawMessage(`{"action":"silence","matchers":["alertname=HighLatency"],"duration":"1h","comment":"c"}`))
	if b != nil {
		t.Fatal(b)
	}
	if got := p.Details[len(p.Details)-1]; got.Label != "firing alerts it mutes" || got.Value != "1 of the 3 alerts firing now (HighLatency)" {
		t.Fatalf("card detail = %+v", got)
	}

	// Proposed while it matched two of three; by approval the third has
	// resolved, so it would now mute everything firing: refused, and no
	// silence is created.
	p, b = tool.Propose(json.RawMessage(`{"action":"silence","matchers":["severity=page"],"duration":"1h","comment":"c"}`))
	if b != nil {
		t.Fatal(b)
	}
	if got := p.Details[len(p.Details)-1].Value; got != "2 of the 3 alerts firing now (CertExpiring, HighLatency)" {
		t.Fatalf("card detail = %q", got)
	}
	resolved := alert("DiskFull", "critical", "db1:9100", "disk 95% full")
	resolved["endsAt"] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	postAlerts(t, am.URL, resolved)
	waitAlerts(t, client, 2)
	p.ApprovedBy = "U0BOB"
	e := tool.Execute(ctx, p).Envelope
	if e.OK || e.Error == nil || !e.Error.Blocked || !strings.Contains(e.Error.Message, "every alert firing now (all 2") {
		t.Fatalf("execution after the change = %s", e.JSON())
	}
	if ss, err := client.Silences(ctx, nil); err != nil || countActive(ss) != 0 {
		t.Fatalf("silences after the refusal: %d active, %v", countActive(ss), err)
	}
}

// waitAlerts waits until Alertmanager has n active alerts.
func waitAlerts(t *testing.T, c *Client, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		as, err := c.Alerts(context.Background(), nil)
		active := 0
		for _, a := range as {
			if a.Status.State == "active" {
				active++
			}
		}
		if err == nil && active == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager has %d active alerts (%v), want %d", active, err, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// silencedBy counts the alerts the silence id suppresses, once
// Alertmanager has applied it.
func silencedBy(t *testing.T, c *Client, id string) int {
	t.Helper()
	var n int
	deadline := time.Now().Add(10 * time.Second)
	for {
		as, err := c.Alerts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, a := range as {
			if strings.Contains(fmt.Sprint(a.Status.SilencedBy), id) {
				n++
			}
		}
		if n == len(as) || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func countActive(ss []Silence) int {
	n := 0
	for _, s := range ss {
		if s.Status.State == "active" {
			n++
		}
	}
	return n
}
