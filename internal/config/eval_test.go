package config

import (
	"strings"
	"testing"
)

func TestEvalConfig(t *testing.T) {
	c, err := Load(write(t, `
eval:
  judge: {base_url: "http://127.0.0.1:9/v1", model: judge-1}
  prices:
    - {model: gpt-4o-mini, prompt_per_million: 0.15, completion_per_million: 0.6}
`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Eval.Judge.Configured() || len(c.Eval.Prices) != 1 || c.Eval.Prices[0].Completion != 0.6 {
		t.Fatalf("eval = %+v", c.Eval)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"eval: {judge: {base_url: ftp://x, model: m}}", "eval.judge.base_url"},
		{"eval: {judge: {base_url: http://x}}", "eval.judge.model"},
		{"eval: {prices: [{model: a}, {model: a}]}", "eval.prices[1].model"},
		{"eval: {prices: [{model: a, prompt_per_million: -1}]}", "eval.prices[0].prompt_per_million"},
		{"eval: {pricez: []}", "eval.pricez"},
	} {
		_, err := Load(write(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to name %s", tc.yaml, err, tc.want)
		}
	}
}
