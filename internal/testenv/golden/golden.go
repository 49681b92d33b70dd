// Package golden compares renderer output with reviewed files under
// testdata/. Run a package's tests with -update to rewrite them, then
// review the diff.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Assert compares got with testdata/<name>, or rewrites that file with
// -update.
func Assert(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file: %v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -run '%s' -update and review the diff)\n--- got\n%s\n--- want\n%s",
			path, t.Name(), got, want)
	}
}

// JSON renders v as the golden form of a JSON payload: keys sorted, indented,
// and <, > and & left as they are so diffs read like the payload. Values that
// marshal themselves with HTML escaping are normalised too.
func JSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("golden: marshal: %v", err)
	}
	var norm any
	if err := json.Unmarshal(raw, &norm); err != nil {
		t.Fatalf("golden: %v", err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(norm); err != nil {
		t.Fatalf("golden: encode: %v", err)
	}
	return buf.Bytes()
}
