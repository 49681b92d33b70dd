package agent

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigilops/vigil/tools"
)

// JSON tool mode (SPEC A2): for models without function calling, the tool
// schemas go into the system prompt and the model answers with exactly one
// JSON object, either a tool call or a final answer.

// Confidence levels of a final answer.
const (
	ConfidenceHigh   = "high"
	ConfidenceMedium = "medium"
	ConfidenceLow    = "low"
)

// jsonQuoteLimit bounds how much of a bad reply a correction quotes.
const jsonQuoteLimit = 500

// JSONReply is one parsed JSON-mode reply: exactly one of ToolCall and Final
// is set.
type JSONReply struct {
	ToolCall *ToolCall
	Final    *FinalAnswer
}

// FinalAnswer is a JSON-mode final answer.
type FinalAnswer struct {
	Summary string
	// Confidence is "high", "medium" or "low".
	Confidence string
}

// JSONModePrompt is the system-prompt section that offers specs in JSON
// mode: the exact reply format, then each tool with its parameter schema.
func JSONModePrompt(specs []tools.Spec) string {
	var b strings.Builder
	b.WriteString(`## How to reply

You cannot call functions natively. Every reply must be exactly one JSON object and nothing else: no prose before or after it, no second object.

To call one tool:
{"tool_call":{"name":"<tool name>","parameters":{<arguments as described by the tool's schema>}}}

To finish with your answer for the user:
{"final_answer":{"summary":"<your answer>","confidence":"high|medium|low"}}

Rules:
- One tool call per reply. You will get its result in the next message, then reply again.
- "parameters" is always a JSON object; use {} when a tool takes no arguments.
- "confidence" is exactly one of "high", "medium" or "low".
- Use only the tools listed below, with the parameter names their schemas give.

## Tools
`)
	if len(specs) == 0 {
		b.WriteString("\nNo tools are available: reply with a final_answer.\n")
	}
	for _, s := range specs {
		fmt.Fprintf(&b, "\n### %s\n", s.Name)
		if d := strings.TrimSpace(s.Description); d != "" {
			b.WriteString(d)
			b.WriteByte('\n')
		}
		b.WriteString("Parameters (JSON Schema): ")
		b.WriteString(compactSchema(s.Parameters))
		b.WriteByte('\n')
	}
	return b.String()
}

func compactSchema(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return EmptyParameters
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// ParseJSONReply parses a JSON-mode reply: exactly one JSON object,
// {"tool_call":{"name":..,"parameters":{..}}} or
// {"final_answer":{"summary":..,"confidence":"high|medium|low"}}. Surrounding
// whitespace and one ```json (or ```) fence around the object are
// tolerated; anything else is an error that says precisely what is wrong,
// worded for the model (see JSONCorrection). Callers strip leaked reasoning
// markup first (CleanMarkup).
//
// A tool call gets a generated ID ("json-" and random hex) and its
// parameters, compacted, as Arguments.
func ParseJSONReply(content string) (JSONReply, error) {
	body, err := unfence(content)
	if err != nil {
		return JSONReply{}, err
	}
	top, err := decodeObject([]byte(body), "the reply")
	if err != nil {
		return JSONReply{}, err
	}
	if len(top.fields) == 0 {
		return JSONReply{}, errors.New(`the object is empty; it needs a "tool_call" or a "final_answer" key`)
	}
	for k := range top.fields {
		if k != "tool_call" && k != "final_answer" {
			return JSONReply{}, fmt.Errorf(`unknown key %q at the top level; the only keys allowed are "tool_call" and "final_answer"`, k)
		}
	}
	if len(top.fields) > 1 {
		return JSONReply{}, errors.New(`the object has both "tool_call" and "final_answer"; send exactly one of them`)
	}
	if raw, ok := top.fields["tool_call"]; ok {
		tc, err := parseJSONToolCall(raw)
		if err != nil {
			return JSONReply{}, err
		}
		return JSONReply{ToolCall: tc}, nil
	}
	fa, err := parseFinalAnswer(top.fields["final_answer"])
	if err != nil {
		return JSONReply{}, err
	}
	return JSONReply{Final: fa}, nil
}

func parseJSONToolCall(raw json.RawMessage) (*ToolCall, error) {
	obj, err := decodeObject(raw, `"tool_call"`)
	if err != nil {
		return nil, err
	}
	for k := range obj.fields {
		switch k {
		case "name", "parameters":
		case "arguments", "args", "input", "params":
			return nil, fmt.Errorf(`"tool_call" has key %q; the arguments go in "parameters"`, k)
		default:
			return nil, fmt.Errorf(`"tool_call" has unknown key %q; it takes only "name" and "parameters"`, k)
		}
	}
	nameRaw, ok := obj.fields["name"]
	if !ok {
		return nil, errors.New(`"tool_call.name" is missing`)
	}
	var name string
	if err := json.Unmarshal(nameRaw, &name); err != nil {
		return nil, errors.New(`"tool_call.name" must be a string`)
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, errors.New(`"tool_call.name" is empty`)
	}
	params, ok := obj.fields["parameters"]
	if !ok {
		return nil, errors.New(`"tool_call.parameters" is missing; use {} for a tool without arguments`)
	}
	if p := bytes.TrimSpace(params); len(p) == 0 || p[0] != '{' {
		return nil, fmt.Errorf(`"tool_call.parameters" must be a JSON object, not %s`, jsonKind(p))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, params); err != nil {
		return nil, fmt.Errorf(`"tool_call.parameters" is not valid JSON: %w`, err)
	}
	return &ToolCall{ID: "json-" + randomHex(6), Name: name, Arguments: buf.String()}, nil
}

func parseFinalAnswer(raw json.RawMessage) (*FinalAnswer, error) {
	obj, err := decodeObject(raw, `"final_answer"`)
	if err != nil {
		return nil, err
	}
	for k := range obj.fields {
		if k != "summary" && k != "confidence" {
			return nil, fmt.Errorf(`"final_answer" has unknown key %q; it takes only "summary" and "confidence"`, k)
		}
	}
	var fa FinalAnswer
	sumRaw, ok := obj.fields["summary"]
	if !ok {
		return nil, errors.New(`"final_answer.summary" is missing`)
	}
	if err := json.Unmarshal(sumRaw, &fa.Summary); err != nil {
		return nil, errors.New(`"final_answer.summary" must be a string`)
	}
	fa.Summary = strings.TrimSpace(fa.Summary)
	if fa.Summary == "" {
		return nil, errors.New(`"final_answer.summary" is empty`)
	}
	confRaw, ok := obj.fields["confidence"]
	if !ok {
		return nil, errors.New(`"final_answer.confidence" is missing; use "high", "medium" or "low"`)
	}
	if err := json.Unmarshal(confRaw, &fa.Confidence); err != nil {
		return nil, errors.New(`"final_answer.confidence" must be a string: "high", "medium" or "low"`)
	}
	switch c := strings.ToLower(strings.TrimSpace(fa.Confidence)); c {
	case ConfidenceHigh, ConfidenceMedium, ConfidenceLow:
		fa.Confidence = c
	default:
		return nil, fmt.Errorf(`"final_answer.confidence" is %q; use "high", "medium" or "low"`, truncate(fa.Confidence, 40))
	}
	return &fa, nil
}

// unfence trims whitespace and one optional Markdown code fence.
func unfence(content string) (string, error) {
	s := strings.TrimSpace(content)
	if s == "" {
		return "", errors.New("the reply is empty; send one JSON object")
	}
	if !strings.HasPrefix(s, "```") {
		return s, nil
	}
	first, rest, ok := strings.Cut(s, "\n")
	lang := strings.TrimSpace(strings.TrimPrefix(first, "```"))
	if !ok || (lang != "" && !strings.EqualFold(lang, "json")) {
		return "", errors.New("the reply starts with a code fence that is not ```json on its own line; send the bare JSON object")
	}
	body, ok := strings.CutSuffix(strings.TrimRight(rest, " \t\r\n"), "```")
	if !ok {
		return "", errors.New("the ```json code fence is not closed at the end of the reply; send the bare JSON object")
	}
	body = strings.TrimSpace(body)
	if body == "" {
		return "", errors.New("the code fence is empty; send one JSON object")
	}
	return body, nil
}

// jsonObject is a decoded object with duplicate keys detected.
type jsonObject struct{ fields map[string]json.RawMessage }

// decodeObject decodes exactly one JSON object from data, rejecting
// duplicate keys and trailing content. what names the value in errors.
func decodeObject(data []byte, what string) (jsonObject, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		if what == "the reply" {
			return jsonObject{}, fmt.Errorf("the reply must be one JSON object starting with '{', but it starts with %q", firstRunes(string(data), 20))
		}
		return jsonObject{}, fmt.Errorf("%s must be a JSON object, not %s", what, jsonKind(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return jsonObject{}, fmt.Errorf("%s is not valid JSON: %v", what, err)
	}
	obj := jsonObject{fields: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return jsonObject{}, fmt.Errorf("%s is not valid JSON: %v", what, err)
		}
		key, ok := tok.(string)
		if !ok {
			return jsonObject{}, fmt.Errorf("%s is not valid JSON: expected a key", what)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return jsonObject{}, fmt.Errorf("%s is not valid JSON at key %q: %v", what, key, err)
		}
		if _, dup := obj.fields[key]; dup {
			return jsonObject{}, fmt.Errorf("%s has the key %q twice", what, key)
		}
		obj.fields[key] = val
	}
	if _, err := dec.Token(); err != nil { // '}'
		return jsonObject{}, fmt.Errorf("%s is not valid JSON: %v", what, err)
	}
	if off := dec.InputOffset(); off < int64(len(data)) {
		rest := strings.TrimSpace(string(data[off:]))
		if rest != "" {
			if what == "the reply" {
				return jsonObject{}, fmt.Errorf("there is text after the JSON object (%q); send exactly one object and nothing else", firstRunes(rest, 30))
			}
			return jsonObject{}, fmt.Errorf("%s has trailing content", what)
		}
	}
	return obj, nil
}

func jsonKind(p []byte) string {
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return "nothing"
	}
	switch p[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	default:
		return "a number"
	}
}

func firstRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// JSONCorrection is the message sent back to a model whose JSON-mode reply
// could not be used: what was wrong, the bad output quoted (cut to about
// 500 characters), and the two valid shapes.
func JSONCorrection(bad string, err error) string {
	quote := strings.TrimSpace(bad)
	if n := utf8.RuneCountInString(quote); n > jsonQuoteLimit {
		quote = string([]rune(quote)[:jsonQuoteLimit]) + fmt.Sprintf("… [%d more characters cut]", n-jsonQuoteLimit)
	}
	if quote == "" {
		quote = "(empty)"
	}
	reason := "it is not in the required format"
	if err != nil {
		reason = err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your last reply could not be used: %s.\n\n", strings.TrimSuffix(reason, "."))
	b.WriteString("Your reply was:\n<<<\n")
	b.WriteString(quote)
	b.WriteString("\n>>>\n\n")
	b.WriteString("Reply again with exactly one JSON object and nothing else, either\n")
	b.WriteString(`{"tool_call":{"name":"<tool name>","parameters":{...}}}`)
	b.WriteString("\nor\n")
	b.WriteString(`{"final_answer":{"summary":"<your answer>","confidence":"high|medium|low"}}`)
	return b.String()
}

// EmptyParameters is the JSON Schema of a tool that takes no arguments.
const EmptyParameters = `{"type":"object","properties":{}}`

// randomHex returns n random bytes in hex, for call IDs.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
