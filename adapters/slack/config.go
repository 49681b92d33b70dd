package slack

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vigilops/vigil/confkey"
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

// Config configures the Slack adapter. It is also the slack section of
// vigil's configuration file (the mapstructure tags are its keys), so
// its rules live here once: Validate.
type Config struct {
	// Mode is "socket" (default) or "http".
	Mode string `mapstructure:"mode"`
	// BotToken (xoxb-…) calls the Web API. AppToken (xapp-…, scope
	// connections:write) opens Socket Mode. SigningSecret verifies HTTP
	// requests.
	BotToken      confkey.Secret `mapstructure:"bot_token"`
	AppToken      confkey.Secret `mapstructure:"app_token"`
	SigningSecret confkey.Secret `mapstructure:"signing_secret"`
	// Listen is the HTTP mode address, e.g. ":3000".
	Listen string `mapstructure:"listen"`
	// APIURL is the Web API base ending in /api/ (default Slack's); tests
	// point it at a fake.
	APIURL string `mapstructure:"api_url"`
	// UsergroupTTL is how long user group memberships are cached (default
	// 5m).
	UsergroupTTL time.Duration `mapstructure:"usergroup_ttl"`
	// MaxAnswerChars caps the characters of one answer posted as
	// messages (default DefaultMaxAnswerChars); past it the last message
	// says what was cut and the whole answer follows as a file.
	MaxAnswerChars int          `mapstructure:"max_answer_chars"`
	Logger         *slog.Logger `mapstructure:"-" json:"-"`
	HTTPClient     *http.Client `mapstructure:"-" json:"-"`
}

// MinMaxAnswerChars is the smallest MaxAnswerChars other than zero.
const MinMaxAnswerChars = 1000

// Validate checks every key without I/O and reports every problem, as
// *confkey.Error values naming the keys of the slack section. A zero
// Mode, APIURL, UsergroupTTL or MaxAnswerChars takes its default.
func (c Config) Validate() error {
	es := confkey.NewErrors("slack")
	mode := strings.ToLower(strings.TrimSpace(c.Mode))
	switch mode {
	case "", ModeSocket, ModeHTTP:
	default:
		es.Add("mode", "must be %s or %s", ModeSocket, ModeHTTP)
	}
	switch {
	case c.BotToken == "":
		es.Add("bot_token", "is required: the bot token (xoxb-…)")
	case strings.HasPrefix(c.BotToken.Reveal(), "xapp-"):
		es.Add("bot_token", "holds an app-level token (xapp-…); use the bot token (xoxb-…) and put the app token in slack.app_token")
	}
	switch mode {
	case "", ModeSocket:
		switch {
		case c.AppToken == "":
			es.Add("app_token", "is required in socket mode: the app-level token (xapp-…, with the connections:write scope)")
		case !strings.HasPrefix(c.AppToken.Reveal(), "xapp-"):
			es.Add("app_token", "must be an app-level token starting with xapp- (with the connections:write scope)")
		}
	case ModeHTTP:
		if c.SigningSecret == "" {
			es.Add("signing_secret", "is required in http mode: the app's signing secret (Basic Information in the app's settings)")
		}
		if c.Listen == "" {
			es.Add("listen", "is required in http mode: the address Slack's requests arrive on")
		}
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			es.Add("api_url", "must be an http(s) URL ending in /api/")
		}
	}
	if c.UsergroupTTL < 0 {
		es.Add("usergroup_ttl", "must not be negative")
	}
	if c.MaxAnswerChars != 0 && c.MaxAnswerChars < MinMaxAnswerChars {
		es.Add("max_answer_chars", "must be at least %d (characters of an answer posted as messages; the rest is attached)", MinMaxAnswerChars)
	}
	return es.Err()
}

// withDefaults validates and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	if err := c.Validate(); err != nil {
		return c, err
	}
	c.Mode = strings.ToLower(strings.TrimSpace(c.Mode))
	if c.Mode == "" {
		c.Mode = ModeSocket
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	if c.UsergroupTTL == 0 {
		c.UsergroupTTL = DefaultUsergroupTTL
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
