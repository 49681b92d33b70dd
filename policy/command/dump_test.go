package command

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestVerdictDump writes the whole verdict of every corpus command to the
// file named by VIGIL_VERDICT_DUMP, one JSON line each, twice over (the
// second pass classifies with warm pooled state). Performance work diffs
// two dumps: an optimisation must leave every verdict byte-identical.
// Without the variable it still checks that both passes agree.
func TestVerdictDump(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if shared, _ := sharedCorpusPath(); shared != "" {
		if _, err := os.Stat(shared); err == nil {
			files = append(files, shared)
		}
	}
	var cmds []string
	for _, f := range files {
		rows, err := loadCorpus(f)
		if err != nil {
			continue // fuzz seeds and other formats
		}
		for _, r := range rows {
			cmds = append(cmds, r.command)
		}
	}
	seeds, _ := filepath.Glob("testdata/fuzz/*/*")
	for _, f := range seeds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if lit, ok := strings.CutPrefix(line, "string("); ok {
				if c, err := strconv.Unquote(strings.TrimSuffix(lit, ")")); err == nil {
					cmds = append(cmds, c)
				}
			}
		}
	}
	if len(cmds) < 1000 {
		t.Fatalf("only %d corpus commands found", len(cmds))
	}
	var passes [2]strings.Builder
	for p := range passes {
		for _, c := range cmds {
			j, err := json.Marshal(Classify(c))
			if err != nil {
				t.Fatal(err)
			}
			passes[p].Write(j)
			passes[p].WriteByte('\n')
		}
	}
	if passes[0].String() != passes[1].String() {
		t.Fatal("a second classification of the corpus gave different verdicts")
	}
	if out := os.Getenv("VIGIL_VERDICT_DUMP"); out != "" {
		if err := os.WriteFile(out, []byte(passes[0].String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
