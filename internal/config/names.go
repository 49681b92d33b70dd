package config

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/vigilops/vigil/policy"
)

// A channel's policy applies only when its match is the channel's ID as
// the platform sends it, and a role only to the user IDs listed: a name
// there ("slack:general", "alice") would never match anyone, so the
// channel would silently fall back to the default policy. Entries are
// therefore IDs, or names in a form vigil resolves to IDs at start
// (ResolveNames): "#general" and "@alice" on Slack, "#room:server" on
// Matrix.
var (
	slackChannelID   = regexp.MustCompile(`^[CGD][A-Z0-9]+$`)
	slackChannelName = regexp.MustCompile(`^#[a-z0-9][a-z0-9._-]*$`)
	slackUserID      = regexp.MustCompile(`^[UWB][A-Z0-9]+$`)
	slackGroupID     = regexp.MustCompile(`^usergroup:S[A-Z0-9]+$`)
	slackMemberName  = regexp.MustCompile(`^@[^\s:@]+$`)
	matrixRoomID     = regexp.MustCompile(`^![^\s:]+:\S+$`)
	matrixRoomAlias  = regexp.MustCompile(`^#[^\s:]+:\S+$`)
	matrixUserID     = regexp.MustCompile(`^@[^\s:]+:\S+$`)
)

// checkMatchForm checks the part of a channel match after "slack:" or
// "matrix:"; "" when it is an ID or a name vigil resolves.
func checkMatchForm(platform, id string) string {
	switch platform {
	case "slack":
		if slackChannelID.MatchString(id) || slackChannelName.MatchString(id) {
			return ""
		}
		return fmt.Sprintf("%q is neither a Slack channel ID nor a channel name; write the ID (slack:C0123456789, "+
			"from the channel's details in Slack) or the name with its # (slack:#%s), which vigil looks up at start",
			id, strings.ToLower(strings.TrimPrefix(id, "#")))
	case "matrix":
		if matrixRoomID.MatchString(id) || matrixRoomAlias.MatchString(id) {
			return ""
		}
		return fmt.Sprintf("%q is neither a Matrix room ID (!abc:example.org) nor a room alias (#ops:example.org)", id)
	}
	return ""
}

// checkMemberForm checks one viewers/operators/approvers entry of a
// channel on platform ("default" for the default channel, which covers
// both); "" when it is an ID or a name vigil resolves.
func checkMemberForm(platform, e string) string {
	slackOK := slackUserID.MatchString(e) || slackGroupID.MatchString(e) || slackMemberName.MatchString(e)
	matrixOK := matrixUserID.MatchString(e)
	switch platform {
	case "slack":
		if slackOK {
			return ""
		}
		return fmt.Sprintf("%q is not a Slack user ID (U0123456789), a user group (usergroup:S0123456789) or a name "+
			"with its @ (@%s), which vigil looks up at start", e, strings.TrimPrefix(strings.TrimPrefix(e, policy.UserGroupPrefix), "@"))
	case "matrix":
		if matrixOK {
			return ""
		}
		return fmt.Sprintf("%q is not a Matrix user ID like @alice:example.org", e)
	case policy.DefaultChannel:
		if slackOK || matrixOK {
			return ""
		}
		return fmt.Sprintf("%q is not a Slack user ID (U0123456789), a user group (usergroup:S0123456789), "+
			"a Slack name with its @ (@alice) or a Matrix user ID (@alice:example.org)", e)
	}
	return ""
}

// Directory looks names up on one chat platform, so that the
// configuration may name channels and people instead of giving their IDs.
type Directory interface {
	// ChannelID returns the ID of the channel or room called name
	// ("#general" on Slack, "#ops:example.org" on Matrix).
	ChannelID(ctx context.Context, name string) (string, error)
	// MemberID returns the role-list entry for the person or group called
	// name ("@alice"): a user ID, or usergroup:<id> for a user group.
	MemberID(ctx context.Context, name string) (string, error)
}

// Resolved is one name ResolveNames replaced.
type Resolved struct {
	// Key is where the name was: "channels[0].match", "matrix.rooms[1]".
	Key      string
	Platform string
	Name, ID string
}

// Resolution says what ResolveNames did.
type Resolution struct {
	Resolved []Resolved
	// Unresolved are the names of platforms that had no Directory, by
	// platform, as written.
	Unresolved map[string][]string
}

// nameRef is one name in the configuration and how to set its ID.
type nameRef struct {
	key, platform, name string
	channel             bool
	set                 func(id string)
}

// names lists the names in c that need a Directory: channel matches and
// role entries of Slack and default channels, and matrix.rooms.
func (c *Config) names() []nameRef {
	var out []nameRef
	for i := range c.Channels {
		ch := &c.Channels[i]
		key := fmt.Sprintf("channels[%d]", i)
		platform, id, _ := strings.Cut(ch.Match, ":")
		if (platform == "slack" && slackChannelName.MatchString(id)) || (platform == "matrix" && matrixRoomAlias.MatchString(id)) {
			out = append(out, nameRef{key: key + ".match", platform: platform, name: id, channel: true,
				set: func(v string) { ch.Match = platform + ":" + v }})
		}
		if platform != "slack" && ch.Match != policy.DefaultChannel {
			continue
		}
		for _, l := range []struct {
			name string
			list []string
		}{{"viewers", ch.Viewers}, {"operators", ch.Operators}, {"approvers", ch.Approvers}} {
			for j, e := range l.list {
				if slackMemberName.MatchString(e) {
					out = append(out, nameRef{key: fmt.Sprintf("%s.%s[%d]", key, l.name, j), platform: "slack", name: e,
						set: func(v string) { l.list[j] = v }})
				}
			}
		}
	}
	for i, r := range c.Matrix.Rooms {
		if matrixRoomAlias.MatchString(r) {
			out = append(out, nameRef{key: fmt.Sprintf("matrix.rooms[%d]", i), platform: "matrix", name: r, channel: true,
				set: func(v string) { c.Matrix.Rooms[i] = v }})
		}
	}
	return out
}

// HasNames reports whether c names any channel, room or person that
// ResolveNames would look up.
func (c *Config) HasNames() bool { return len(c.names()) > 0 }

// ResolveNames replaces the names in channel policies and matrix.rooms
// with IDs, looked up with the platforms' directories (dirs by
// platform: "slack", "matrix"). A name whose platform has no directory
// stays as written and is listed in the Resolution. Every name that does
// not resolve is an *Error; they are reported together, and c is changed
// only when all resolve.
func (c *Config) ResolveNames(ctx context.Context, dirs map[string]Directory) (Resolution, error) {
	res := Resolution{Unresolved: map[string][]string{}}
	type answer struct {
		id  string
		err error
	}
	cache := map[string]answer{}
	var errs []error
	var sets []func()
	for _, n := range c.names() {
		d, ok := dirs[n.platform]
		if !ok || d == nil {
			if !slices.Contains(res.Unresolved[n.platform], n.name) {
				res.Unresolved[n.platform] = append(res.Unresolved[n.platform], n.name)
			}
			continue
		}
		ck := fmt.Sprintf("%s %t %s", n.platform, n.channel, n.name)
		a, seen := cache[ck]
		if !seen {
			if n.channel {
				a.id, a.err = d.ChannelID(ctx, n.name)
			} else {
				a.id, a.err = d.MemberID(ctx, n.name)
			}
			cache[ck] = a
		}
		if a.err != nil {
			if ctx.Err() != nil || errors.Is(a.err, context.DeadlineExceeded) {
				return res, fmt.Errorf("config: looking up %s on %s: %w", n.name, n.platform, a.err)
			}
			errs = append(errs, c.problemValue(n.key, n.name, a.err.Error()))
			continue
		}
		set, id := n.set, a.id
		sets = append(sets, func() { set(id) })
		res.Resolved = append(res.Resolved, Resolved{Key: n.key, Platform: n.platform, Name: n.name, ID: a.id})
	}
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	for _, s := range sets {
		s()
	}
	return res, nil
}
