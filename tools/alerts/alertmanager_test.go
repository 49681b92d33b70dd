package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/internal/testenv/obsbin"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// amConfig routes everything nowhere and lets NodeDown inhibit warnings on
// the same instance.
const amConfig = `route:
  receiver: none
  group_by: [alertname]
receivers:
  - name: none
inhibit_rules:
  - source_matchers: [alertname="NodeDown"]
    target_matchers: [severity="warning"]
    equal: [instance]
`

// postAlerts fires alerts at Alertmanager the way Prometheus does.
func postAlerts(t *testing.T, url string, alerts ...map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(alerts)
	resp, err := http.Post(url+"/api/v2/alerts", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post alerts: %s", resp.Status)
	}
}

func alert(name, severity, instance, summary string) map[string]any {
	return map[string]any{
		"labels":      map[string]string{"alertname": name, "severity": severity, "instance": instance, "service": "checkout"},
		"annotations": map[string]string{"summary": summary},
		"startsAt":    time.Now().Add(-time.Minute).UTC().Format(time.RFC3339),
	}
}

func run(t *testing.T, tool tools.Tool, args string, approver string) tools.Envelope {
	t.Helper()
	p, b := tool.Propose(json.RawMessage(args))
	if b != nil {
		t.Fatalf("propose %s: %+v", args, b)
	}
	p.ApprovedBy = approver
	return tool.Execute(context.Background(), p).Envelope
}

func data(t *testing.T, e tools.Envelope) map[string]any {
	t.Helper()
	if !e.OK {
		t.Fatalf("not ok: %s", e.JSON())
	}
	raw, _ := json.Marshal(e.Data)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func startAM(t *testing.T) (*obsbin.Server, tools.Tool, *Client) {
	t.Helper()
	am := obsbin.Alertmanager(t, amConfig)
	c, err := NewClient(am.URL, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	return am, New(Config{API: c, URL: am.URL, Timeout: 5 * time.Second}), c
}

func TestAgainstRealAlertmanager(t *testing.T) {
	am, tool, client := startAM(t)
	postAlerts(t, am.URL,
		alert("HighLatency", "page", "web1", "checkout p99 above 2s"),
		alert("NodeDown", "critical", "db1", "db1 is unreachable"),
		alert("DiskFull", "warning", "db1", "disk 95% full"),
	)
	// Alertmanager works out inhibitions as it processes the alerts.
	deadline := time.Now().Add(10 * time.Second)
	for {
		as, err := client.Alerts(context.Background(), nil)
		if err == nil && len(as) == 3 && strings.Contains(fmt.Sprint(as), "suppressed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts not processed: %v %v\n%s", as, err, am.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}

	t.Run("list shows state, inhibition and order", func(t *testing.T) {
		d := data(t, run(t, tool, `{"action":"list"}`, ""))
		as := d["alerts"].([]any)
		first, last := as[0].(map[string]any), as[2].(map[string]any)
		if d["total"].(float64) != 3 || first["alertname"] != "HighLatency" || first["state"] != "active" {
			t.Fatalf("list = %v", d)
		}
		if last["alertname"] != "DiskFull" || last["state"] != "suppressed" || last["inhibited_by"] == nil || last["summary"] != "disk 95% full" {
			t.Fatalf("DiskFull = %v, want suppressed by the NodeDown inhibition", last)
		}
		f := data(t, run(t, tool, `{"action":"list","matchers":["alertname=~High.*","severity!=warning"]}`, ""))
		if f["total"].(float64) != 1 {
			t.Fatalf("filtered list = %v", f)
		}
	})

	t.Run("groups", func(t *testing.T) {
		d := data(t, run(t, tool, `{"action":"groups"}`, ""))
		if d["total"].(float64) != 3 {
			t.Fatalf("groups = %v", d)
		}
	})

	t.Run("silence is created by the approver, then expired", func(t *testing.T) {
		p, b := tool.Propose(json.RawMessage(`{"action":"silence","matchers":["alertname=HighLatency","service=\"checkout\""],"duration":"2h","comment":"deploy in progress"}`))
		if b != nil {
			t.Fatal(b)
		}
		if want := `alertname="HighLatency", service="checkout"`; p.Details[0].Value != want || p.Details[1].Value != "2h from when it is approved" ||
			p.Details[2].Value != "deploy in progress" {
			t.Fatalf("card details = %+v", p.Details)
		}
		if tool.Spec().Kinds.KindOf(p.Name) != policy.KindWrite {
			t.Fatal("silence is not a write")
		}
		p.ApprovedBy = "U0BOB"
		before := time.Now()
		d := data(t, tool.Execute(context.Background(), p).Envelope)
		id := d["silence_id"].(string)
		if d["created_by"] != "U0BOB" {
			t.Fatalf("silence = %v", d)
		}
		ss, err := client.Silences(context.Background(), nil)
		if err != nil || len(ss) != 1 {
			t.Fatalf("silences = %v, %v", ss, err)
		}
		s := ss[0]
		if s.ID != id || s.CreatedBy != "U0BOB" || s.Comment != "deploy in progress" || s.Status.State != "active" ||
			s.EndsAt.Sub(before) < 2*time.Hour-time.Minute || s.EndsAt.Sub(before) > 2*time.Hour+time.Minute {
			t.Fatalf("Alertmanager's silence = %+v", s)
		}
		list := data(t, run(t, tool, `{"action":"list","matchers":["alertname=HighLatency"]}`, ""))
		hl := list["alerts"].([]any)[0].(map[string]any)
		if hl["state"] != "suppressed" || fmt.Sprint(hl["silenced_by"]) != "["+id+"]" {
			t.Fatalf("HighLatency = %v, want silenced by %s", hl, id)
		}
		sil := data(t, run(t, tool, `{"action":"silences"}`, ""))
		if got := sil["silences"].([]any); len(got) != 1 || got[0].(map[string]any)["remaining"] != "2h" {
			t.Fatalf("silences = %v", sil)
		}

		data(t, run(t, tool, fmt.Sprintf(`{"action":"expire_silence","silence_id":%q}`, id), "U0BOB"))
		sil = data(t, run(t, tool, `{"action":"silences"}`, ""))
		if fmt.Sprint(sil["by_state"]) != "map[expired:1]" || len(sil["silences"].([]any)) != 0 {
			t.Fatalf("after expiry = %v", sil)
		}
	})

	t.Run("unknown silence", func(t *testing.T) {
		e := run(t, tool, `{"action":"expire_silence","silence_id":"00000000-0000-0000-0000-000000000000"}`, "U0BOB")
		if e.OK || (e.Error.Code != policy.CodeNotFound && e.Error.Code != policy.CodeInvalidInput) {
			t.Fatalf("envelope = %s", e.JSON())
		}
	})
}

func TestSilenceLimits(t *testing.T) {
	tool := New(Config{API: &Client{}, MaxSilence: 4 * time.Hour})
	cases := map[string]string{
		`{"action":"silence","matchers":["alertname=X"],"duration":"5h","comment":"c"}`:                      "longer than the 4h",
		`{"action":"silence","matchers":["alertname=X"],"duration":"30s","comment":"c"}`:                     "at least 1m",
		`{"action":"silence","matchers":["alertname=X"],"duration":"2h"}`:                                    `"comment": required`,
		`{"action":"silence","matchers":["alertname=~.*"],"duration":"2h","comment":"c"}`:                    "could silence every alert",
		`{"action":"silence","matchers":["env!=prod"],"duration":"2h","comment":"c"}`:                        "could silence every alert",
		`{"action":"silence","duration":"2h","comment":"c"}`:                                                 `"matchers": required`,
		`{"action":"silence","matchers":["alert name=X"],"duration":"2h","comment":"c"}`:                     "expected an operator",
		`{"action":"silence","matchers":["alertname=~(x"],"duration":"2h","comment":"c"}`:                    "does not compile",
		`{"action":"list","duration":"2h"}`:                                                                  "not used by action list",
		`{"action":"expire_silence","silence_id":"abc"}`:                                                     "UUID",
		`{"action":"expire_silence","silence_id":"00000000-0000-0000-0000-000000000000","matchers":["a=b"]}`: "not used",
	}
	for args, want := range cases {
		_, b := tool.Propose(json.RawMessage(args))
		if b == nil || b.Code != policy.CodeInvalidInput || !strings.Contains(b.Message, want) {
			t.Errorf("%s: block = %+v, want %q", args, b, want)
		}
	}
	if _, b := tool.Propose(json.RawMessage(`{"action":"silence","matchers":["alertname=X"],"duration":"1h30m","comment":"c"}`)); b != nil {
		t.Errorf("1h30m refused: %+v", b)
	}
}

func TestNotConfigured(t *testing.T) {
	tool := New(Config{})
	p, b := tool.Propose(json.RawMessage(`{"action":"list"}`))
	if b != nil {
		t.Fatal(b)
	}
	e := tool.Execute(context.Background(), p).Envelope
	if e.OK || e.Error.Code != policy.CodeNotFound || !strings.Contains(e.Error.Message, "observability.alertmanager.url") {
		t.Fatalf("envelope = %s", e.JSON())
	}
	if !strings.HasPrefix(tool.Spec().Description, "Not configured here") {
		t.Fatal(tool.Spec().Description)
	}
}

func TestParseMatcher(t *testing.T) {
	good := map[string]Matcher{
		`alertname=HighLatency`:       {Name: "alertname", Value: "HighLatency", IsEqual: true},
		`env != prod`:                 {Name: "env", Value: "prod"},
		`service=~"checkout|cart"`:    {Name: "service", Value: "checkout|cart", IsRegex: true, IsEqual: true},
		`job!~node.*`:                 {Name: "job", Value: "node.*", IsRegex: true},
		`summary="a \"quoted\" text"`: {Name: "summary", Value: `a "quoted" text`, IsEqual: true},
		`x=`:                          {Name: "x", Value: "", IsEqual: true},
		// UTF-8 label names, as OpenTelemetry sends them: quoted when
		// they hold punctuation Alertmanager reserves, bare otherwise.
		`"service.name"="checkout"`: {Name: "service.name", Value: "checkout", IsEqual: true},
		`"k8s pod"!~"web-.*"`:       {Name: "k8s pod", Value: "web-.*", IsRegex: true},
		`sévérité=critique`:         {Name: "sévérité", Value: "critique", IsEqual: true},
		`"服务"="結帳"`:                 {Name: "服务", Value: "結帳", IsEqual: true},
		`9a=b`:                      {Name: "9a", Value: "b", IsEqual: true},
		`team="a, b"`:               {Name: "team", Value: "a, b", IsEqual: true},
		`path="C:\\temp"`:           {Name: "path", Value: `C:\temp`, IsEqual: true},
		`"quote\"in name"="v"`:      {Name: `quote"in name`, Value: "v", IsEqual: true},
		// The classic parser's tolerance, which Alertmanager keeps.
		`msg=two words`: {Name: "msg", Value: "two words", IsEqual: true},
	}
	for in, want := range good {
		got, err := ParseMatcher(in)
		if err != nil || got != want {
			t.Errorf("ParseMatcher(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		back, err := ParseMatcher(got.String())
		if err != nil || back != got {
			t.Errorf("%q does not round-trip: %q → %+v, %v", in, got.String(), back, err)
		}
	}
	for _, in := range []string{"", "=x", "alertname", "a b=c", `a="open`, "a=~[", "a<b", `""=x`, "a=b\nc", `a="x\ny"`, `{a=b, c=d}`, "a=\xff"} {
		if m, err := ParseMatcher(in); err == nil {
			t.Errorf("ParseMatcher(%q) = %+v, want an error", in, m)
		}
	}
	// The error says what a matcher looks like.
	if _, err := ParseMatcher("alertname"); err == nil || !strings.Contains(err.Error(), "name=value") {
		t.Errorf("error for a bare name: %v", err)
	}
	// A name with a character Alertmanager reserves is written quoted,
	// as Alertmanager writes it.
	for m, want := range map[Matcher]string{
		{Name: "service.name", Value: "checkout", IsEqual: true}: `service.name="checkout"`,
		{Name: "k8s pod", Value: "x", IsEqual: true}:             `"k8s pod"="x"`,
		{Name: "k8s pod", Value: "a\"b", IsRegex: true}:          `"k8s pod"!~"a\"b"`,
		{Name: "alertname", Value: "X"}:                          `alertname!="X"`,
	} {
		if got := m.String(); got != want {
			t.Errorf("%+v writes as %s, want %s", m, got, want)
		}
	}
}

// Against a real Alertmanager: a UTF-8 label name filters alerts and
// silences them as Alertmanager itself reads it.
func TestUTF8LabelNamesAgainstRealAlertmanager(t *testing.T) {
	am, tool, client := startAM(t)
	web := alert("HighLatency", "page", "web1", "checkout p99 above 2s")
	web["labels"].(map[string]string)["service.name"] = "checkout"
	db := alert("HighLatency", "page", "db1", "db p99 above 2s")
	db["labels"].(map[string]string)["service.name"] = "ledger"
	postAlerts(t, am.URL, web, db)
	waitAlerts(t, client, 2)

	e := run(t, tool, `{"action":"list","matchers":["\"service.name\"=\"checkout\""]}`, "")
	if d := data(t, e); fmt.Sprint(d["total"]) != "1" || !strings.Contains(fmt.Sprint(d), "web1") {
		t.Fatalf("filter on service.name: %v", d)
	}
	e = run(t, tool, `{"action":"silence","matchers":["alertname=HighLatency","\"service.name\"=~\"ledger\""],"duration":"1h","comment":"utf-8 names"}`, "alice")
	id, _ := data(t, e)["silence_id"].(string)
	if id == "" {
		t.Fatalf("silence: %s", e.JSON())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		as, err := client.Alerts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		muted := map[string]bool{}
		for _, a := range as {
			muted[a.Labels["instance"]] = slices.Contains(a.Status.SilencedBy, id)
		}
		if muted["db1"] {
			if muted["web1"] {
				t.Fatal("the silence on service.name=~ledger mutes web1 too")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the silence on service.name=~ledger does not mute db1: %+v", as)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ss, err := client.Silences(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := joinMatchers(ss[0].Matchers); !strings.Contains(got, `service.name=~"ledger"`) {
		t.Errorf("silence as listed: %s", got)
	}
}

func FuzzParseMatcher(f *testing.F) {
	for _, s := range []string{`a=b`, `a!~"x|y"`, `a=~.*`, `a="\u00e9"`, `__name__!=""`, `"service.name"="x"`, `é="a\\b"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMatcher(s)
		if err != nil {
			return
		}
		back, err := ParseMatcher(m.String())
		if err != nil || back != m {
			t.Fatalf("%q parsed to %+v, which writes as %q and reads back as %+v, %v", s, m, m.String(), back, err)
		}
		if m.MatchesEmpty() != m.Matches(map[string]string{}) {
			t.Fatalf("%q: MatchesEmpty disagrees with Matches on no labels", s)
		}
	})
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 45 * time.Minute: "45m", 24 * time.Hour: "24h"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestEveryActionDeclaresItsKind(t *testing.T) {
	k := New(Config{}).Spec().Kinds
	for _, a := range Action("").EnumValues() {
		want := policy.KindRead
		if a == "silence" || a == "expire_silence" {
			want = policy.KindWrite
		}
		if !k.Declares(a) || k.KindOf(a) != want {
			t.Errorf("action %s: declared %v, kind %s, want %s", a, k.Declares(a), k.KindOf(a), want)
		}
	}
}
