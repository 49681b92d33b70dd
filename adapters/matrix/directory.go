package matrix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"
)

// Directory resolves room aliases (#ops:example.org) to room IDs through
// the homeserver's client API, so that the configuration may name rooms
// the way people know them. Matrix user IDs are already what people
// write, so it has no names of people to look up.
type Directory struct {
	client *mautrix.Client
}

// NewDirectory builds a Directory for homeserver, authenticated with
// accessToken. It does no I/O.
func NewDirectory(homeserver, userID, accessToken string) (*Directory, error) {
	c, err := mautrix.NewClient(homeserver, id.UserID(userID), accessToken)
	if err != nil {
		return nil, fmt.Errorf("matrix.homeserver: %w", err)
	}
	c.Client = &http.Client{Timeout: 30 * time.Second}
	return &Directory{client: c}, nil
}

// ChannelID returns the room ID the alias points to.
func (d *Directory) ChannelID(ctx context.Context, alias string) (string, error) {
	resp, err := d.client.ResolveAlias(ctx, id.RoomAlias(alias))
	if errors.Is(err, mautrix.MNotFound) {
		return "", fmt.Errorf("no room has the alias %s on its homeserver; check the spelling, or write the room ID (!…)", alias)
	}
	if err != nil {
		return "", fmt.Errorf("matrix: resolving %s: %w", alias, err)
	}
	return string(resp.RoomID), nil
}

// MemberID refuses: Matrix role entries are user IDs (@alice:example.org).
func (d *Directory) MemberID(_ context.Context, name string) (string, error) {
	return "", fmt.Errorf("%s is not a Matrix user ID; write it as @alice:example.org", name)
}
