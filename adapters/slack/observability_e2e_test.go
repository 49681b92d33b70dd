package slack_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/vigilops/vigil/adapters/slack"
	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/obsbin"
	"github.com/vigilops/vigil/internal/testenv/slackfake"
	"github.com/vigilops/vigil/internal/testenv/testkit"
)

// TestEndToEndSilenceApprovedInSlack: an alerts silence is a write; its
// Block Kit card shows the matchers, duration and comment; Alertmanager
// (a real one) has the silence only after Bob approved it, in Bob's name.
func TestEndToEndSilenceApprovedInSlack(t *testing.T) {
	am := obsbin.Alertmanager(t, "route:\n  receiver: none\nreceivers:\n  - name: none\n")
	raw, _ := json.Marshal([]map[string]any{{"labels": map[string]string{"alertname": "HighLatency", "service": "checkout"}}})
	resp, err := http.Post(am.URL+"/api/v2/alerts", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	silences := func() []map[string]any {
		resp, err := http.Get(am.URL + "/api/v2/silences")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	e := startE2E(t, slack.ModeSocket, func(o *testkit.Options) {
		o.Configure = func(c *config.Config) { c.Observability.Alertmanager.URL = am.URL }
	})
	e.model.Script(
		modeltest.Calls(modeltest.Call("alerts", testkit.Args("action", "list"))),
		modeltest.Calls(modeltest.Call("alerts", testkit.Args("action", "silence", "matchers", []string{"alertname=HighLatency"},
			"duration", "90m", "comment", "checkout deploy"))),
		modeltest.Calls(modeltest.Call("alerts", testkit.Args("action", "silences"))),
		modeltest.Text("Silenced HighLatency for 90 minutes."),
	)
	e.event("EvSilence", slackfake.AppMention(e2eChan, e2eAlice, "<@U0VIGIL> silence the latency alert for the deploy", e2eRoot, ""), false)

	card := e.waitPost("the approval card", "Approval needed")
	for _, want := range []string{"*matchers:* `alertname=\"HighLatency\"`", "*duration:* `1h30m from when it is approved`",
		"*comment:* `checkout deploy`", "*created by:* `the person who approves`"} {
		if !strings.Contains(card.Text(), want) {
			t.Errorf("card lacks %s:\n%s", want, card.Text())
		}
	}
	var approve string
	for _, b := range card.Buttons() {
		if b.ActionID == "vigil_approve" {
			approve = b.Value
		}
	}
	e.idle()
	if got := silences(); len(got) != 0 {
		t.Fatalf("a silence exists before approval: %v", got)
	}
	e.click(e2eBob, "vigil_approve", approve, card.TS, "1700005003.000001")
	e.waitPost("the final answer", "Silenced HighLatency for 90 minutes.")
	e.idle()
	got := silences()
	if len(got) != 1 || got[0]["createdBy"] != e2eBob || got[0]["comment"] != "checkout deploy" {
		t.Fatalf("silences = %v, want one created by %s", got, e2eBob)
	}
}
