package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/app"
	"github.com/vigilops/vigil/internal/config"
)

// vigil run refuses to start with a name on an enabled platform it
// cannot look up: left as written, the name would never match. Names of
// a platform that is not enabled do not matter.
func TestResolveNamesNeedsCredentials(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vigil.yaml")
	yaml := `matrix:
  enabled: true
  homeserver: https://matrix.example.org
  user_id: '@vigil:example.org'
  password: secret
channels:
  - match: 'matrix:#ops:example.org'
    control_level: read_only
  - match: 'slack:#ops'
    control_level: read_only
`
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = app.ResolveNames(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "matrix names #ops:example.org cannot be looked up: matrix.access_token is not set") {
		t.Fatalf("error %v", err)
	}
	if strings.Contains(err.Error(), "slack") {
		t.Fatalf("the disabled platform's names were held against it: %v", err)
	}
}
