package app

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

// checkIdentities refuses to start when inventory hosts log in as the
// person who asks (reach.ssh.identity: per_person) and no identity mapping
// exists, since every command there would be refused; and says at start
// whose identity calls use.
func checkIdentities(inv *inventory.Inventory, ids *policy.Identities, log *slog.Logger) error {
	var hosts []string
	for _, r := range inv.All() {
		if r.Reach.SSH != nil && r.Reach.SSH.Identity == inventory.SSHIdentityPerPerson {
			hosts = append(hosts, r.Name)
		}
	}
	if !ids.Configured() {
		if len(hosts) > 0 {
			return fmt.Errorf("config: inventory hosts %s log in as the person who asks (reach.ssh.identity: %s), but identities maps nobody; "+
				"add identities.rules (README: \"Acting as the person who asks\") or remove identity: %s",
				strings.Join(hosts, ", "), inventory.SSHIdentityPerPerson, inventory.SSHIdentityPerPerson)
		}
		return nil
	}
	mode := ids.Unmapped
	if mode == "" {
		mode = policy.UnmappedRefuse
	}
	log.Info("identity mapping: kube acts as the asker (reads) or the approver (changes)",
		"rules", len(ids.Rules), "unmapped", string(mode), "kube_users", len(ids.KubeUsers()), "per_person_ssh_hosts", len(hosts))
	return nil
}
