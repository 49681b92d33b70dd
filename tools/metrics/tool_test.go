package metrics

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// fakeAPI answers range queries with a fixed matrix and records the range
// asked for.
type fakeAPI struct {
	API
	got promv1.Range
	err error
}

func (f *fakeAPI) QueryRange(_ context.Context, _ string, r promv1.Range, _ ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error) {
	f.got = r
	if f.err != nil {
		return nil, nil, nil, f.err
	}
	return model.Matrix{}, promv1.Warnings{"some warning"}, nil, nil
}

func TestArgumentValidation(t *testing.T) {
	tool := New([]Datasource{{Name: "main", API: &fakeAPI{}, Timeout: time.Second}}, nil)
	bad := map[string]string{
		`{"action":"query"}`:                                                                          `"query": required`,
		`{"action":"range","query":"up","since":"30"}`:                                                `"since": want a number and a unit`,
		`{"action":"range","query":"up","since":"40d"}`:                                               `longer than`,
		`{"action":"range","query":"up","since":"1h","start":"2026-01-01T00:00:00Z"}`:                 `since or start`,
		`{"action":"range","query":"up","start":"yesterday"}`:                                         `RFC 3339`,
		`{"action":"range","query":"up","start":"2026-01-02T00:00:00Z","end":"2026-01-01T00:00:00Z"}`: `before end`,
		`{"action":"label_values"}`:                                                                   `"label": required`,
		`{"action":"label_values","label":"a-b"}`:                                                     `label name`,
		`{"action":"targets","query":"up"}`:                                                           `not used by action targets`,
		`{"action":"query","query":"up","step":"1m"}`:                                                 `not used by action query`,
		`{"action":"query","query":"up","limit":500}`:                                                 `between 1 and 200`,
		`{"action":"query","query":"up","datasource":"other"}`:                                        `no datasource named "other"; the datasources are: main`,
		`{"action":"query","query":"up","target":"web1"}`:                                             `unknown field`,
		`{"action":"delete_series","query":"up"}`:                                                     `want one of`,
	}
	for args, want := range bad {
		_, b := tool.Propose(json.RawMessage(args))
		if b == nil || b.Code != policy.CodeInvalidInput || !strings.Contains(b.Message, want) {
			t.Errorf("%s: block = %+v, want INVALID_INPUT with %q", args, b, want)
		}
	}
}

func TestEveryActionIsARead(t *testing.T) {
	s := New(nil, nil).Spec()
	for _, a := range Action("").EnumValues() {
		if s.Kinds.KindOf(a) != policy.KindRead {
			t.Errorf("action %s is %s", a, s.Kinds.KindOf(a))
		}
	}
	if _, err := tools.NewRegistry(New(nil, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestNotConfigured(t *testing.T) {
	tool := New(nil, nil)
	if !strings.HasPrefix(tool.Spec().Description, "Not configured here") {
		t.Errorf("description = %q", tool.Spec().Description)
	}
	p, b := tool.Propose(json.RawMessage(`{"action":"query","query":"up"}`))
	if b != nil {
		t.Fatal(b)
	}
	env := tool.Execute(context.Background(), p).Envelope
	if env.OK || env.Error.Code != policy.CodeNotFound || !strings.Contains(env.Error.Message, "observability.prometheus") {
		t.Fatalf("envelope = %s", env.JSON())
	}
}

func TestRangeWindowAndStep(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	api := &fakeAPI{}
	tool := New([]Datasource{{Name: "main", API: api, Timeout: time.Second}}, func() time.Time { return now })
	env := execute(t, tool, `{"action":"range","query":"up","since":"6h"}`)
	if !env.OK || api.got.Start != now.Add(-6*time.Hour) || api.got.End != now || api.got.Step != 2*time.Minute {
		t.Fatalf("range %+v → %s", api.got, env.JSON())
	}
	if env.Meta["warnings"] == nil {
		t.Errorf("warnings lost: %v", env.Meta)
	}
	env = execute(t, tool, `{"action":"range","query":"up","start":"2026-03-01T00:00:00Z","end":"2026-03-01T01:00:00Z","step":"15s"}`)
	if !env.OK || api.got.Step != 15*time.Second || !api.got.Start.Equal(now.Add(-12*time.Hour)) {
		t.Fatalf("range %+v → %s", api.got, env.JSON())
	}
	env = execute(t, tool, `{"action":"range","query":"up","since":"7d","step":"1s"}`)
	if env.OK || env.Error.Code != policy.CodeInvalidInput || !strings.Contains(env.Error.Message, "points per series") {
		t.Fatalf("too many points: %s", env.JSON())
	}
}

func TestAutoStep(t *testing.T) {
	for span, want := range map[time.Duration]time.Duration{
		time.Minute: time.Second, 30 * time.Minute: 10 * time.Second, time.Hour: 15 * time.Second,
		24 * time.Hour: 10 * time.Minute, 31 * 24 * time.Hour: 6 * time.Hour,
	} {
		if got := autoStep(span); got != want {
			t.Errorf("autoStep(%s) = %s, want %s", span, got, want)
		}
	}
}

func TestMarkPosition(t *testing.T) {
	if got := markPosition("sum(rate(x[5m])\nby (job", 2, 4); got != "by (job\n   ^" {
		t.Fatalf("mark = %q", got)
	}
	if markPosition("x", 3, 1) != "" {
		t.Fatal("a position past the query was marked")
	}
}

func FuzzArgs(f *testing.F) {
	f.Add(`{"action":"range","query":"up","since":"30m"}`)
	f.Add(`{"action":"label_values","label":"job","limit":3}`)
	f.Add(`{"action":"range","query":"up","start":"2026-03-01T00:00:00Z","step":"1s"}`)
	tool := New([]Datasource{{Name: "main", API: &fakeAPI{}, Timeout: time.Second}}, nil)
	f.Fuzz(func(t *testing.T, raw string) {
		p, b := tool.Propose(json.RawMessage(raw))
		if b != nil {
			return
		}
		a := p.Args.(Args)
		w := a.windowOf(time.Now())
		if !w.start.Before(w.end) {
			t.Fatalf("accepted %s with an empty window %v", raw, w)
		}
		if a.Action == ActionRange {
			if step, err := a.stepFor(w); err == nil && (step <= 0 || w.end.Sub(w.start)/step > maxPoints) {
				t.Fatalf("accepted %s with step %s", raw, step)
			}
		}
	})
}
