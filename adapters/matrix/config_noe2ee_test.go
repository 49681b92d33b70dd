//go:build !goolm

package matrix

import (
	"strings"
	"testing"
)

// Without the goolm build tag, E2EE fails at New with the rebuild recipe.
func TestE2EEFailsClearlyWithoutSupport(t *testing.T) {
	_, err := New(Config{Homeserver: "https://hs.example", UserID: "@v:hs.example", Password: "p", E2EE: true, StateDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "-tags goolm") || !strings.Contains(err.Error(), "matrix.e2ee") {
		t.Fatalf("err = %v, want a clear rebuild hint", err)
	}
}
