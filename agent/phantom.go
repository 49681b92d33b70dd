package agent

import (
	"regexp"
	"strings"
)

// PhantomReply replaces a final answer that claimed infrastructure facts or
// completed actions when no tool had succeeded in the run (SPEC A7).
const PhantomReply = "I have not run any tool successfully in this conversation yet, so I cannot " +
	"report facts about your systems or claim that anything was done. Ask me to check something " +
	"specific and I will look it up."

// claimPatterns are phrasings that assert something happened or was observed.
// They are deliberately specific: a model saying "I can check the logs" is
// fine; "the logs show" without having read any is not.
var claimPatterns = regexp.MustCompile(`(?i)\b(` +
	`i(?:'ve| have)? (?:restarted|stopped|started|rebooted|killed|deleted|removed|fixed|updated|changed|modified|edited|ran|executed|checked|verified|deployed|rolled back|cleared|freed|installed)\b` +
	`|(?:the )?logs? (?:show|shows|indicate|indicates|reveal|reveals|contain|contains)\b` +
	`|(?:cpu|memory|mem|disk|load|swap|network)(?: usage| utili[sz]ation| load)? (?:is|was|are|were|at|stands at) (?:at )?\d` +
	`|(?:is|was) (?:now )?(?:running|stopped|healthy|down|up) (?:again|on|since)\b` +
	`|successfully (?:restarted|stopped|started|rebooted|deleted|removed|updated|applied|executed)\b` +
	`|has been (?:restarted|stopped|started|rebooted|deleted|removed|fixed|updated)\b` +
	`|output (?:shows|showed|indicates)\b` +
	`)`)

// ClaimsFacts reports whether text asserts infrastructure facts or completed
// actions, or contains fake tool-call markup.
func ClaimsFacts(text string) bool {
	if LooksLikeToolMarkup(text) {
		return true
	}
	if strings.TrimSpace(text) == "" {
		return false
	}
	return claimPatterns.MatchString(text)
}
