package agent

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Leaked model markup (SPEC A11). Some servers pass a model's internal
// syntax through as text: reasoning blocks, chat-template special tokens,
// and tool calls written in the model's own format instead of the API's
// tool_calls. CleanMarkup removes it from text meant for people;
// LooksLikeToolMarkup spots fake tool calls for phantom detection.

// dsmlSep matches the separators DeepSeek puts around "DSML": ASCII or
// full-width bars and double bars, in any number.
const dsmlSep = `[|｜‖]*`

// markupBlock is markup with an opening and a closing part; everything from
// the opening to the closing (or to the end of the text when the closing is
// missing, as in a cut-off answer) is removed.
type markupBlock struct {
	open, close *regexp.Regexp
}

var markupBlocks = []markupBlock{
	// DeepSeek DSML: <｜DSML｜function_calls> / tool_calls sections, and
	// bare <｜DSML｜invoke ...> blocks.
	dsmlBlock("function_calls"),
	dsmlBlock("tool_calls"),
	dsmlBlock("invoke"),
	// DeepSeek V3 special-token tool calls.
	{
		regexp.MustCompile(`<[|｜]tool▁calls▁begin[|｜]>`),
		regexp.MustCompile(`<[|｜]tool▁calls▁end[|｜]>`),
	},
	{
		regexp.MustCompile(`<[|｜]tool▁call▁begin[|｜]>`),
		regexp.MustCompile(`<[|｜]tool▁call▁end[|｜]>`),
	},
	// Reasoning blocks.
	{regexp.MustCompile(`(?i)<think>`), regexp.MustCompile(`(?i)</think>`)},
	{regexp.MustCompile(`(?i)<thinking>`), regexp.MustCompile(`(?i)</thinking>`)},
	{regexp.MustCompile(`◁think▷`), regexp.MustCompile(`◁/think▷`)},
	// XML-style tool calls (Hermes, Qwen, Anthropic-style, Llama 3.x).
	{regexp.MustCompile(`(?i)<tool_calls?>`), regexp.MustCompile(`(?i)</tool_calls?>`)},
	{regexp.MustCompile(`(?i)<function_calls>`), regexp.MustCompile(`(?i)</function_calls>`)},
	{regexp.MustCompile(`(?i)<invoke\s+name=`), regexp.MustCompile(`(?i)</invoke>`)},
	{regexp.MustCompile(`(?i)<function=[^>\n]*>`), regexp.MustCompile(`(?i)</function>`)},
	{regexp.MustCompile(`<\|tool_call_start\|>`), regexp.MustCompile(`<\|tool_call_end\|>`)},
}

func dsmlBlock(kind string) markupBlock {
	return markupBlock{
		open:  regexp.MustCompile(`(?i)<\s*` + dsmlSep + `\s*DSML\s*` + dsmlSep + `\s*` + kind + `\b[^>]*>`),
		close: regexp.MustCompile(`(?i)<\s*/\s*` + dsmlSep + `\s*DSML\s*` + dsmlSep + `\s*` + kind + `\s*>`),
	}
}

var (
	// jsonCallPrefix is a token that introduces a tool call written as
	// JSON (Llama, Phi, Mistral, Granite); the JSON after it goes too.
	jsonCallPrefix = regexp.MustCompile(`(?i)<\|(?:tool_calls?|python_tag|function_call)\|>|\[TOOL_CALLS\]`)
	// strayTag is any DSML tag left over, e.g. a lone parameter tag.
	strayDSML = regexp.MustCompile(`(?i)<\s*/?\s*` + dsmlSep + `\s*DSML\s*` + dsmlSep + `[^>]*>`)
	// specialToken is a chat-template token: <|im_end|>, <|eot_id|>,
	// <｜end▁of▁sentence｜>, ...
	specialToken = regexp.MustCompile(`<\|[A-Za-z0-9_.:\-]{1,40}\|>|<｜[^｜>\n]{1,60}｜>`)
	// thinkEnd is an end-of-thinking marker without its opening, as when
	// the chat template opened the reasoning block in the prompt.
	thinkEnd = regexp.MustCompile(`(?i)</think>|</thinking>|<\|end_of_thinking\|>|◁/think▷`)
	// blankRuns are three or more newlines (with blanks) left by removals.
	blankRuns = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)
)

// toolMarkup matches fake tool-call syntax in prose.
var toolMarkup = []*regexp.Regexp{
	regexp.MustCompile(`(?i)<\s*/?\s*` + dsmlSep + `\s*DSML`),
	regexp.MustCompile(`<[|｜]tool▁call`),
	regexp.MustCompile(`(?i)</?tool_calls?>|</?function_calls>|<invoke\s+name=|<function=[^>\n]*>`),
	regexp.MustCompile(`(?i)<\|(?:tool_calls?|tool_call_start|python_tag|function_call)\|>|\[TOOL_CALLS\]`),
	// A JSON call object: {"name": "x", "arguments": ...} / "parameters",
	// or the JSON-mode shapes.
	regexp.MustCompile(`\{\s*"name"\s*:\s*"[^"]+"\s*,\s*"(?:arguments|parameters)"\s*:`),
	regexp.MustCompile(`\{\s*"(?:tool_call|function_call|tool_calls)"\s*:\s*[\[{]`),
}

// LooksLikeToolMarkup reports whether s contains fake tool-call markup: a
// tool call written as text (DSML, <tool_call>, special tokens, a JSON call
// object) instead of through the API.
func LooksLikeToolMarkup(s string) bool {
	for _, re := range toolMarkup {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// CleanMarkup removes leaked model markup from s: DeepSeek DSML and
// special-token tool calls, <think> reasoning blocks (an unclosed one runs
// to the end; text before a stray end-of-thinking marker is reasoning and
// goes too), XML-style tool-call blocks, tool-call tokens with the JSON
// they introduce, and chat-template special tokens. Normal text is kept;
// text without markup is returned unchanged.
func CleanMarkup(s string) string {
	if !strings.ContainsAny(s, "<[◁") {
		return s
	}
	out := s
	for _, b := range markupBlocks {
		out = removeBlocks(out, b)
	}
	out = removeStrayThinkEnd(out)
	out = removeJSONCalls(out)
	out = strayDSML.ReplaceAllString(out, "")
	out = specialToken.ReplaceAllString(out, "")
	if out == s {
		return s
	}
	out = blankRuns.ReplaceAllString(out, "\n\n")
	return strings.TrimSpace(out)
}

// removeBlocks cuts every block from its opening to its closing, or to the
// end of the text when it is not closed.
func removeBlocks(s string, b markupBlock) string {
	var sb strings.Builder
	for {
		loc := b.open.FindStringIndex(s)
		if loc == nil {
			if sb.Len() == 0 {
				return s
			}
			sb.WriteString(s)
			return sb.String()
		}
		sb.WriteString(s[:loc[0]])
		end := b.close.FindStringIndex(s[loc[1]:])
		if end == nil {
			return sb.String()
		}
		s = s[loc[1]+end[1]:]
	}
}

// removeStrayThinkEnd drops the reasoning before an end-of-thinking marker
// whose opening was never sent. When nothing follows the marker, the text
// before it is the answer and only the marker goes.
func removeStrayThinkEnd(s string) string {
	locs := thinkEnd.FindAllStringIndex(s, -1)
	if locs == nil {
		return s
	}
	last := locs[len(locs)-1]
	if after := s[last[1]:]; strings.TrimSpace(after) != "" {
		return after
	}
	return thinkEnd.ReplaceAllString(s, "")
}

// removeJSONCalls removes tool-call tokens and the JSON value that follows
// each, if any.
func removeJSONCalls(s string) string {
	var sb strings.Builder
	for {
		loc := jsonCallPrefix.FindStringIndex(s)
		if loc == nil {
			if sb.Len() == 0 {
				return s
			}
			sb.WriteString(s)
			return sb.String()
		}
		sb.WriteString(s[:loc[0]])
		s = s[loc[1]:]
		s = s[jsonValueLen(s):]
	}
}

// jsonValueLen is the length of the JSON object or array that s starts
// with (after blanks), or 0 if it does not start with one.
func jsonValueLen(s string) int {
	trimmed := strings.TrimLeft(s, " \t\r\n")
	if trimmed == "" || (trimmed[0] != '{' && trimmed[0] != '[') {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(trimmed)))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return 0
	}
	return len(s) - len(trimmed) + int(dec.InputOffset())
}
