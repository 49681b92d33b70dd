package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ControlLevel is how much a channel lets vigil change (SPEC P5).
type ControlLevel string

const (
	// LevelReadOnly: no write tool runs.
	LevelReadOnly ControlLevel = "read_only"
	// LevelControlled: every write waits for an approval.
	LevelControlled ControlLevel = "controlled"
	// LevelAutonomous: writes run without approval and are still verified.
	LevelAutonomous ControlLevel = "autonomous"
)

// Valid reports whether l is one of the three levels.
func (l ControlLevel) Valid() bool {
	return l == LevelReadOnly || l == LevelControlled || l == LevelAutonomous
}

// AllowsWrites reports whether a write may run at this level at all (with or
// without approval). Anything unrecognised counts as read-only: unknown
// levels fail closed.
func (l ControlLevel) AllowsWrites() bool {
	return l == LevelControlled || l == LevelAutonomous
}

// Channel policy keys that are not "<platform>:<id>".
const (
	// ConsoleChannel is the policy key of the terminal adapter.
	ConsoleChannel = "console"
	// DefaultChannel is the entry used for channels without their own.
	DefaultChannel = "default"
	// UserGroupPrefix marks a role entry naming a platform user group
	// ("usergroup:S0123" for a Slack user group) rather than a user.
	UserGroupPrefix = "usergroup:"
)

// ChannelPolicy is one channel's configuration: its control level and who
// holds which role there (SPEC P7). Role lists hold user IDs (as the
// platform writes them: "U0123", "@alice:example.org") or "usergroup:<id>".
//
// Roles are cumulative: an approver is also an operator, and an operator is
// also a viewer. A person trusted to approve a change can always ask about
// it, so lists never have to repeat each other.
type ChannelPolicy struct {
	// Match is the channel's policy key: "console", "slack:<channel id>",
	// "matrix:<room id>", or "default".
	Match string       `json:"match" yaml:"match" mapstructure:"match"`
	Level ControlLevel `json:"level" yaml:"level" mapstructure:"level"`
	// AllowSelfApproval lets a requester approve their own write. Off by
	// default: four eyes see every change.
	AllowSelfApproval bool `json:"allow_self_approval" yaml:"allow_self_approval" mapstructure:"allow_self_approval"`
	// Viewers may ask vigil questions. Empty means everyone in the channel.
	Viewers []string `json:"viewers" yaml:"viewers" mapstructure:"viewers"`
	// Operators may ask for changes. Empty means the approvers only.
	Operators []string `json:"operators" yaml:"operators" mapstructure:"operators"`
	// Approvers may approve or deny pending changes.
	Approvers []string `json:"approvers" yaml:"approvers" mapstructure:"approvers"`
	// Scope is what the channel may touch (scope.go); nil: everything.
	Scope *Scope `json:"scope,omitempty" yaml:"scope,omitempty" mapstructure:"-"`
}

// Subject is what the bot knows about a person when deciding their roles.
// Adapters supply the facts; policy decides what they mean.
type Subject struct {
	// User is the platform user ID.
	User string
	// Groups are the user's platform groups, written as config names them
	// ("usergroup:S1").
	Groups []string
	// PlatformApprover is set when the platform's own permissions make the
	// user an approver (a Matrix power level at or above the threshold).
	PlatformApprover bool
	// Local marks the person at the terminal of the console adapter, who
	// owns the machine vigil runs on.
	Local bool
	// PlatformApprovers says whom the platform's own permissions make
	// approvers in this channel ("room members with power level 50 or
	// more"), for messages that name who holds a role; "" when the platform
	// has no such source.
	PlatformApprovers string
	// PowerLevel is the user's Matrix power level in the room, when the
	// platform has one (identity rules match power_level:<n> on it).
	PowerLevel *int
}

// Role is one of the channel roles (SPEC P7).
type Role string

const (
	// RoleViewer may ask vigil questions.
	RoleViewer Role = "viewer"
	// RoleOperator may ask for changes.
	RoleOperator Role = "operator"
	// RoleApprover may approve or deny changes.
	RoleApprover Role = "approver"
)

// RoleSet is the roles a subject holds in one channel.
type RoleSet struct {
	Viewer, Operator, Approver bool
}

// RolesOf decides the roles s holds in this channel.
//
// The console's local user holds every role: there is nobody else to ask.
// A platform approver (power level) is an approver like a listed one.
func (cp ChannelPolicy) RolesOf(s Subject) RoleSet {
	if cp.Match == ConsoleChannel && s.Local {
		return RoleSet{Viewer: true, Operator: true, Approver: true}
	}
	var r RoleSet
	r.Approver = s.PlatformApprover || roleListed(cp.Approvers, s)
	r.Operator = r.Approver || roleListed(cp.Operators, s)
	r.Viewer = r.Operator || len(cp.Viewers) == 0 || roleListed(cp.Viewers, s)
	return r
}

// maxHolders bounds the names Holders lists.
const maxHolders = 8

// Holders says who holds role r in this channel, for a person told they
// lack it: the config entries that grant it (roles are cumulative, so the
// approvers are listed with the operators) and the platform's own approvers
// (platformApprovers, as Subject.PlatformApprovers words them).
func (cp ChannelPolicy) Holders(r Role, platformApprovers string) string {
	if cp.Match == ConsoleChannel {
		return "the person at vigil's terminal"
	}
	var lists [][]string
	switch r {
	case RoleViewer:
		if len(cp.Viewers) == 0 {
			return "everyone in the channel"
		}
		lists = [][]string{cp.Viewers, cp.Operators, cp.Approvers}
	case RoleOperator:
		lists = [][]string{cp.Operators, cp.Approvers}
	default:
		lists = [][]string{cp.Approvers}
	}
	var names []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, e := range l {
			if e == "" || seen[e] {
				continue
			}
			seen[e] = true
			if g, ok := strings.CutPrefix(e, UserGroupPrefix); ok {
				names = append(names, "members of user group "+g)
			} else {
				names = append(names, e)
			}
		}
	}
	if len(names) > maxHolders {
		more := len(names) - maxHolders + 1
		names = append(names[:maxHolders-1], fmt.Sprintf("%d more in the channel's configuration", more))
	}
	if platformApprovers != "" {
		names = append(names, platformApprovers)
	}
	switch len(names) {
	case 0:
		return "nobody (this channel's configuration lists no " + string(r) + "s)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Requester is who a run acts for, as the role gate sees them. The bot has
// policy decide it (ChannelPolicy.Requester) when the run starts, the run
// carries it, and it is decided again when the run resumes after an
// approval, so a role taken away meanwhile counts before the change runs.
//
// The zero value is a person without the operator role: a run whose
// requester is unknown may read, never change.
type Requester struct {
	// User is the platform user ID of the person who asked.
	User string `json:"user,omitempty"`
	// Operator reports that User holds the operator role in the run's
	// channel.
	Operator bool `json:"operator,omitempty"`
	// System marks a run no person started: vigil itself, on an alert
	// (SPEC N1). Nobody's role can be checked, so its writes always wait
	// for an approver, whatever the channel's level.
	System bool `json:"system,omitempty"`
	// Operators says who holds the operator role in the channel
	// (ChannelPolicy.Holders), for the refusal a non-operator gets.
	Operators string `json:"operators,omitempty"`
	// Scope is the scope of the run's channel (ChannelPolicy.Scope),
	// decided again from the channel when a run resumes after an
	// approval; nil: everything.
	Scope *Scope `json:"scope,omitempty"`
}

// Requester decides how the role gate sees s asking in this channel.
func (cp ChannelPolicy) Requester(s Subject) Requester {
	return Requester{
		User:      s.User,
		Operator:  cp.RolesOf(s).Operator,
		Operators: cp.Holders(RoleOperator, s.PlatformApprovers),
		Scope:     cp.Scope,
	}
}

// SystemRequester is the requester of a run vigil starts by itself; name
// says what started it ("alertmanager"). It is the hook for alert intake
// (SPEC N1): such a run may investigate, and every change it proposes
// becomes an approval, even in an autonomous channel.
func SystemRequester(name string) Requester {
	return Requester{User: name, System: true}
}

// SystemRequesterIn is SystemRequester for a run in a channel: it acts
// within the channel's scope (an alert routed to a channel stays in it).
func (cp ChannelPolicy) SystemRequesterIn(name string) Requester {
	r := SystemRequester(name)
	r.Scope = cp.Scope
	return r
}

// DetailRoleRequired is the Block.Details key naming the role a refusal
// asks for: the role gate's refusals carry it, so the bot can tell the
// person as well as the model.
const DetailRoleRequired = "role_required"

// changeBlock is the role gate (SPEC P7): the refusal of a change that r
// may not ask for, or nil. Gate.Authorize applies it to every write before
// anything else about the write is decided, in every control level, so a
// refused change never reaches an approval card.
func (r Requester) changeBlock() *Block {
	if r.Operator || r.System {
		return nil
	}
	who := r.User
	if who == "" {
		who = "the person who asked"
	}
	holders := r.Operators
	if holders == "" {
		holders = "see the channel's configuration"
	}
	return &Block{
		Code: CodeActionNotAllowed,
		Message: fmt.Sprintf("this change needs the %s role in this channel, and %s does not hold it; operators here: %s",
			RoleOperator, who, holders),
		RecoveryHint: "do not retry or rephrase the change; report what you found and the change you would suggest, " +
			"and tell the user that an operator must ask for it",
		Details: map[string]any{DetailRoleRequired: string(RoleOperator), "requester": r.User, "role_holders": holders},
	}
}

// MayStop reports whether user may stop a run that requester started (and
// withdraw its pending approval): the requester, an operator or an
// approver. Anyone else may not cancel other people's work.
func MayStop(user, requester string, roles RoleSet) bool {
	return (user != "" && user == requester) || roles.Operator || roles.Approver
}

// SelfApproval reports whether a requester may approve their own request
// here. The console has a single local user, so four eyes cannot apply there.
func (cp ChannelPolicy) SelfApproval() bool {
	return cp.AllowSelfApproval || cp.Match == ConsoleChannel
}

// roleListed reports whether s is named by an entry of list, directly or
// through one of its groups. A usergroup entry only ever matches a group,
// so no user ID can pose as one; empty entries match nothing.
func roleListed(list []string, s Subject) bool {
	for _, e := range list {
		if e == "" {
			continue
		}
		if strings.HasPrefix(e, UserGroupPrefix) {
			if slices.Contains(s.Groups, e) {
				return true
			}
		} else if e == s.User {
			return true
		}
	}
	return false
}

// Validate checks the entry the way start-up needs it checked: every
// problem is reported, each naming its config key and the fix.
func (cp ChannelPolicy) Validate() error {
	key := "channels[" + cp.Match + "]"
	var errs []error
	if err := validChannelMatch(cp.Match); err != nil {
		errs = append(errs, fmt.Errorf("%s.match: %w", key, err))
	}
	if !cp.Level.Valid() {
		errs = append(errs, fmt.Errorf("%s.level: %q is not a control level; use %s, %s or %s",
			key, cp.Level, LevelReadOnly, LevelControlled, LevelAutonomous))
	}
	for _, l := range []struct {
		name string
		list []string
	}{{"viewers", cp.Viewers}, {"operators", cp.Operators}, {"approvers", cp.Approvers}} {
		for i, e := range l.list {
			if err := validRoleEntry(e); err != nil {
				errs = append(errs, fmt.Errorf("%s.%s[%d]: %w", key, l.name, i, err))
			}
		}
	}
	// The console's local user approves, and in a Matrix room the power
	// level names approvers; every other controlled channel needs a list.
	if cp.Level == LevelControlled && cp.Match != ConsoleChannel && !strings.HasPrefix(cp.Match, "matrix:") && len(cp.Approvers) == 0 {
		errs = append(errs, fmt.Errorf(
			"%s.approvers: the channel is controlled but nobody can approve its changes; "+
				"add user IDs or %q entries to %s.approvers, or set %s.level to %s",
			key, UserGroupPrefix+"<id>", key, key, LevelReadOnly))
	}
	return errors.Join(errs...)
}

func validChannelMatch(m string) error {
	if m == ConsoleChannel || m == DefaultChannel {
		return nil
	}
	platform, id, ok := strings.Cut(m, ":")
	if !ok || platform == "" || id == "" {
		return fmt.Errorf("%q is not a channel key; use %q, %q, or <platform>:<id> such as slack:C0123 or matrix:!room:example.org",
			m, ConsoleChannel, DefaultChannel)
	}
	return nil
}

func validRoleEntry(e string) error {
	switch {
	case strings.TrimSpace(e) == "":
		return errors.New("empty entry; remove it or name a user ID or usergroup:<id>")
	case strings.TrimSpace(e) != e:
		return fmt.Errorf("%q has surrounding spaces; remove them", e)
	case e == UserGroupPrefix:
		return errors.New(`"usergroup:" names no group; write usergroup:<id>`)
	}
	return nil
}

// LookupChannel returns the policy for the channel key: its own entry, else
// the "default" entry (with Match set to key), else a read-only policy and
// false. Unconfigured channels never get more than they were given.
func LookupChannel(policies []ChannelPolicy, key string) (ChannelPolicy, bool) {
	def := -1
	for i, cp := range policies {
		if cp.Match == key {
			return cp, true
		}
		if cp.Match == DefaultChannel {
			def = i
		}
	}
	if def >= 0 {
		cp := policies[def]
		cp.Match = key
		return cp, true
	}
	return ChannelPolicy{Match: key, Level: LevelReadOnly}, false
}
