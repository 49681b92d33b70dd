package inventory

import (
	"slices"
	"strings"
	"testing"
)

func TestSSHIdentitySettings(t *testing.T) {
	inv, err := Parse([]byte("resources:\n  - name: web1\n    kind: host\n    reach:\n      ssh:\n        host: web1\n        user: vigil\n" +
		"        identity: per_person\n        allowed_users: [alice, bob]\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := inv.Lookup("web1")
	if r.Reach.SSH.Identity != SSHIdentityPerPerson || !slices.Equal(r.Reach.SSH.AllowedUsers, []string{"alice", "bob"}) {
		t.Fatalf("ssh = %+v", r.Reach.SSH)
	}
	r.Reach.SSH.AllowedUsers[0] = "mallory"
	if again, _ := inv.Lookup("web1"); again.Reach.SSH.AllowedUsers[0] != "alice" {
		t.Fatal("a looked-up resource shares its allowed users with the inventory")
	}
	for _, tc := range []struct{ ssh, want string }{
		{"        identity: asker\n", `reach.ssh.identity "asker" is not per_person`},
		{"        allowed_users: [alice]\n", "reach.ssh.allowed_users needs reach.ssh.identity: per_person"},
		{"        identity: per_person\n        allowed_users: [\"alice@web1\"]\n", `allowed_users entry "alice@web1" is not a login name`},
	} {
		_, err := Parse([]byte("resources:\n  - name: web1\n    kind: host\n    reach:\n      ssh:\n        host: web1\n" + tc.ssh))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.ssh, err, tc.want)
		}
	}
}
