package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vigilops/vigil/tools"
)

func TestParseJSONReplyToolCall(t *testing.T) {
	tests := []struct {
		name, in, tool, args string
	}{
		{"plain", `{"tool_call":{"name":"read","parameters":{"action":"exec","target":"localhost","command":"uptime"}}}`,
			"read", `{"action":"exec","target":"localhost","command":"uptime"}`},
		{"whitespace and pretty", "\n  {\n  \"tool_call\": {\n    \"name\": \"query\",\n    \"parameters\": { \"action\": \"list\" }\n  }\n}\n",
			"query", `{"action":"list"}`},
		{"json fence", "```json\n{\"tool_call\":{\"name\":\"read\",\"parameters\":{}}}\n```", "read", `{}`},
		{"bare fence", "```\n{\"tool_call\":{\"parameters\":{\"n\":1.50},\"name\":\"metrics\"}}\n```\n", "metrics", `{"n":1.50}`},
		{"JSON fence uppercase", "```JSON\n{\"tool_call\":{\"name\":\"read\",\"parameters\":{}}}```", "read", `{}`},
		{"name trimmed", `{"tool_call":{"name":" read ","parameters":{"a":[1,{"b":null}]}}}`, "read", `{"a":[1,{"b":null}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseJSONReply(tt.in)
			if err != nil {
				t.Fatalf("ParseJSONReply: %v", err)
			}
			if r.Final != nil || r.ToolCall == nil {
				t.Fatalf("reply = %+v", r)
			}
			if r.ToolCall.Name != tt.tool || r.ToolCall.Arguments != tt.args {
				t.Errorf("call = %+v, want %s %s", r.ToolCall, tt.tool, tt.args)
			}
			if !strings.HasPrefix(r.ToolCall.ID, "json-") {
				t.Errorf("ID = %q", r.ToolCall.ID)
			}
		})
	}
}

func TestParseJSONReplyIDsDiffer(t *testing.T) {
	in := `{"tool_call":{"name":"read","parameters":{}}}`
	a, _ := ParseJSONReply(in)
	b, _ := ParseJSONReply(in)
	if a.ToolCall.ID == b.ToolCall.ID {
		t.Errorf("same ID twice: %s", a.ToolCall.ID)
	}
}

func TestParseJSONReplyFinal(t *testing.T) {
	tests := []struct {
		in, summary, confidence string
	}{
		{`{"final_answer":{"summary":"nginx is up","confidence":"high"}}`, "nginx is up", "high"},
		{`{"final_answer":{"confidence":"Medium","summary":"  maybe  "}}`, "maybe", "medium"},
		{"```json\n{\"final_answer\":{\"summary\":\"ünï\\ncode\",\"confidence\":\"low\"}}\n```", "ünï\ncode", "low"},
	}
	for _, tt := range tests {
		r, err := ParseJSONReply(tt.in)
		if err != nil {
			t.Errorf("ParseJSONReply(%q): %v", tt.in, err)
			continue
		}
		if r.ToolCall != nil || r.Final == nil || r.Final.Summary != tt.summary || r.Final.Confidence != tt.confidence {
			t.Errorf("ParseJSONReply(%q) = %+v", tt.in, r.Final)
		}
	}
}

func TestParseJSONReplyErrors(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
	}{
		{"empty", "  \n", "the reply is empty"},
		{"prose", "I will check the logs.", `starts with "I will check the log…"`},
		{"prose before", `Sure! {"tool_call":{"name":"read","parameters":{}}}`, "starts with \"Sure!"},
		{"prose after", `{"tool_call":{"name":"read","parameters":{}}} Let me know.`, `text after the JSON object ("Let me know.")`},
		{"two objects", `{"tool_call":{"name":"read","parameters":{}}}{"tool_call":{"name":"read","parameters":{}}}`, "text after the JSON object"},
		{"array", `[{"tool_call":{}}]`, `starts with "[`},
		{"truncated", `{"tool_call":{"name":"read","parameters":{"a":`, "not valid JSON"},
		{"empty object", `{}`, "the object is empty"},
		{"unknown top key", `{"answer":"x"}`, `unknown key "answer" at the top level`},
		{"both", `{"tool_call":{"name":"read","parameters":{}},"final_answer":{"summary":"x","confidence":"high"}}`, "both"},
		{"duplicate key", `{"tool_call":{"name":"a","parameters":{}},"tool_call":{"name":"b","parameters":{}}}`, `the key "tool_call" twice`},
		{"tool_call not object", `{"tool_call":"read"}`, `"tool_call" must be a JSON object, not a string`},
		{"missing name", `{"tool_call":{"parameters":{}}}`, `"tool_call.name" is missing`},
		{"name not string", `{"tool_call":{"name":3,"parameters":{}}}`, `"tool_call.name" must be a string`},
		{"empty name", `{"tool_call":{"name":" ","parameters":{}}}`, `"tool_call.name" is empty`},
		{"arguments instead", `{"tool_call":{"name":"read","arguments":{}}}`, `has key "arguments"; the arguments go in "parameters"`},
		{"unknown call key", `{"tool_call":{"name":"read","parameters":{},"id":"1"}}`, `unknown key "id"`},
		{"missing parameters", `{"tool_call":{"name":"read"}}`, `"tool_call.parameters" is missing; use {}`},
		{"parameters string", `{"tool_call":{"name":"read","parameters":"{\"a\":1}"}}`, `must be a JSON object, not a string`},
		{"parameters null", `{"tool_call":{"name":"read","parameters":null}}`, `must be a JSON object, not null`},
		{"parameters array", `{"tool_call":{"name":"read","parameters":[]}}`, `not an array`},
		{"final not object", `{"final_answer":"done"}`, `"final_answer" must be a JSON object, not a string`},
		{"missing summary", `{"final_answer":{"confidence":"high"}}`, `"final_answer.summary" is missing`},
		{"empty summary", `{"final_answer":{"summary":"","confidence":"high"}}`, `"final_answer.summary" is empty`},
		{"summary not string", `{"final_answer":{"summary":["a"],"confidence":"high"}}`, `"final_answer.summary" must be a string`},
		{"missing confidence", `{"final_answer":{"summary":"x"}}`, `"final_answer.confidence" is missing`},
		{"bad confidence", `{"final_answer":{"summary":"x","confidence":"certain"}}`, `"final_answer.confidence" is "certain"`},
		{"confidence number", `{"final_answer":{"summary":"x","confidence":0.9}}`, `must be a string`},
		{"unknown final key", `{"final_answer":{"summary":"x","confidence":"high","sources":[]}}`, `unknown key "sources"`},
		{"fence with prose", "Here you go:\n```json\n{}\n```", `starts with "Here you go`},
		{"unclosed fence", "```json\n{\"final_answer\":{\"summary\":\"x\",\"confidence\":\"high\"}}", "not closed"},
		{"other language fence", "```yaml\ntool_call: x\n```", "not ```json"},
		{"empty fence", "```json\n```", "fence is empty"},
		{"text after fence", "```json\n{}\n```\nthanks", "not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseJSONReply(tt.in)
			if err == nil {
				t.Fatalf("ParseJSONReply(%q) = %+v, want error containing %q", tt.in, r, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			if r.ToolCall != nil || r.Final != nil {
				t.Errorf("reply set on error: %+v", r)
			}
		})
	}
}

func TestJSONCorrection(t *testing.T) {
	bad := "I think the answer is yes"
	_, err := ParseJSONReply(bad)
	msg := JSONCorrection(bad, err)
	for _, want := range []string{
		"could not be used: the reply must be one JSON object",
		"<<<\nI think the answer is yes\n>>>",
		`{"tool_call":{"name":"<tool name>","parameters":{...}}}`,
		`{"final_answer":{"summary":"<your answer>","confidence":"high|medium|low"}}`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("correction lacks %q:\n%s", want, msg)
		}
	}

	long := strings.Repeat("é", 2000)
	msg = JSONCorrection(long, errors.New("too long."))
	if !strings.Contains(msg, "[1500 more characters cut]") || strings.Count(msg, "é") != 500 {
		t.Errorf("long quote not cut to 500 runes: %d runes", utf8.RuneCountInString(msg))
	}
	if !strings.Contains(msg, "could not be used: too long.\n") {
		t.Errorf("reason not quoted once: %s", msg[:80])
	}
	if msg := JSONCorrection("", nil); !strings.Contains(msg, "<<<\n(empty)\n>>>") {
		t.Errorf("empty quote: %s", msg)
	}
}

func TestJSONModePrompt(t *testing.T) {
	specs := []tools.Spec{
		{Name: "read", Description: "Read-only commands.", Parameters: json.RawMessage("{\n \"type\": \"object\",\n \"properties\": {\"command\": {\"type\": \"string\"}}\n}")},
		{Name: "knowledge", Description: "Memory."},
	}
	p := JSONModePrompt(specs)
	for _, want := range []string{
		`{"tool_call":{"name":"<tool name>","parameters":`,
		`{"final_answer":{"summary":"<your answer>","confidence":"high|medium|low"}}`,
		"exactly one JSON object",
		"### read\nRead-only commands.\nParameters (JSON Schema): {\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"string\"}}}\n",
		"### knowledge\nMemory.\nParameters (JSON Schema): " + EmptyParameters,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p != JSONModePrompt(specs) {
		t.Error("prompt is not deterministic")
	}
	if p := JSONModePrompt(nil); !strings.Contains(p, "No tools are available") {
		t.Errorf("empty prompt: %s", p)
	}
	// The formats the prompt shows are the ones the parser accepts.
	if _, err := ParseJSONReply(`{"tool_call":{"name":"read","parameters":{"command":"uptime"}}}`); err != nil {
		t.Error(err)
	}
}

func FuzzParseJSONReply(f *testing.F) {
	for _, s := range []string{
		`{"tool_call":{"name":"read","parameters":{"action":"exec","command":"uptime"}}}`,
		`{"final_answer":{"summary":"ok","confidence":"high"}}`,
		"```json\n{\"final_answer\":{\"summary\":\"ok\",\"confidence\":\"LOW\"}}\n```",
		"```\n{\"tool_call\":{\"name\":\"x\",\"parameters\":{}}}\n```",
		`{"tool_call":{"name":"read","parameters":null}}`,
		`{"tool_call":{"name":"","parameters":{}}}`,
		`{"final_answer":{"summary":" ","confidence":"high"}}`,
		`{"tool_call":{"name":"a","parameters":{"x":1}}} trailing`,
		`{"tool_call":{"name":"a","parameters":{"x":1}},"tool_call":{}}`,
		`{"a":1}`, `[]`, `""`, `null`, "", "```", "```json\n```",
		"{\"tool_call\":{\"name\":\"\\u0000\",\"parameters\":{\"\\ud800\":1}}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseJSONReply(s)
		if err != nil {
			if r.ToolCall != nil || r.Final != nil {
				t.Fatalf("error %v with reply set", err)
			}
			if JSONCorrection(s, err) == "" {
				t.Fatal("empty correction")
			}
			return
		}
		if (r.ToolCall == nil) == (r.Final == nil) {
			t.Fatalf("accepted %q with ToolCall=%v Final=%v", s, r.ToolCall, r.Final)
		}
		if tc := r.ToolCall; tc != nil {
			if strings.TrimSpace(tc.Name) == "" || tc.ID == "" {
				t.Fatalf("accepted %q with empty name or ID: %+v", s, tc)
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(tc.Arguments), &obj); err != nil || obj == nil {
				t.Fatalf("accepted %q with arguments %q that are not a JSON object: %v", s, tc.Arguments, err)
			}
		}
		if fa := r.Final; fa != nil {
			if strings.TrimSpace(fa.Summary) == "" {
				t.Fatalf("accepted %q with empty summary", s)
			}
			switch fa.Confidence {
			case ConfidenceHigh, ConfidenceMedium, ConfidenceLow:
			default:
				t.Fatalf("accepted %q with confidence %q", s, fa.Confidence)
			}
		}
	})
}
