package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// Directory looks up channels, people and user groups by name, so that
// the configuration may say "#ops" and "@alice" where Slack's events
// carry IDs. Each list (conversations.list, users.list, usergroups.list)
// is fetched once, on the first name that needs it: names are resolved
// at start, not per message.
type Directory struct {
	api *slack.Client

	mu       sync.Mutex
	channels map[string]string // name without # -> ID
	users    map[string]string // handle or display name -> ID; "" when two people share it
	groups   map[string]string // handle -> ID
	groupErr error
}

// NewDirectory builds a Directory that calls the Web API at apiURL (""
// for Slack's) with the bot token. It does no I/O.
func NewDirectory(botToken, apiURL string) *Directory {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if !strings.HasSuffix(apiURL, "/") {
		apiURL += "/"
	}
	return &Directory{api: slack.New(botToken, slack.OptionAPIURL(apiURL),
		slack.OptionHTTPClient(&http.Client{Timeout: 30 * time.Second}))}
}

// ChannelID returns the ID of the channel called name ("#ops"): public
// channels, and private ones the bot was invited to.
func (d *Directory) ChannelID(ctx context.Context, name string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.channels == nil {
		m := map[string]string{}
		params := &slack.GetConversationsParameters{ExcludeArchived: true, Limit: 1000,
			Types: []string{"public_channel", "private_channel"}}
		for {
			page, next, err := d.api.GetConversationsContext(ctx, params)
			if err != nil {
				return "", fmt.Errorf("slack conversations.list: %w", err)
			}
			for _, c := range page {
				m[c.Name] = c.ID
			}
			if next == "" {
				break
			}
			params.Cursor = next
		}
		d.channels = m
	}
	if id, ok := d.channels[strings.TrimPrefix(name, "#")]; ok {
		return id, nil
	}
	return "", fmt.Errorf("no Slack channel the bot can see is named %s (conversations.list: public channels, and private ones "+
		"the bot was invited to); check the spelling, invite the bot, or write the channel's ID (C…)", name)
}

// MemberID returns the role entry for the person or user group called
// name ("@alice", "@oncall"): the user ID of the member whose handle or
// display name it is, else "usergroup:<id>" of the group with that
// handle.
func (d *Directory) MemberID(ctx context.Context, name string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	handle := strings.TrimPrefix(name, "@")
	if d.users == nil {
		users, err := d.api.GetUsersContext(ctx)
		if err != nil {
			return "", fmt.Errorf("slack users.list: %w", err)
		}
		m := map[string]string{}
		add := func(n, id string) {
			if n == "" {
				return
			}
			if prev, ok := m[n]; ok && prev != id {
				id = "" // two people answer to it
			}
			m[n] = id
		}
		for _, u := range users {
			if u.Deleted {
				continue
			}
			add(u.Name, u.ID)
			add(u.Profile.DisplayName, u.ID)
		}
		d.users = m
	}
	if id, ok := d.users[handle]; ok {
		if id == "" {
			return "", fmt.Errorf("more than one Slack member is called %s; write the user ID (U…) of the one you mean", name)
		}
		return id, nil
	}
	if d.groups == nil && d.groupErr == nil {
		groups, err := d.api.GetUserGroupsContext(ctx)
		var apiErr slack.SlackErrorResponse
		switch {
		case errors.As(err, &apiErr) && groupRefusals[apiErr.Err]:
			d.groupErr = fmt.Errorf("user groups are not available to the bot (%s)", apiErr.Err)
		case err != nil:
			return "", fmt.Errorf("slack usergroups.list: %w", err)
		default:
			d.groups = map[string]string{}
			for _, g := range groups {
				d.groups[g.Handle] = g.ID
			}
		}
	}
	if id, ok := d.groups[handle]; ok {
		return "usergroup:" + id, nil
	}
	why := ""
	if d.groupErr != nil {
		why = "; " + d.groupErr.Error()
	}
	return "", fmt.Errorf("no Slack member or user group is called %s (users.list, usergroups.list%s); "+
		"check the spelling, or write the user ID (U…) or usergroup:S…", name, why)
}
