package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack/slacktest"

	"github.com/vigilops/vigil/adapters/slack"
)

// workspace is a Slack test server (slack-go's slacktest) answering the
// three lists a Directory reads, with conversations.list in two pages.
type workspace struct {
	*slacktest.Server
	mu    sync.Mutex
	calls map[string]int
}

func newWorkspace(t *testing.T, groupsError string) *workspace {
	w := &workspace{calls: map[string]int{}}
	reply := func(method string, body func(r *http.Request) map[string]any) slacktest.Binder {
		return func(c slacktest.Customize) {
			c.Handle("/"+method, func(rw http.ResponseWriter, r *http.Request) {
				w.mu.Lock()
				w.calls[method]++
				w.mu.Unlock()
				if err := r.ParseForm(); err != nil || r.FormValue("token") != "xoxb-test" {
					_ = json.NewEncoder(rw).Encode(map[string]any{"ok": false, "error": "invalid_auth"})
					return
				}
				_ = json.NewEncoder(rw).Encode(body(r))
			})
		}
	}
	w.Server = slacktest.NewTestServer(
		reply("conversations.list", func(r *http.Request) map[string]any {
			if r.FormValue("cursor") == "" {
				return map[string]any{"ok": true, "channels": []map[string]any{{"id": "C0GENERAL", "name": "general"}},
					"response_metadata": map[string]any{"next_cursor": "page2"}}
			}
			return map[string]any{"ok": true, "channels": []map[string]any{{"id": "G0OPS", "name": "ops", "is_private": true}},
				"response_metadata": map[string]any{"next_cursor": ""}}
		}),
		reply("users.list", func(*http.Request) map[string]any {
			return map[string]any{"ok": true, "members": []map[string]any{
				{"id": "U0ALICE", "name": "alice", "profile": map[string]any{"display_name": "Alice L"}},
				{"id": "U0BOB", "name": "bob", "profile": map[string]any{"display_name": "sam"}},
				{"id": "U0SAM", "name": "sam.k", "profile": map[string]any{"display_name": "sam"}},
				{"id": "U0GONE", "name": "gone", "deleted": true},
			}}
		}),
		reply("usergroups.list", func(*http.Request) map[string]any {
			if groupsError != "" {
				return map[string]any{"ok": false, "error": groupsError}
			}
			return map[string]any{"ok": true, "usergroups": []map[string]any{{"id": "S0ONCALL", "handle": "oncall"}}}
		}),
	)
	w.Start()
	t.Cleanup(w.Stop)
	return w
}

func TestDirectoryResolvesNames(t *testing.T) {
	w := newWorkspace(t, "")
	d := slack.NewDirectory("xoxb-test", w.GetAPIURL())
	ctx := context.Background()
	for name, want := range map[string]string{"#general": "C0GENERAL", "#ops": "G0OPS"} {
		if id, err := d.ChannelID(ctx, name); err != nil || id != want {
			t.Errorf("ChannelID(%s) = %q, %v; want %s", name, id, err, want)
		}
	}
	for name, want := range map[string]string{"@alice": "U0ALICE", "@Alice L": "U0ALICE", "@bob": "U0BOB", "@oncall": "usergroup:S0ONCALL"} {
		if id, err := d.MemberID(ctx, name); err != nil || id != want {
			t.Errorf("MemberID(%s) = %q, %v; want %s", name, id, err, want)
		}
	}
	if w.calls["conversations.list"] != 2 || w.calls["users.list"] != 1 || w.calls["usergroups.list"] != 1 {
		t.Errorf("calls %v; want each list read once (conversations.list in two pages)", w.calls)
	}

	for _, tc := range []struct {
		name, want string
		channel    bool
	}{
		{"#nowhere", "no Slack channel the bot can see is named #nowhere", true},
		{"@ghost", "no Slack member or user group is called @ghost", false},
		{"@gone", "no Slack member or user group is called @gone", false},
		{"@sam", "more than one Slack member is called @sam", false},
	} {
		var err error
		if tc.channel {
			_, err = d.ChannelID(ctx, tc.name)
		} else {
			_, err = d.MemberID(ctx, tc.name)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want %q", tc.name, err, tc.want)
		}
	}
}

// A workspace without user groups still resolves people, and says why a
// group name does not resolve.
func TestDirectoryWithoutUserGroups(t *testing.T) {
	w := newWorkspace(t, "paid_only")
	d := slack.NewDirectory("xoxb-test", w.GetAPIURL())
	if id, err := d.MemberID(context.Background(), "@alice"); err != nil || id != "U0ALICE" {
		t.Fatalf("MemberID(@alice) = %q, %v", id, err)
	}
	_, err := d.MemberID(context.Background(), "@oncall")
	if err == nil || !strings.Contains(err.Error(), "user groups are not available to the bot (paid_only)") {
		t.Fatalf("error %v", err)
	}
	// A token Slack refuses is an error, not "no such name".
	bad := slack.NewDirectory("xoxb-wrong", w.GetAPIURL())
	if _, err := bad.ChannelID(context.Background(), "#general"); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("error %v", err)
	}
}
