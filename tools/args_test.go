package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
)

// decodeProbe exercises every decoding rule on one struct.
// probeAction is an enumerated action like a tool's.
type probeAction string

func (probeAction) EnumValues() []string { return []string{"exec", "file", "find", "tail", "logs"} }

type decodeProbe struct {
	Action probeAction `json:"action"`
	Target string      `json:"target"`
	Lines  int         `json:"lines,omitempty"`
	Tags   []string    `json:"tags,omitempty"`
	Force  bool        `json:"force,omitempty"`
}

func (p *decodeProbe) Validate() error {
	if p.Lines > 10 {
		return FieldErrorf("lines", "must be at most 10")
	}
	return nil
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		wantField string // "" for success; "-" for an error not about one field
		wantMsg   string
	}{
		{name: "ok", raw: `{"action":"exec","target":"web1","lines":3,"tags":["a"],"force":true}`},
		{name: "ok with whitespace", raw: "  {\"action\":\"file\",\"target\":\"web1\"}\n"},
		{name: "null optional", raw: `{"action":"file","target":"web1","lines":null}`},
		{name: "unknown field", raw: `{"action":"exec","target":"web1","bogus":1}`, wantField: "bogus", wantMsg: `field "bogus": unknown field; known fields: action, target, lines, tags, force`},
		{name: "case folded key", raw: `{"action":"exec","Target":"web1"}`, wantField: "Target", wantMsg: `field "Target": unknown field`},
		{name: "wrong type", raw: `{"action":"exec","target":"web1","lines":"ten"}`, wantField: "lines", wantMsg: `field "lines": want integer, got string`},
		{name: "fraction for integer", raw: `{"action":"exec","target":"web1","lines":1.5}`, wantField: "lines", wantMsg: `field "lines": want integer, got number 1.5`},
		{name: "wrong element type", raw: `{"action":"exec","target":"web1","tags":[1]}`, wantField: "tags", wantMsg: `field "tags": want array of strings, got array containing a number`},
		{name: "string for bool", raw: `{"action":"exec","target":"web1","force":"yes"}`, wantField: "force", wantMsg: `field "force": want boolean, got string`},
		{name: "number for string", raw: `{"action":"exec","target":7}`, wantField: "target", wantMsg: `field "target": want string, got number`},
		{name: "missing required", raw: `{"action":"exec"}`, wantField: "target", wantMsg: `field "target": required`},
		{name: "null required", raw: `{"action":"exec","target":null}`, wantField: "target", wantMsg: `field "target": required`},
		{name: "empty required", raw: `{"action":"exec","target":""}`, wantField: "target", wantMsg: `field "target": required, got an empty string`},
		{name: "bad enum", raw: `{"action":"rm","target":"web1"}`, wantField: "action", wantMsg: `field "action": want one of exec|file|find|tail|logs; got "rm"`},
		{name: "validate", raw: `{"action":"exec","target":"web1","lines":11}`, wantField: "lines", wantMsg: `field "lines": must be at most 10`},
		{name: "trailing object", raw: `{"action":"exec","target":"web1"} {"action":"exec"}`, wantField: "-", wantMsg: "exactly one JSON object"},
		{name: "trailing garbage", raw: `{"action":"exec","target":"web1"}x`, wantField: "-", wantMsg: "exactly one JSON object"},
		{name: "array", raw: `[{"action":"exec"}]`, wantField: "-", wantMsg: "must be one JSON object, got array"},
		{name: "double encoded", raw: `"{\"action\":\"exec\"}"`, wantField: "-", wantMsg: "must be one JSON object, got string"},
		{name: "null", raw: `null`, wantField: "-", wantMsg: "must be one JSON object, got null"},
		{name: "duplicate key", raw: `{"action":"exec","target":"a","target":"b"}`, wantField: "-", wantMsg: `field "target": given twice`},
		{name: "broken JSON", raw: `{"action":"exec",`, wantField: "-", wantMsg: "not valid JSON"},
		{name: "empty means {}", raw: ``, wantField: "action", wantMsg: `field "action": required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, b := DecodeArgs[decodeProbe](json.RawMessage(tt.raw))
			if tt.wantField == "" {
				if b != nil {
					t.Fatalf("DecodeArgs: unexpected block %v", b)
				}
				if got.Target != "web1" {
					t.Errorf("Target = %q, want web1", got.Target)
				}
				return
			}
			if b == nil {
				t.Fatalf("DecodeArgs accepted %s as %+v", tt.raw, got)
			}
			if b.Code != policy.CodeInvalidInput {
				t.Errorf("Code = %s, want INVALID_INPUT", b.Code)
			}
			if !strings.Contains(b.Message, tt.wantMsg) {
				t.Errorf("Message = %q, want it to contain %q", b.Message, tt.wantMsg)
			}
			if tt.wantField != "-" && b.Details["field"] != tt.wantField {
				t.Errorf("Details[field] = %v, want %q", b.Details["field"], tt.wantField)
			}
			if b.RecoveryHint == "" {
				t.Error("no recovery hint")
			}
		})
	}
}

func TestDecodeArgsTooLarge(t *testing.T) {
	raw := `{"action":"exec","target":"` + strings.Repeat("a", maxArgsBytes) + `"}`
	if _, b := DecodeArgs[decodeProbe](json.RawMessage(raw)); b == nil || !strings.Contains(b.Message, "limit") {
		t.Fatalf("oversized arguments: block = %v", b)
	}
}
