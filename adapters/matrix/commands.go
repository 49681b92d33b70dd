package matrix

import (
	"strings"
	"unicode"

	"github.com/vigilops/vigil/agent"
)

// commandKind is a typed approval command.
type commandKind int

const (
	cmdNone commandKind = iota
	cmdApprove
	cmdDeny
	cmdUsage // "!approve"/"!deny" without an approval ID
)

// command is a parsed "!approve <id>" or "!deny <id> <reason>".
type command struct {
	Kind       commandKind
	ApprovalID string
	Reason     string
}

// maxApprovalIDLen bounds what is accepted as an approval ID.
const maxApprovalIDLen = 128

// parseCommand recognises an approval command at the start of text (the
// bot's mention already stripped). Anything else is cmdNone.
func parseCommand(text string) command {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "!") {
		return command{}
	}
	word, rest := splitWord(text)
	var kind commandKind
	switch strings.ToLower(word) {
	case "!approve":
		kind = cmdApprove
	case "!deny":
		kind = cmdDeny
	default:
		return command{}
	}
	approvalID, rest := splitWord(rest)
	approvalID = strings.Trim(approvalID, "`\"'")
	if approvalID == "" || len(approvalID) > maxApprovalIDLen || !validID(approvalID) {
		return command{Kind: cmdUsage}
	}
	c := command{Kind: kind, ApprovalID: approvalID}
	if kind == cmdDeny {
		c.Reason = strings.TrimSpace(rest)
	}
	return c
}

func splitWord(s string) (word, rest string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// validID accepts the characters approval IDs are made of.
func validID(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':') {
			return false
		}
	}
	return true
}

// Reaction keys that answer an approval card.
const (
	reactApprove = "✅"
	reactDeny    = "❌"
)

// Reaction keys that rate an answer.
const (
	reactGood = "👍"
	reactBad  = "👎"
)

// normaliseReaction drops emoji variation selectors and skin tones so
// "✅\ufe0f" is "✅" and "👍🏽" is "👍".
func normaliseReaction(key string) string {
	return strings.NewReplacer("\ufe0f", "", "\ufe0e", "", "\U0001F3FB", "", "\U0001F3FC", "", "\U0001F3FD", "",
		"\U0001F3FE", "", "\U0001F3FF", "").Replace(strings.TrimSpace(key))
}

// ratingOf reads a normalised reaction key as a rating of an answer.
func ratingOf(key string) (agent.Rating, bool) {
	switch key {
	case reactGood:
		return agent.RatingGood, true
	case reactBad:
		return agent.RatingBad, true
	}
	return "", false
}
