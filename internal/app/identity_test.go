package app

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

func TestPerPersonHostsNeedAMapping(t *testing.T) {
	inv, err := inventory.Parse([]byte("resources:\n  - name: web1\n    kind: host\n    reach:\n      ssh:\n        host: web1\n        identity: per_person\n"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	err = checkIdentities(inv, &policy.Identities{}, log)
	if err == nil || !strings.Contains(err.Error(), "web1") || !strings.Contains(err.Error(), "identities maps nobody") {
		t.Fatalf("per_person host without a mapping: %v", err)
	}
	ids := &policy.Identities{Rules: []policy.IdentityRule{{Name: "a", Match: []string{"U0A"}, Targets: policy.Targets{SSH: policy.SSHIdentity{User: "a"}}}}}
	if err := checkIdentities(inv, ids, log); err != nil {
		t.Fatal(err)
	}
	if err := checkIdentities(inventory.Default(), &policy.Identities{}, log); err != nil {
		t.Fatal(err)
	}
}
