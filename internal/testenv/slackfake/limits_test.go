package slackfake

import (
	"strings"
	"testing"
)

// The fake refuses what Slack refuses: blocks over Block Kit's limits.
func TestFakeRefusesBlocksOverLimits(t *testing.T) {
	long := strings.Repeat("x", 3001)
	cases := map[string][]any{
		"section over 3000": {map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": long}}},
		"51 blocks":         make([]any, 51),
		"button url":        {map[string]any{"type": "actions", "elements": []any{map[string]any{"type": "button", "text": map[string]any{"text": "x"}, "url": "https://x/" + long}}}},
	}
	for i := range cases["51 blocks"] {
		cases["51 blocks"][i] = map[string]any{"type": "divider"}
	}
	for name, blocks := range cases {
		if blocksError("t", blocks) != "invalid_blocks" {
			t.Errorf("%s accepted", name)
		}
	}
	if blocksError(strings.Repeat("y", 40001), nil) != "msg_too_long" {
		t.Error("40,001-character text accepted")
	}
	ok := []any{map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": long[:3000]}}}
	if e := blocksError("t", ok); e != "" {
		t.Errorf("a 3,000-character section refused: %s", e)
	}
}
