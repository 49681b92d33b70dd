package jsontree

import (
	"encoding/json"
	"strings"
	"testing"
)

// A document read and written again is the same compact JSON: keys in
// their order, numbers as written, text unescaped where JSON allows.
func TestParseEncodeKeepsOrderAndText(t *testing.T) {
	for _, doc := range []string{
		`{"b":1,"a":[true,null,"x<y&z"],"c":{"d":"é\n\"q\"","e":1.50e3}}`,
		`[]`, `{}`, `"just a string"`, `-0.25`,
	} {
		n, ok := Parse(doc)
		if !ok {
			t.Fatalf("Parse(%s) failed", doc)
		}
		if got := n.Encode(); got != doc {
			t.Errorf("Parse(%s).Encode() = %s", doc, got)
		}
	}
}

func TestParseRefusesWhatIsNotOneDocument(t *testing.T) {
	for _, s := range []string{``, `nope`, `{"a":`, `{"a":1} {}`, `[1,]`, `{"a" 1}`} {
		if n, ok := Parse(s); ok {
			t.Errorf("Parse(%q) = %s, want not ok", s, n.Encode())
		}
	}
}

// Decoded data gives the same tree whatever the map's order.
func TestFromValueSortsKeys(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"b":1.5,"a":"x","c":[null,false,{"z":1,"y":2}]}`), &v); err != nil {
		t.Fatal(err)
	}
	const want = `{"a":"x","b":1.5,"c":[null,false,{"y":2,"z":1}]}`
	for range 5 {
		if got := FromValue(v).Encode(); got != want {
			t.Fatalf("FromValue = %s, want %s", got, want)
		}
	}
}

func TestStringsAndLongestArray(t *testing.T) {
	n, _ := Parse(`{"a":["x",1],"b":{"c":[1,2,3],"d":"y"}}`)
	var strs []string
	for _, s := range n.Strings(nil) {
		strs = append(strs, s.Str)
	}
	if strings.Join(strs, ",") != "x,y" {
		t.Errorf("Strings = %v, want [x y]", strs)
	}
	if a := n.LongestArray(); a == nil || a.Encode() != "[1,2,3]" {
		t.Errorf("LongestArray = %v", a)
	}
	if one, _ := Parse(`{"a":1}`); one.LongestArray() != nil {
		t.Error("LongestArray of a document without arrays is not nil")
	}
}

func TestRank(t *testing.T) {
	str := func(s string) *Node { return &Node{Kind: String, Str: s} }
	raw := func(s string) *Node { return &Node{Kind: Scalar, Raw: s} }
	cases := []struct {
		key  string
		n    *Node
		want int
	}{
		{"status", str("running"), State},
		{"Pod_Status", str("x"), State},
		{"ready", raw("true"), State},
		{"message", str("all good"), State},
		{"line", str("connect() failed (111: Connection refused)"), State},
		{"last", raw("0.93"), Value},
		{"started_at", raw("1700000000"), Time},
		{"start", str("2026-03-04T10:00:00Z"), Time},
		{"when", str("2026-03-04 10:00:00"), Time},
		{"name", str("web1"), Identity},
		{"instance", str("web1:9100"), Identity},
		{"note", str("ordered by value"), Noise},
		{"ordered_by", str("max"), Noise},
		{"body", str(strings.Repeat("prose ", 60)), Noise},
		{"body", str("short prose"), Text},
	}
	for _, c := range cases {
		if got := Rank(c.key, c.n); got != c.want {
			t.Errorf("Rank(%q, %q%q) = %d, want %d", c.key, c.n.Str, c.n.Raw, got, c.want)
		}
	}
}

func TestMentionsError(t *testing.T) {
	for s, want := range map[string]bool{
		"kernel: Out of memory: Killed process 4242": true,
		"upstream timed out":                         true,
		"FATAL: role does not exist":                 true,
		"timeline rendered in 3 ms":                  false, // a stem, not a word
		"errorless run":                              false,
		"GET / 200":                                  false,
	} {
		if got := MentionsError(s); got != want {
			t.Errorf("MentionsError(%q) = %v, want %v", s, got, want)
		}
	}
}

// Whatever Parse accepts encodes to valid JSON that reads back the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}]}`, `"\u2028<>&"`, `[1e400]`, `{"":""}`, `not json`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := Parse(s)
		if !ok {
			return
		}
		out := n.Encode()
		if !json.Valid([]byte(out)) {
			t.Fatalf("Parse(%q).Encode() = %q: not JSON", s, out)
		}
		again, ok := Parse(out)
		if !ok || again.Encode() != out {
			t.Fatalf("%q does not read back as itself", out)
		}
	})
}
