package config

import "github.com/vigilops/vigil/policy"

// Identities is the identities section: whose permissions vigil uses on
// targets (policy.Identities). Its keys and rules are policy's; left out,
// vigil acts with its own credentials everywhere, as before.
type Identities = policy.Identities

// identityExamples are good values for the identities keys' errors.
var identityExamples = map[string]string{
	"identities.unmapped":               "refuse",
	"identities.fallback.kube.user":     "vigil-viewer",
	"identities.fallback.kube.groups":   "[view]",
	"identities.fallback.ssh.user":      "vigil",
	"identities.fallback.ssh.key_file":  "/etc/vigil/ssh/vigil",
	"identities.rules":                  `[{name: alice, match: [U0123ALICE, "@alice:example.org"], kube: {user: alice@example.org, groups: [sre]}}]`,
	"identities.rules[].name":           "alice",
	"identities.rules[].match":          `[U0123ALICE, "@alice:example.org", usergroup:S0123SRE, power_level:50]`,
	"identities.rules[].channels":       "[slack:C0123456789]",
	"identities.rules[].kube.user":      "alice@example.org",
	"identities.rules[].kube.groups":    "[sre, oncall]",
	"identities.rules[].ssh.user":       "alice",
	"identities.rules[].ssh.key_file":   "/etc/vigil/ssh/alice",
	"identities.rules[].match[]":        "U0123ALICE",
	"identities.rules[].channels[]":     "slack:C0123456789",
	"identities.rules[].kube.groups[]":  "sre",
	"identities.fallback.kube.groups[]": "view",
}

// validateIdentities checks the identities section.
func (c *Config) validateIdentities() []error {
	return c.moduleErrorsIn("identities", c.Identities.Validate())
}
