package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
)

var update = flag.Bool("update", false, "rewrite golden files")

// decodeProbe exercises every decoding rule on one struct.
type decodeProbe struct {
	Action ReadAction `json:"action"`
	Target string     `json:"target"`
	Lines  int        `json:"lines,omitempty"`
	Tags   []string   `json:"tags,omitempty"`
	Force  bool       `json:"force,omitempty"`
}

func (p *decodeProbe) Validate() error {
	if p.Lines > 10 {
		return fieldErrorf("lines", "must be at most 10")
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

func builtinsForSpecs() []Tool {
	return Builtins(DefaultInventory(), NewRouter(DefaultInventory(), RouterOptions{}), NewMemoryStore())
}

// TestBuiltinSchemas checks what the model is told about every built-in
// tool: an object schema that forbids other properties, an enum for action
// and operation, and the parameter names of SPEC T2.
func TestBuiltinSchemas(t *testing.T) {
	wantParams := map[string][]string{
		"query":     {"action", "query", "resource"},
		"discover":  {"resource"},
		"read":      {"action", "target", "command", "path", "lines", "since"},
		"control":   {"action", "target", "operation", "service", "command"},
		"file_edit": {"action", "target", "path", "content"},
		"knowledge": {"action", "query", "key", "content", "tags"},
	}
	wantActions := map[string][]any{
		"query":     {"search", "get", "list", "topology", "health"},
		"read":      {"exec", "file", "find", "tail", "logs"},
		"control":   {"guest", "service", "command"},
		"file_edit": {"read", "write", "append"},
		"knowledge": {"recall", "search", "remember", "note", "save"},
	}
	for _, tool := range builtinsForSpecs() {
		spec := tool.Spec()
		t.Run(spec.Name, func(t *testing.T) {
			var s struct {
				Type                 string                    `json:"type"`
				AdditionalProperties *bool                     `json:"additionalProperties"`
				Properties           map[string]map[string]any `json:"properties"`
				Required             []string                  `json:"required"`
			}
			if err := json.Unmarshal(spec.Parameters, &s); err != nil {
				t.Fatalf("schema: %v", err)
			}
			if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("type = %q, additionalProperties = %v; want object and false", s.Type, s.AdditionalProperties)
			}
			var names []string
			for n, p := range s.Properties {
				names = append(names, n)
				if p["description"] == nil || p["description"] == "" {
					t.Errorf("property %s has no description", n)
				}
			}
			slices.Sort(names)
			want := slices.Sorted(slices.Values(wantParams[spec.Name]))
			if !slices.Equal(names, want) {
				t.Errorf("properties = %v, want %v", names, want)
			}
			if acts, ok := wantActions[spec.Name]; ok {
				enum, _ := s.Properties["action"]["enum"].([]any)
				if !slices.Equal(enum, acts) {
					t.Errorf("action enum = %v, want %v", enum, acts)
				}
				if !slices.Contains(s.Required, "action") {
					t.Errorf("action not required: %v", s.Required)
				}
			}
			if spec.Name == "control" {
				enum, _ := s.Properties["operation"]["enum"].([]any)
				if !slices.Equal(enum, []any{"start", "stop", "restart", "shutdown", "reboot"}) {
					t.Errorf("operation enum = %v", enum)
				}
			}
			if spec.Description == "" {
				t.Error("no description")
			}
		})
	}
}

// TestSpecsGolden pins the whole tool contract the model sees. Run with
// -update to regenerate after an intended change, and review the diff.
func TestSpecsGolden(t *testing.T) {
	r, err := NewRegistry(builtinsForSpecs()...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(r.Specs(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	// Parameters are raw JSON: re-indent them for a readable golden file.
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", "specs.golden.json")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tools -run TestSpecsGolden -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("specs differ from %s; run with -update and review the diff.\ngot:\n%s", path, buf.String())
	}
}

// FuzzDecodeArgs: whatever the model sends, decoding never panics, and
// anything accepted survives a round trip unchanged.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{"action":"exec","target":"web1","command":"uname -a"}`,
		`{"action":"tail","target":"web1","path":"/var/log/syslog","lines":10}`,
		`{"action":"logs","target":"a","since":"2h"}`,
		`{"action":"exec","target":"x","command":"ls","bogus":1}`,
		`{"action":"file"} {}`, `[]`, `null`, `"{}"`, ``, `{"lines":1e400}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, b := DecodeArgs[ReadArgs](raw)
		if b != nil {
			if b.Code != policy.CodeInvalidInput || b.Message == "" {
				t.Fatalf("block = %+v", b)
			}
			return
		}
		again, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		b2, blk := DecodeArgs[ReadArgs](again)
		if blk != nil || b2 != a {
			t.Fatalf("round trip of %s: %+v, %v", again, b2, blk)
		}
	})
}
