package slackfake

import (
	"unicode/utf8"
)

// Slack's documented limits on a message, which the real Web API enforces
// by refusing the whole message (https://api.slack.com/reference/block-kit/blocks,
// .../composition-objects, .../block-elements, and chat.postMessage's
// "msg_too_long"). The fake refuses what Slack refuses, so a renderer that
// oversteps them fails its tests here instead of in a workspace.
const (
	maxBlocks         = 50
	maxSectionText    = 3000
	maxContextText    = 2000 // per element... counted per text object
	maxHeaderText     = 150
	maxButtonText     = 75
	maxButtonURL      = 3000
	maxButtonValue    = 2000
	maxMessageText    = 40000
	maxSectionFields  = 10
	maxFieldText      = 2000
	maxActionElements = 25
	maxContextElems   = 10
)

// blocksError is the error code Slack answers for blocks that break a
// limit ("invalid_blocks"), or "" when they are within all of them.
func blocksError(text string, blocks []any) string {
	if utf8.RuneCountInString(text) > maxMessageText {
		return "msg_too_long"
	}
	if len(blocks) > maxBlocks {
		return "invalid_blocks"
	}
	for _, raw := range blocks {
		b, ok := raw.(map[string]any)
		if !ok {
			return "invalid_blocks"
		}
		switch b["type"] {
		case "section":
			if t, ok := b["text"].(map[string]any); ok && runes(t["text"]) > maxSectionText {
				return "invalid_blocks"
			}
			fields, _ := b["fields"].([]any)
			if len(fields) > maxSectionFields {
				return "invalid_blocks"
			}
			for _, f := range fields {
				if fm, ok := f.(map[string]any); ok && runes(fm["text"]) > maxFieldText {
					return "invalid_blocks"
				}
			}
		case "header":
			if t, ok := b["text"].(map[string]any); ok && runes(t["text"]) > maxHeaderText {
				return "invalid_blocks"
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) > maxContextElems {
				return "invalid_blocks"
			}
			for _, e := range els {
				if em, ok := e.(map[string]any); ok && runes(em["text"]) > maxContextText {
					return "invalid_blocks"
				}
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) > maxActionElements {
				return "invalid_blocks"
			}
			for _, e := range els {
				em, ok := e.(map[string]any)
				if !ok || em["type"] != "button" {
					continue
				}
				if t, ok := em["text"].(map[string]any); ok && runes(t["text"]) > maxButtonText {
					return "invalid_blocks"
				}
				if runes(em["url"]) > maxButtonURL || runes(em["value"]) > maxButtonValue {
					return "invalid_blocks"
				}
			}
		}
	}
	return ""
}

func runes(v any) int {
	s, _ := v.(string)
	return utf8.RuneCountInString(s)
}

func anySlice(bs []map[string]any) []any {
	out := make([]any, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out
}
