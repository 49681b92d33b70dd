package testkit

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Args builds a tool call's JSON arguments from key/value pairs.
func Args(kv ...any) string {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// AppendLine is a write whose every execution leaves one line in file, so
// LineCount says how many times it ran.
func AppendLine(file string) string { return "echo ran >> " + file }

// LineCount counts the lines of file; a missing file has none.
func LineCount(t testing.TB, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
