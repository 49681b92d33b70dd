package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/vigilops/vigil/policy"
)

func TestIdentitySettings(t *testing.T) {
	c, err := Load(write(t, `
identities:
  unmapped: fallback
  fallback:
    kube: {user: vigil-viewer, groups: [view]}
  rules:
    - name: alice
      match: [U0123ALICE, "@alice:example.org"]
      kube: {user: alice@example.org, groups: [sre, oncall]}
      ssh: {user: alice, key_file: /etc/vigil/ssh/alice}
    - name: sre
      match: [usergroup:S0123SRE, power_level:50]
      channels: [slack:C0123456789]
      kube: {user: sre-team, groups: [sre]}
`))
	if err != nil {
		t.Fatal(err)
	}
	ids := &c.Identities
	if !ids.Configured() || len(ids.Rules) != 2 || ids.Rules[0].SSH.KeyFile != "/etc/vigil/ssh/alice" {
		t.Fatalf("identities = %+v", ids)
	}
	if got := ids.KubeUsers(); !slices.Equal(got, []string{"alice@example.org", "sre-team", "vigil-viewer"}) {
		t.Errorf("KubeUsers = %q", got)
	}
	if got := ids.KubeGroups(); !slices.Equal(got, []string{"oncall", "sre", "view"}) {
		t.Errorf("KubeGroups = %q", got)
	}

	// No section: no mapping, so no Actor and today's behaviour.
	c, err = Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.Identities.Configured() || c.Identities.Resolve(policy.Subject{User: "U1"}, "slack:C1") != nil {
		t.Fatal("identities are configured by default")
	}

	for _, tc := range []struct{ yaml, key, want string }{
		{"identities:\n  unmapped: maybe\n", "identities.unmapped", "must be refuse or fallback"},
		{"identities:\n  unmapped: fallback\n", "identities.fallback", "is required with unmapped: fallback"},
		{"identities:\n  unmapped: refuse\n  fallback: {kube: {user: x}}\n", "identities.fallback", "would never be used"},
		{"identities:\n  rules: [{name: a, match: [alice], kube: {user: a}}]\n", "identities.rules[0].match[0]", "is not a Slack user ID"},
		{"identities:\n  rules: [{name: a, match: [\"@Alice\"], kube: {user: a}}]\n", "identities.rules[0].match[0]", "is not a Matrix user ID"},
		{"identities:\n  rules: [{name: a, match: [power_level:high], kube: {user: a}}]\n", "identities.rules[0].match[0]", "is not a power level"},
		{"identities:\n  rules: [{name: a, match: [\"usergroup:\"], kube: {user: a}}]\n", "identities.rules[0].match[0]", "is not a user group"},
		{"identities:\n  rules: [{name: a, match: [\"alert:\"], kube: {user: a}}]\n", "identities.rules[0].match[0]", "is not an alert source"},
		{"identities:\n  rules: [{name: a, kube: {user: a}}]\n", "identities.rules[0].match", "is required"},
		{"identities:\n  rules: [{match: [U0A], kube: {user: a}}]\n", "identities.rules[0].name", "is required"},
		{"identities:\n  rules: [{name: a, match: [U0A], kube: {user: a}}, {name: a, match: [U0B], kube: {user: b}}]\n", "identities.rules[1].name", "used by an earlier rule"},
		{"identities:\n  rules: [{name: a, match: [U0A]}]\n", "identities.rules[0]", "maps to nothing"},
		{"identities:\n  rules: [{name: a, match: [U0A], kube: {groups: [sre]}}]\n", "identities.rules[0].kube.user", "is required when kube.groups is set"},
		{"identities:\n  rules: [{name: a, match: [U0A], kube: {user: \"a b\"}}]\n", "identities.rules[0].kube.user", "without spaces"},
		{"identities:\n  rules: [{name: a, match: [U0A], kube: {user: a, groups: [sre, sre]}}]\n", "identities.rules[0].kube.groups[1]", "listed twice"},
		{"identities:\n  rules: [{name: a, match: [U0A], ssh: {user: Root!}}]\n", "identities.rules[0].ssh.user", "must be a login name"},
		{"identities:\n  rules: [{name: a, match: [U0A], channels: [C0123], kube: {user: a}}]\n", "identities.rules[0].channels[0]", "must be a channel key"},
		{"identities:\n  rules: [{name: a, match: [U0A], kube: {user: a, role: admin}}]\n", "identities.rules[0].kube.role", ""},
	} {
		_, err := Load(write(t, tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%q) = %v\nwant an error naming %s (%s)", tc.yaml, err, tc.key, tc.want)
		}
	}
}
