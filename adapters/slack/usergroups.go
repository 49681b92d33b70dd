package slack

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/vigilops/vigil/bot"
)

// groupRefusals are the answers of workspaces whose plan, token or scopes
// don't allow reading user groups. vigil then relies on the config's user
// lists alone.
var groupRefusals = map[string]bool{
	"paid_only": true, "not_allowed_token_type": true, "missing_scope": true,
	"no_permission": true, "feature_not_enabled": true, "team_not_allowed": true,
	"not_authorized": true, "access_denied": true, "plan_upgrade_required": true,
}

// groupCache holds every user's groups, refreshed at most once per TTL.
type groupCache struct {
	ttl time.Duration
	now func() time.Time

	mu          sync.Mutex // held across a refresh, so callers don't stampede
	byUser      map[string][]string
	fetched     time.Time
	unsupported bool
	warned      bool
}

func newGroupCache(ttl time.Duration) *groupCache {
	return &groupCache{ttl: ttl, now: time.Now}
}

// UserFacts implements bot.FactSource: the user's Slack user groups as
// "usergroup:<id>", from usergroups.list (with members) cached for
// Config.UsergroupTTL. Where the workspace refuses user groups (free plans,
// missing scope) it returns no groups and logs one warning.
func (a *Adapter) UserFacts(ctx context.Context, t bot.ThreadRef, user string) (bot.UserFacts, error) {
	groups, err := a.userGroups(ctx, user)
	if err != nil {
		return bot.UserFacts{}, err
	}
	facts := bot.UserFacts{}
	for _, id := range groups {
		facts.Groups = append(facts.Groups, "usergroup:"+id)
	}
	return facts, nil
}

func (a *Adapter) userGroups(ctx context.Context, user string) ([]string, error) {
	c := a.groups
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fetched.IsZero() || c.now().Sub(c.fetched) >= c.ttl {
		byUser, err := a.fetchGroups(ctx)
		var apiErr slack.SlackErrorResponse
		switch {
		case errors.As(err, &apiErr) && groupRefusals[apiErr.Err]:
			if !c.warned {
				c.warned = true
				a.log.Warn("slack user groups are not available in this workspace; approver and operator roles come from the config's user lists only",
					"error", apiErr.Err)
			}
			c.unsupported, c.byUser, c.fetched = true, nil, c.now()
		case err != nil:
			return nil, fmt.Errorf("slack: user groups: %w", err)
		default:
			c.unsupported, c.byUser, c.fetched = false, byUser, c.now()
		}
	}
	return c.byUser[user], nil
}

// fetchGroups reads every enabled group with its members: one
// usergroups.list call with include_users, and usergroups.users.list only
// for groups whose members were not included.
func (a *Adapter) fetchGroups(ctx context.Context) (map[string][]string, error) {
	var groups []slack.UserGroup
	err := a.call(ctx, "usergroups.list", func(ctx context.Context) error {
		var err error
		groups, err = a.api.GetUserGroupsContext(ctx, slack.GetUserGroupsOptionIncludeUsers(true))
		return err
	})
	if err != nil {
		return nil, err
	}
	byUser := map[string][]string{}
	for _, g := range groups {
		if g.DateDelete != 0 {
			continue
		}
		members := g.Users
		if members == nil && g.UserCount > 0 {
			err := a.call(ctx, "usergroups.users.list", func(ctx context.Context) error {
				var err error
				members, err = a.api.GetUserGroupMembersContext(ctx, g.ID)
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("members of %s: %w", g.ID, err)
			}
		}
		for _, u := range members {
			byUser[u] = append(byUser[u], g.ID)
		}
	}
	for u := range byUser {
		sort.Strings(byUser[u])
	}
	return byUser, nil
}
