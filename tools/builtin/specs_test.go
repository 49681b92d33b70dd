package builtin

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

var update = flag.Bool("update", false, "rewrite golden files")

func builtinsForSpecs() []tools.Tool {
	return Tools(inventory.Default(), transport.NewRouter(inventory.Default(), transport.RouterOptions{}), NewMemoryStore())
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
	r, err := tools.NewRegistry(builtinsForSpecs()...)
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
		t.Fatalf("%v (run go test ./tools/builtin -run TestSpecsGolden -update)", err)
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
		a, b := tools.DecodeArgs[ReadArgs](raw)
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
		b2, blk := tools.DecodeArgs[ReadArgs](again)
		if blk != nil || b2 != a {
			t.Fatalf("round trip of %s: %+v, %v", again, b2, blk)
		}
	})
}

// TestEveryBuiltinActionDeclaresItsKind proves the contract policy relies
// on: every value the model may send as a built-in tool's action has a
// declared kind, and a tool without an action parameter declares one kind
// for every call. A new action added to a schema without a kind fails here
// instead of silently becoming a write.
func TestEveryBuiltinActionDeclaresItsKind(t *testing.T) {
	for _, tool := range builtinsForSpecs() {
		spec := tool.Spec()
		var schema struct {
			Properties map[string]struct {
				Enum []string `json:"enum"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			t.Fatalf("%s: schema: %v", spec.Name, err)
		}
		if !spec.Kinds.Valid() {
			t.Errorf("%s: kinds %+v are not a valid declaration", spec.Name, spec.Kinds)
		}
		action, ok := schema.Properties["action"]
		if !ok {
			if spec.Kinds.Every == "" {
				t.Errorf("%s has no action parameter but does not declare one kind for every call", spec.Name)
			}
			continue
		}
		if len(action.Enum) == 0 {
			t.Errorf("%s: the action parameter lists no values", spec.Name)
		}
		for _, a := range action.Enum {
			if !spec.Kinds.Declares(a) {
				t.Errorf("%s: action %q has no declared kind", spec.Name, a)
			}
		}
		for a := range spec.Kinds.Actions {
			if !slices.Contains(action.Enum, a) {
				t.Errorf("%s: declares a kind for %q, which the schema does not offer", spec.Name, a)
			}
		}
	}
}
