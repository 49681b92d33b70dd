package transport

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/testenv/sshdtest"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools/inventory"
)

// TestSSHActsAsThePerson runs commands through the Router on a real sshd
// that lets in two more accounts, each with its own key: a host with
// reach.ssh.identity per_person logs in as the mapped login of the person
// whose call it is (id -un says so), a host without it as the inventory's
// user, and a person without an allowed login runs nothing.
func TestSSHActsAsThePerson(t *testing.T) {
	const alice, bob = "vigil-t-alice", "vigil-t-bob"
	s := sshdtest.Start(t, sshdtest.Options{Users: []string{alice, bob}})
	base := inventory.SSHConfig{Host: s.Host, Port: s.Port, User: s.User, KeyFile: s.KeyFile, KnownHosts: s.KnownHosts}
	perPerson := base
	perPerson.Identity = inventory.SSHIdentityPerPerson
	perPerson.AllowedUsers = []string{alice, bob}
	onlyAlice := perPerson
	onlyAlice.AllowedUsers = []string{alice}
	inv, err := inventory.New([]inventory.Resource{
		{ID: "host:web1", Name: "web1", Kind: inventory.KindHost, Node: "web1", UID: "web1", Reach: inventory.Reach{SSH: &perPerson}},
		{ID: "host:web2", Name: "web2", Kind: inventory.KindHost, Node: "web2", UID: "web2", Reach: inventory.Reach{SSH: &base}},
		{ID: "host:web3", Name: "web3", Kind: inventory.KindHost, Node: "web3", UID: "web3", Reach: inventory.Reach{SSH: &onlyAlice}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := &policy.Identities{Rules: []policy.IdentityRule{
		{Name: "alice", Match: []string{"U0ALICE"}, Targets: policy.Targets{SSH: policy.SSHIdentity{User: alice, KeyFile: s.UserKeys[alice]}}},
		{Name: "bob", Match: []string{"@bob:example.org"}, Targets: policy.Targets{SSH: policy.SSHIdentity{User: bob, KeyFile: s.UserKeys[bob]}}},
		{Name: "bob-with-alices-key", Match: []string{"U0MIXUP"}, Targets: policy.Targets{SSH: policy.SSHIdentity{User: bob, KeyFile: s.UserKeys[alice]}}},
	}}
	r := NewRouter(inv, RouterOptions{})
	run := func(host string, a *policy.Actor) (ExecResult, error) {
		res, ok := inv.Lookup(host)
		if !ok {
			t.Fatalf("no %s", host)
		}
		return r.Run(t.Context(), res, RunSpec{Command: "id -un", Actor: a, Execution: policy.Execution{Confine: policy.ConfineNone}}, nil)
	}
	who := func(subject string) *policy.Actor { return ids.Resolve(policy.Subject{User: subject}, "slack:C1") }

	for _, tc := range []struct {
		host, person, want, actedAs string
	}{
		{"web1", "U0ALICE", alice, "ssh user " + alice + " on web1"},
		{"web1", "@bob:example.org", bob, "ssh user " + bob + " on web1"},
		{"web2", "U0ALICE", s.User, ""}, // not a per_person host
		{"web3", "U0ALICE", alice, "ssh user " + alice + " on web3"},
	} {
		out, err := run(tc.host, who(tc.person))
		if err != nil || strings.TrimSpace(out.Stdout) != tc.want || out.ActedAs != tc.actedAs {
			t.Errorf("%s for %s: ran as %q (acted as %q), %v; want %s", tc.host, tc.person, strings.TrimSpace(out.Stdout), out.ActedAs, err, tc.want)
		}
	}

	for _, tc := range []struct {
		name, host string
		actor      *policy.Actor
		want       string
	}{
		{"an unmapped person", "web1", who("U0MALLORY"), "U0MALLORY has no SSH identity"},
		{"no mapping at all", "web1", nil, "vigil has no identity mapping"},
		{"a login the host does not allow", "web3", who("@bob:example.org"), "web3 does not accept login " + bob},
	} {
		out, err := run(tc.host, tc.actor)
		if !errors.Is(err, ErrIdentity) || !strings.Contains(err.Error(), tc.want) || out.Stdout != "" {
			t.Errorf("%s: %q, %v; want ErrIdentity saying %q", tc.name, out.Stdout, err, tc.want)
		}
	}

	// Keys are per person: bob's login with alice's key is not let in.
	if out, err := run("web1", who("U0MIXUP")); !errors.Is(err, ErrTransport) {
		t.Errorf("bob with alice's key: %q, %v; want the login refused", out.Stdout, err)
	}
}
