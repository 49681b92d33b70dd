package matrix

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"maunium.net/go/mautrix/id"
)

// DefaultApproverPowerLevel is the room power level at which a user counts as
// an approver when Config.ApproverPowerLevel is zero (Element's "Moderator").
const DefaultApproverPowerLevel = 50

// Config configures the Matrix adapter. Keys in error messages use the
// config file's names (matrix.homeserver, ...).
type Config struct {
	// Homeserver is the client-server API base URL, e.g. https://matrix.example.org.
	Homeserver string
	// UserID is the bot's full Matrix ID, e.g. @vigil:example.org.
	UserID string
	// AccessToken or Password authenticates the bot; the token wins when both
	// are set. With a password the device ID is kept in StateDir so restarts
	// reuse the same device.
	AccessToken string
	Password    string
	// DeviceID pins the device for password login (optional).
	DeviceID string
	// Rooms are the allowed room IDs (!abc:example.org). Empty means any
	// room the bot is invited to. Invites to other rooms are declined and
	// messages in them ignored.
	Rooms []string
	// ApproverPowerLevel is the room power level from which a user is an
	// approver (UserFacts.IsApprover). Zero means DefaultApproverPowerLevel.
	ApproverPowerLevel int
	// E2EE enables end-to-end encryption (needs a binary built with
	// `-tags goolm` and cgo, and a StateDir for the crypto store).
	E2EE bool
	// StateDir keeps the device ID, the sync position and the crypto store
	// across restarts. Empty keeps them in memory only.
	StateDir string
	// MaxAnswerChars caps the characters of one answer posted as events
	// (zero: DefaultMaxAnswerChars); past it the last event says what was
	// cut and the whole answer follows as an m.file.
	MaxAnswerChars int
	// Logger receives the adapter's logs; nil discards them.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	var errs []error
	if strings.TrimSpace(c.Homeserver) == "" {
		errs = append(errs, errors.New("matrix.homeserver is required (e.g. https://matrix.example.org)"))
	} else if u, err := url.Parse(c.Homeserver); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("matrix.homeserver %q must be an http(s) URL", c.Homeserver))
	}
	if strings.TrimSpace(c.UserID) == "" {
		errs = append(errs, errors.New("matrix.user_id is required (e.g. @vigil:example.org)"))
	} else if _, _, err := id.UserID(c.UserID).Parse(); err != nil {
		errs = append(errs, fmt.Errorf("matrix.user_id %q is not a Matrix user ID like @vigil:example.org", c.UserID))
	}
	if c.AccessToken == "" && c.Password == "" {
		errs = append(errs, errors.New("matrix.access_token or matrix.password is required"))
	}
	for i, r := range c.Rooms {
		if !strings.HasPrefix(r, "!") || !strings.Contains(r, ":") {
			errs = append(errs, fmt.Errorf("matrix.rooms[%d] %q must be a room ID like !abc:example.org", i, r))
		}
	}
	if c.ApproverPowerLevel < 0 {
		errs = append(errs, fmt.Errorf("matrix.approver_power_level %d must not be negative", c.ApproverPowerLevel))
	}
	if c.MaxAnswerChars < 0 {
		errs = append(errs, fmt.Errorf("matrix.max_answer_chars %d must not be negative", c.MaxAnswerChars))
	}
	if c.E2EE && c.StateDir == "" {
		errs = append(errs, errors.New("matrix.e2ee needs matrix.state_dir for the crypto store"))
	}
	return errors.Join(errs...)
}
