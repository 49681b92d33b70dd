package slack

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Modes the adapter connects to Slack in.
const (
	// ModeSocket receives events over Socket Mode (an outbound websocket;
	// needs an app-level token, no public URL). The default.
	ModeSocket = "socket"
	// ModeHTTP receives the Events API and interactivity as signed HTTP
	// requests on Config.Listen.
	ModeHTTP = "http"

	// DefaultAPIURL is Slack's Web API base.
	DefaultAPIURL = "https://slack.com/api/"
	// DefaultUsergroupTTL is how long user group memberships are cached.
	DefaultUsergroupTTL = 5 * time.Minute
)

// Config configures the Slack adapter. The composition root maps the
// slack.* configuration keys onto it.
type Config struct {
	// Mode is "socket" (default) or "http".
	Mode string
	// BotToken (xoxb-…) calls the Web API. AppToken (xapp-…, scope
	// connections:write) opens Socket Mode. SigningSecret verifies HTTP
	// requests.
	BotToken, AppToken, SigningSecret string
	// Listen is the HTTP mode address, e.g. ":3000".
	Listen string
	// APIURL is the Web API base ending in /api/ (default Slack's); tests
	// point it at a fake.
	APIURL string
	// UsergroupTTL is how long user group memberships are cached (default
	// 5m).
	UsergroupTTL time.Duration
	// MaxAnswerChars caps the characters of one answer posted as
	// messages (default DefaultMaxAnswerChars); past it the last message
	// says what was cut and the whole answer follows as a file.
	MaxAnswerChars int
	Logger         *slog.Logger
	HTTPClient     *http.Client
}

// withDefaults fills in defaults and validates; errors name the key.
func (c Config) withDefaults() (Config, error) {
	c.Mode = strings.ToLower(strings.TrimSpace(c.Mode))
	if c.Mode == "" {
		c.Mode = ModeSocket
	}
	switch c.Mode {
	case ModeSocket, ModeHTTP:
	default:
		return c, fmt.Errorf("slack.mode must be %q or %q, not %q", ModeSocket, ModeHTTP, c.Mode)
	}
	if c.BotToken == "" {
		return c, fmt.Errorf("slack.bot_token is required (a bot token, xoxb-…)")
	}
	if strings.HasPrefix(c.BotToken, "xapp-") {
		return c, fmt.Errorf("slack.bot_token holds an app-level token (xapp-…); use the bot token (xoxb-…) and put the app token in slack.app_token")
	}
	switch c.Mode {
	case ModeSocket:
		if c.AppToken == "" {
			return c, fmt.Errorf("slack.app_token is required in socket mode (an app-level token, xapp-…, with connections:write)")
		}
		if !strings.HasPrefix(c.AppToken, "xapp-") {
			return c, fmt.Errorf("slack.app_token must be an app-level token starting with xapp-")
		}
	case ModeHTTP:
		if c.SigningSecret == "" {
			return c, fmt.Errorf("slack.signing_secret is required in http mode")
		}
		if c.Listen == "" {
			return c, fmt.Errorf("slack.listen is required in http mode (e.g. \":3000\")")
		}
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return c, fmt.Errorf("slack.api_url must be an http(s) URL ending in /api/, not %q", c.APIURL)
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	if c.UsergroupTTL < 0 {
		return c, fmt.Errorf("slack.usergroup_ttl must not be negative")
	}
	if c.UsergroupTTL == 0 {
		c.UsergroupTTL = DefaultUsergroupTTL
	}
	if c.MaxAnswerChars < 0 {
		return c, fmt.Errorf("slack.max_answer_chars must not be negative")
	}
	if c.MaxAnswerChars == 0 {
		c.MaxAnswerChars = DefaultMaxAnswerChars
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return c, nil
}
