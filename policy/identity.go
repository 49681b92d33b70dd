package policy

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vigilops/vigil/confkey"
)

// Identity mapping: whose permissions a call uses on its target. Without
// it (the zero Identities) vigil acts with its own credentials everywhere,
// as it always did. With it, the kube tool impersonates the Kubernetes
// user and groups mapped from the person whose call it is (the asker for
// reads, the approver for an approved change), and SSH hosts that opt in
// log in as that person's mapped SSH user. A person the rules do not map
// gets the fallback identity or is refused, as Unmapped says.

// UnmappedMode is what happens to a person no rule maps.
type UnmappedMode string

const (
	// UnmappedRefuse refuses calls that need an identity on the target.
	UnmappedRefuse UnmappedMode = "refuse"
	// UnmappedFallback uses the configured fallback identity.
	UnmappedFallback UnmappedMode = "fallback"
)

// PowerLevelPrefix marks a rule entry matching Matrix users whose power
// level in the room is at least the number ("power_level:50").
const PowerLevelPrefix = "power_level:"

// AlertSourcePrefix marks a rule entry matching the investigations vigil
// starts on alerts from one source ("alert:alertmanager"): their
// requester is "alert:<source>/<alert name>".
const AlertSourcePrefix = "alert:"

// KubeIdentity is a Kubernetes user and groups vigil impersonates.
type KubeIdentity struct {
	User   string   `json:"user,omitempty" mapstructure:"user"`
	Groups []string `json:"groups,omitempty" mapstructure:"groups"`
}

// Set reports whether it names a user.
func (k KubeIdentity) Set() bool { return k.User != "" }

// String reads "k8s user alice@example.org, groups sre, oncall".
func (k KubeIdentity) String() string {
	s := "k8s user " + k.User
	if len(k.Groups) > 0 {
		s += ", groups " + strings.Join(k.Groups, ", ")
	} else {
		s += ", no groups"
	}
	return s
}

// SSHIdentity is the account vigil logs in as on hosts that act as the
// person (inventory reach.ssh.identity: per_person).
type SSHIdentity struct {
	User string `json:"user,omitempty" mapstructure:"user"`
	// KeyFile is that account's private key; empty uses the host's
	// reach.ssh.key_file.
	KeyFile string `json:"key_file,omitempty" mapstructure:"key_file"`
}

// Set reports whether it names a user.
func (s SSHIdentity) Set() bool { return s.User != "" }

// Targets are the identities one person (or the fallback) has on targets.
type Targets struct {
	Kube KubeIdentity `mapstructure:"kube"`
	SSH  SSHIdentity  `mapstructure:"ssh"`
}

// IdentityRule maps people to target identities. The first rule that
// matches a person and names an identity for a target decides it.
type IdentityRule struct {
	Name string `mapstructure:"name"`
	// Match lists Slack user IDs (U0123…), Matrix user IDs
	// (@alice:example.org), user groups (usergroup:S0123…), Matrix
	// power levels (power_level:50 matches 50 and above) and the
	// investigations of alerts from a source (alert:alertmanager).
	Match []string `mapstructure:"match"`
	// Channels limits the rule to these channel policy keys
	// (slack:C0123…, matrix:!room:server, console); empty: every channel.
	Channels []string `mapstructure:"channels"`
	Targets  `mapstructure:",squash"`
}

// Identities is the identities section.
type Identities struct {
	// Unmapped is refuse (the default) or fallback.
	Unmapped UnmappedMode   `mapstructure:"unmapped"`
	Fallback Targets        `mapstructure:"fallback"`
	Rules    []IdentityRule `mapstructure:"rules"`
}

// Configured reports whether any identity mapping is set; when not, vigil
// acts with its own credentials as before.
func (m *Identities) Configured() bool {
	return m != nil && (len(m.Rules) > 0 || m.Unmapped != "" || m.Fallback.Kube.Set() || m.Fallback.SSH.Set())
}

func (m *Identities) mode() UnmappedMode {
	if m.Unmapped == "" {
		return UnmappedRefuse
	}
	return m.Unmapped
}

var (
	slackUserID    = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	matrixUserID   = regexp.MustCompile(`^@[a-z0-9._=/+-]+:[A-Za-z0-9.-]+(:[0-9]+)?$`)
	groupID        = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	channelKey     = regexp.MustCompile(`^(console|default|(slack|matrix):\S+)$`)
	sshUserName    = regexp.MustCompile(`^[a-z_][a-z0-9_.-]{0,31}$`)
	kubeNameNoCtrl = regexp.MustCompile(`^[^\s,]+$`)
)

// checkMatch says what is wrong with one match entry, or "".
func checkMatch(e string) string {
	switch {
	case strings.HasPrefix(e, UserGroupPrefix):
		if !groupID.MatchString(strings.TrimPrefix(e, UserGroupPrefix)) {
			return "is not a user group: write usergroup:<id>, e.g. usergroup:S0123ABCD"
		}
	case strings.HasPrefix(e, PowerLevelPrefix):
		if _, err := strconv.Atoi(strings.TrimPrefix(e, PowerLevelPrefix)); err != nil {
			return "is not a power level: write power_level:<integer>, e.g. power_level:50"
		}
	case strings.HasPrefix(e, AlertSourcePrefix):
		if !groupID.MatchString(strings.TrimPrefix(e, AlertSourcePrefix)) {
			return "is not an alert source: write alert:<source>, e.g. alert:alertmanager"
		}
	case strings.HasPrefix(e, "@"):
		if !matrixUserID.MatchString(e) {
			return "is not a Matrix user ID: write @name:server, e.g. @alice:example.org"
		}
	case !slackUserID.MatchString(e):
		return "is not a Slack user ID (U0123ABCD), Matrix user ID (@alice:example.org), usergroup:<id>, power_level:<n> or alert:<source>"
	}
	return ""
}

// checkTargets adds the problems of one set of target identities.
func checkTargets(es *confkey.Errors, key string, t Targets) {
	if t.Kube.User != "" && !kubeNameNoCtrl.MatchString(t.Kube.User) {
		es.AddValue(key+".kube.user", t.Kube.User, "must be one Kubernetes user name without spaces or commas")
	}
	if t.Kube.User == "" && len(t.Kube.Groups) > 0 {
		es.Add(key+".kube.user", "is required when kube.groups is set (Kubernetes impersonates groups only with a user)")
	}
	for i, g := range t.Kube.Groups {
		if !kubeNameNoCtrl.MatchString(g) {
			es.AddValue(fmt.Sprintf("%s.kube.groups[%d]", key, i), g, "must be one Kubernetes group name without spaces or commas")
		}
		if slices.Index(t.Kube.Groups, g) != i {
			es.AddValue(fmt.Sprintf("%s.kube.groups[%d]", key, i), g, "is listed twice")
		}
	}
	if t.SSH.User != "" && !sshUserName.MatchString(t.SSH.User) {
		es.AddValue(key+".ssh.user", t.SSH.User, "must be a login name (lower case letters, digits, _ . -)")
	}
	if t.SSH.User == "" && t.SSH.KeyFile != "" {
		es.Add(key+".ssh.user", "is required when ssh.key_file is set")
	}
}

// Validate checks the mapping without I/O; problems name their keys
// relative to the identities section.
func (m *Identities) Validate() error {
	es := confkey.NewErrors("")
	switch m.Unmapped {
	case "", UnmappedRefuse:
		if m.Fallback.Kube.Set() || m.Fallback.SSH.Set() {
			es.Add("fallback", "is set but unmapped is refuse, so it would never be used; set unmapped: fallback or remove it")
		}
	case UnmappedFallback:
		if !m.Fallback.Kube.Set() && !m.Fallback.SSH.Set() {
			es.Add("fallback", "is required with unmapped: fallback: give fallback.kube.user and/or fallback.ssh.user")
		}
	default:
		es.AddValue("unmapped", string(m.Unmapped), "must be refuse or fallback")
	}
	checkTargets(es, "fallback", m.Fallback)
	names := map[string]bool{}
	for i, r := range m.Rules {
		key := fmt.Sprintf("rules[%d]", i)
		switch {
		case r.Name == "":
			es.Add(key+".name", "is required (it names the rule in audit records)")
		case names[r.Name]:
			es.AddValue(key+".name", r.Name, "is used by an earlier rule")
		}
		names[r.Name] = true
		if len(r.Match) == 0 {
			es.Add(key+".match", "is required: list user IDs, usergroup:<id> or power_level:<n>")
		}
		for j, e := range r.Match {
			if why := checkMatch(e); why != "" {
				es.AddValue(fmt.Sprintf("%s.match[%d]", key, j), e, "%s", why)
			}
		}
		for j, c := range r.Channels {
			if !channelKey.MatchString(c) {
				es.AddValue(fmt.Sprintf("%s.channels[%d]", key, j), c, "must be a channel key: slack:<channel id>, matrix:<room id> or console")
			}
		}
		if !r.Kube.Set() && !r.SSH.Set() && len(r.Kube.Groups) == 0 && r.SSH.KeyFile == "" {
			es.Add(key, "maps to nothing: give kube.user and/or ssh.user")
		}
		checkTargets(es, key, r.Targets)
	}
	return es.Err()
}

// KubeUsers and KubeGroups list every Kubernetes user and group the
// mapping may impersonate (rules and fallback), sorted, for RBAC.
func (m *Identities) KubeUsers() []string {
	var out []string
	for _, t := range m.targets() {
		if t.Kube.User != "" {
			out = append(out, t.Kube.User)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// KubeGroups: see KubeUsers.
func (m *Identities) KubeGroups() []string {
	var out []string
	for _, t := range m.targets() {
		out = append(out, t.Kube.Groups...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (m *Identities) targets() []Targets {
	out := []Targets{m.Fallback}
	for _, r := range m.Rules {
		out = append(out, r.Targets)
	}
	return out
}

// matches reports whether rule r applies to s in channel.
func (r IdentityRule) matches(s Subject, channel string) bool {
	if len(r.Channels) > 0 && !slices.Contains(r.Channels, channel) {
		return false
	}
	for _, e := range r.Match {
		switch {
		case strings.HasPrefix(e, PowerLevelPrefix):
			n, err := strconv.Atoi(strings.TrimPrefix(e, PowerLevelPrefix))
			if err == nil && s.PowerLevel != nil && *s.PowerLevel >= n {
				return true
			}
		case strings.HasPrefix(e, UserGroupPrefix):
			if slices.Contains(s.Groups, e) {
				return true
			}
		case strings.HasPrefix(e, AlertSourcePrefix):
			if strings.HasPrefix(s.User, e+"/") {
				return true
			}
		case e == s.User && e != "":
			return true
		}
	}
	return false
}

// Actor is a person as a call acts for them: their chat identity and the
// identities the mapping gives them on targets. A nil *Actor means no
// mapping is configured: tools act with vigil's own credentials.
type Actor struct {
	// Chat is the platform user ID ("U0123", "@alice:example.org"), or
	// what started a run no person started ("alertmanager").
	Chat string `json:"chat"`
	// Kube is the Kubernetes identity to impersonate; unset: none (the
	// kube tool refuses, saying Unmapped).
	Kube KubeIdentity `json:"kube,omitzero"`
	// KubeRule names the rule that gave Kube ("fallback" for the fallback).
	KubeRule string `json:"kube_rule,omitempty"`
	// SSH is the login on hosts that act as the person; unset: none
	// (such hosts refuse, saying Unmapped).
	SSH     SSHIdentity `json:"ssh,omitzero"`
	SSHRule string      `json:"ssh_rule,omitempty"`
	// Unmapped says why a target has no identity for this person, for the
	// refusal.
	Unmapped string `json:"unmapped,omitempty"`
}

// ErrNoIdentity is what a refusal for a missing identity matches.
var ErrNoIdentity = errors.New("no identity for this person on the target")

// KubeRefusal is the error a kube call for a gets when a has no Kubernetes
// identity, or nil.
func (a *Actor) KubeRefusal() error {
	if a == nil || a.Kube.Set() {
		return nil
	}
	return fmt.Errorf("%w: %s has no Kubernetes identity: %s", ErrNoIdentity, a.who(), a.Unmapped)
}

// SSHRefusal is the same for SSH hosts that act as the person.
func (a *Actor) SSHRefusal() error {
	if a == nil || a.SSH.Set() {
		return nil
	}
	return fmt.Errorf("%w: %s has no SSH identity: %s", ErrNoIdentity, a.who(), a.Unmapped)
}

func (a *Actor) who() string {
	if a.Chat == "" {
		return "the person"
	}
	return a.Chat
}

// Resolve is the Actor of s in channel (a channel policy key). It returns
// nil when no mapping is configured. A System requester (s.User naming
// what started the run) is matched like anyone, so only a rule listing
// it, or the fallback, gives it an identity.
func (m *Identities) Resolve(s Subject, channel string) *Actor {
	if !m.Configured() {
		return nil
	}
	a := &Actor{Chat: s.User}
	for _, r := range m.Rules {
		if !r.matches(s, channel) {
			continue
		}
		if !a.Kube.Set() && r.Kube.Set() {
			a.Kube, a.KubeRule = cloneKube(r.Kube), r.Name
		}
		if !a.SSH.Set() && r.SSH.Set() {
			a.SSH, a.SSHRule = r.SSH, r.Name
		}
	}
	if a.Kube.Set() && a.SSH.Set() {
		return a
	}
	if m.mode() == UnmappedFallback {
		if !a.Kube.Set() && m.Fallback.Kube.Set() {
			a.Kube, a.KubeRule = cloneKube(m.Fallback.Kube), "fallback"
		}
		if !a.SSH.Set() && m.Fallback.SSH.Set() {
			a.SSH, a.SSHRule = m.Fallback.SSH, "fallback"
		}
		a.Unmapped = "no identity rule maps them here and the fallback (identities.fallback) names none for this target"
	} else {
		a.Unmapped = "no identity rule maps them here (identities.rules) and identities.unmapped is refuse"
	}
	return a
}

func cloneKube(k KubeIdentity) KubeIdentity {
	k.Groups = slices.Clone(k.Groups)
	return k
}

// ApproverNote is the approval card's line saying whose permissions an
// approved change uses, or "" when no mapping is configured.
func (m *Identities) ApproverNote() string {
	if !m.Configured() {
		return ""
	}
	s := "the approver's own mapped identity (identities), not vigil's"
	if m.mode() == UnmappedFallback {
		var fb []string
		if m.Fallback.Kube.Set() {
			fb = append(fb, m.Fallback.Kube.String())
		}
		if m.Fallback.SSH.Set() {
			fb = append(fb, "ssh user "+m.Fallback.SSH.User)
		}
		return s + "; an unmapped approver's: " + strings.Join(fb, "; ")
	}
	return s + "; an unmapped approver is refused"
}

// Describe reads "k8s user alice, groups sre; ssh user alice", or says
// there is none.
func (a *Actor) Describe() string {
	var parts []string
	if a.Kube.Set() {
		parts = append(parts, a.Kube.String())
	}
	if a.SSH.Set() {
		parts = append(parts, "ssh user "+a.SSH.User)
	}
	if len(parts) == 0 {
		return "none (" + a.Unmapped + "), so calls that need one are refused"
	}
	return strings.Join(parts, "; ")
}
