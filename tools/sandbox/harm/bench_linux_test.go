//go:build linux

package harm

import "testing"

// BenchmarkThrowawayMachine measures one command's cost in the harm test:
// the namespaces, the fake tree, both runs and the snapshots around them.
func BenchmarkThrowawayMachine(b *testing.B) {
	for b.Loop() {
		r, err := nsRun(b.Context(), "true")
		if err != nil || r.Setup != "" {
			b.Fatal(err, r.Setup)
		}
	}
}
