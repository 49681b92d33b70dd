package config

import (
	"fmt"
	"strings"
)

// Eval configures `vigil eval`, the investigation scorecard: an optional
// judge model and the prices that turn token counts into an estimated cost.
type Eval struct {
	Judge  EvalJudge   `mapstructure:"judge"`
	Prices []EvalPrice `mapstructure:"prices"`
}

// EvalJudge is an OpenAI-compatible model that scores each run's answer
// (root cause, evidence, explanation, 0–3 each) beside the deterministic
// grade. Unset (no model): no judge.
type EvalJudge struct {
	BaseURL string `mapstructure:"base_url"`
	APIKey  Secret `mapstructure:"api_key"`
	Model   string `mapstructure:"model"`
}

// Configured reports whether a judge is set.
func (j EvalJudge) Configured() bool { return j.BaseURL != "" && j.Model != "" }

// EvalPrice is what one model costs, in currency units per million tokens.
type EvalPrice struct {
	Model      string  `mapstructure:"model"`
	Prompt     float64 `mapstructure:"prompt_per_million"`
	Completion float64 `mapstructure:"completion_per_million"`
}

func (c *Config) validateEval(bad func(key, format string, args ...any)) {
	j := c.Eval.Judge
	if j.BaseURL != "" && !strings.HasPrefix(j.BaseURL, "http://") && !strings.HasPrefix(j.BaseURL, "https://") {
		bad("eval.judge.base_url", "must start with http:// or https://")
	}
	if (j.BaseURL == "") != (j.Model == "") {
		bad("eval.judge.model", "set both eval.judge.base_url and eval.judge.model, or neither (no judge)")
	}
	seen := map[string]bool{}
	for i, p := range c.Eval.Prices {
		key := fmt.Sprintf("eval.prices[%d]", i)
		switch {
		case strings.TrimSpace(p.Model) == "":
			bad(key+".model", "is empty; name the model as llm.model does")
		case seen[p.Model]:
			bad(key+".model", "is listed twice")
		}
		seen[p.Model] = true
		if p.Prompt < 0 {
			bad(key+".prompt_per_million", "must not be negative")
		}
		if p.Completion < 0 {
			bad(key+".completion_per_million", "must not be negative")
		}
	}
}
