package command

import (
	"reflect"
	"strings"
	"testing"
)

// TestReasonTextsBuiltInAdvance: the reasons the command table builds
// once are exactly the text a verdict would build, for every name and
// every verb set that keeps them.
func TestReasonTextsBuiltInAdvance(t *testing.T) {
	sets := 0
	var walk func(s *verbSet, seen map[*verbSet]bool)
	walk = func(s *verbSet, seen map[*verbSet]bool) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if s.texts != nil {
			sets++
			if s.shared || len(s.texts) != len(s.names) {
				t.Fatalf("verb set %q: shared %v, %d texts for %d verbs", s.prefix, s.shared, len(s.texts), len(s.names))
			}
			for i, v := range s.names {
				if want := s.prefix + " " + v + ": read-only"; s.texts[i] != want {
					t.Errorf("verb text %q, want %q", s.texts[i], want)
				}
			}
		}
		for _, r := range s.rules {
			if r.sub != nil {
				walk(r.sub.verbs, seen)
			}
		}
	}
	seen := map[*verbSet]bool{}
	for name, r := range commandTable {
		if r.read != name+": read-only" {
			t.Errorf("%s: read reason %q", name, r.read)
		}
		if r.class == ruleWrite && r.write != name+": known writer" {
			t.Errorf("%s: write reason %q", name, r.write)
		}
		if r.class == ruleTool {
			walk(r.tool.verbs, seen)
		}
	}
	if sets < 50 {
		t.Errorf("only %d verb sets keep their reasons", sets)
	}
	if readReason("ls", "ls: read-only") == "" || readReason("ls", "lsx read-only") != "" || readReason("ls", "ls: readXonly") != "" {
		t.Error("readReason accepts a text that is not the name's reason, or refuses one that is")
	}
}

// TestReasonTextsMatchBuilt: every corpus command gets the same verdict
// with reasons built in advance as with every reason built at the end.
func TestReasonTextsMatchBuilt(t *testing.T) {
	n := 0
	for _, f := range allCorpusFiles {
		for _, r := range mustLoad(t, "testdata/commands/"+f) {
			for _, d := range []Dialect{DialectBash, DialectPOSIX} {
				fast := Options{}.Classify(r.command, d)
				lab := labOptions.Classify(r.command, d)
				noTexts = true
				slow := Options{}.Classify(r.command, d)
				slowLab := labOptions.Classify(r.command, d)
				noTexts = false
				if !reflect.DeepEqual(fast, slow) || !reflect.DeepEqual(lab, slowLab) {
					t.Fatalf("%s: %q in %s: reasons built in advance %q, built at the end %q", r.where, r.command, d, fast.Reasons, slow.Reasons)
				}
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d commands compared", n)
	}
}

// TestNetDevice: the single search finds the first /dev/tcp or /dev/udp
// path, as the two searches it replaced did.
func TestNetDevice(t *testing.T) {
	for _, s := range []string{"", "ls", "/dev/tcp", "/dev/udp/x", "cat /dev/null /dev/udp/h/53", "/dev//dev/tcp",
		"x /dev/tc /dev/udp", "/dev/", "/dev/t", "a /dev/udp /dev/tcp", "/dev/tcpx", "/dev/ud"} {
		want := strings.Index(s, "/dev/tcp")
		if j := strings.Index(s, "/dev/udp"); j >= 0 && (want < 0 || j < want) {
			want = j
		}
		if got := netDevice(s); got != want {
			t.Errorf("netDevice(%q) = %d, want %d", s, got, want)
		}
	}
}
