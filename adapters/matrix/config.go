package matrix

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/confkey"
)

// DefaultApproverPowerLevel is the room power level at which a user counts as
// an approver when Config.ApproverPowerLevel is zero (Element's "Moderator").
const DefaultApproverPowerLevel = 50

// Config configures the Matrix adapter. It is also the matrix section
// of vigil's configuration file (the mapstructure tags are its keys), so
// its rules live here once: Validate.
type Config struct {
	// Homeserver is the client-server API base URL, e.g. https://matrix.example.org.
	Homeserver string `mapstructure:"homeserver"`
	// UserID is the bot's full Matrix ID, e.g. @vigil:example.org.
	UserID string `mapstructure:"user_id"`
	// AccessToken or Password authenticates the bot; the token wins when both
	// are set. With a password the device ID is kept in StateDir so restarts
	// reuse the same device.
	AccessToken confkey.Secret `mapstructure:"access_token"`
	Password    confkey.Secret `mapstructure:"password"`
	// DeviceID pins the device for password login (optional).
	DeviceID string `mapstructure:"device_id"`
	// Rooms are the allowed room IDs (!abc:example.org). Empty means any
	// room the bot is invited to. Invites to other rooms are declined and
	// messages in them ignored. The configuration file may name a room by
	// its alias (#ops:example.org); vigil resolves it before New, which
	// takes IDs only.
	Rooms []string `mapstructure:"rooms"`
	// ApproverPowerLevel is the room power level from which a user is an
	// approver (UserFacts.IsApprover). Zero means DefaultApproverPowerLevel.
	ApproverPowerLevel int `mapstructure:"approver_power_level"`
	// E2EE enables end-to-end encryption (needs a binary built with
	// `-tags goolm` and cgo, and a StateDir for the crypto store).
	E2EE bool `mapstructure:"e2ee"`
	// StateDir keeps the device ID, the sync position and the crypto store
	// across restarts. Empty keeps them in memory only.
	StateDir string `mapstructure:"state_dir"`
	// MaxAnswerChars caps the characters of one answer posted as events
	// (zero: DefaultMaxAnswerChars); past it the last event says what was
	// cut and the whole answer follows as an m.file.
	MaxAnswerChars int `mapstructure:"max_answer_chars"`
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger `mapstructure:"-" json:"-"`
}

// MinMaxAnswerChars is the smallest MaxAnswerChars other than zero.
const MinMaxAnswerChars = 1000

// Validate checks every key without I/O and reports every problem, as
// *confkey.Error values naming the keys of the matrix section. A room
// may be an alias here (the file may name rooms so); New wants IDs.
func (c Config) Validate() error {
	es := confkey.NewErrors("matrix")
	if strings.TrimSpace(c.Homeserver) == "" {
		es.Add("homeserver", "is required: the homeserver URL (e.g. https://matrix.example.org)")
	} else if u, err := url.Parse(c.Homeserver); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		es.Add("homeserver", "must be an http(s) URL")
	}
	if strings.TrimSpace(c.UserID) == "" {
		es.Add("user_id", "is required: the bot's user ID (e.g. @vigil:example.org)")
	} else if _, _, err := id.UserID(c.UserID).Parse(); err != nil {
		es.Add("user_id", "is not a Matrix user ID like @vigil:example.org")
	}
	if c.AccessToken == "" && c.Password == "" {
		es.Add("access_token", "is required, or matrix.password to log in with")
	}
	for i, r := range c.Rooms {
		if !roomForm.MatchString(r) {
			es.Add(fmt.Sprintf("rooms[%d]", i), "must be a room ID like !abc:example.org or an alias like #ops:example.org")
		}
	}
	if c.ApproverPowerLevel < 0 {
		es.Add("approver_power_level", "must not be negative")
	}
	if c.MaxAnswerChars != 0 && c.MaxAnswerChars < MinMaxAnswerChars {
		es.Add("max_answer_chars", "must be at least %d (characters of an answer posted as events; the rest is attached)", MinMaxAnswerChars)
	}
	if c.E2EE && c.StateDir == "" {
		es.Add("e2ee", "needs matrix.state_dir for the crypto store")
	}
	return es.Err()
}

var roomForm = regexp.MustCompile(`^[!#][^\s:]+:\S+$`)

// validate is Validate plus what New needs beyond the file's rules: rooms
// given by ID.
func (c *Config) validate() error {
	errs := []error{c.Validate()}
	for i, r := range c.Rooms {
		if strings.HasPrefix(r, "#") {
			errs = append(errs, &confkey.Error{Section: "matrix", Key: fmt.Sprintf("rooms[%d]", i),
				Problem: fmt.Sprintf("is the alias %s; give the room ID (!abc:example.org), or resolve it with Directory first", r)})
		}
	}
	return errors.Join(errs...)
}
