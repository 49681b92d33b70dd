package slack

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestManifest keeps deploy/slack/manifest.yaml to exactly the scopes and
// events the adapter uses.
func TestManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "slack", "manifest.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		DisplayInformation struct {
			Name string `yaml:"name"`
		} `yaml:"display_information"`
		Features struct {
			AppHome struct {
				MessagesTab         bool `yaml:"messages_tab_enabled"`
				MessagesTabReadOnly bool `yaml:"messages_tab_read_only_enabled"`
			} `yaml:"app_home"`
			BotUser struct {
				DisplayName string `yaml:"display_name"`
			} `yaml:"bot_user"`
		} `yaml:"features"`
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				BotEvents []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			Interactivity struct {
				Enabled bool `yaml:"is_enabled"`
			} `yaml:"interactivity"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	wantScopes := []string{"app_mentions:read", "channels:history", "chat:write", "files:write", "groups:history", "im:history", "usergroups:read", "users:read"}
	got := slices.Sorted(slices.Values(m.OAuth.Scopes.Bot))
	if !slices.Equal(got, wantScopes) {
		t.Errorf("bot scopes = %v, want %v", got, wantScopes)
	}
	wantEvents := []string{"app_mention", "message.channels", "message.groups", "message.im"}
	if got := slices.Sorted(slices.Values(m.Settings.Events.BotEvents)); !slices.Equal(got, wantEvents) {
		t.Errorf("bot events = %v, want %v", got, wantEvents)
	}
	if !m.Settings.Interactivity.Enabled || !m.Settings.SocketMode {
		t.Error("interactivity and socket mode must be on")
	}
	if m.DisplayInformation.Name == "" || m.Features.BotUser.DisplayName == "" {
		t.Error("app and bot user need names")
	}
	if !m.Features.AppHome.MessagesTab || m.Features.AppHome.MessagesTabReadOnly {
		t.Error("the messages tab must be on and writable, or nobody can DM vigil")
	}
}
