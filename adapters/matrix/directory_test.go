package matrix

import (
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
)

// Room aliases resolve through the real homeserver's client API; an
// alias nobody made is an error saying so.
func TestDirectoryResolvesRoomAliases(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t, 30*time.Second)
	_, server, _ := strings.Cut(string(h.room), ":")
	alias := "#sre:" + server
	resp, err := h.owner.CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "public_chat", Name: "sre", RoomAliasName: "sre"})
	if err != nil {
		t.Fatalf("create room: %v", err)
	}

	d, err := NewDirectory(h.hs.URL(), string(h.botID), h.token)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ChannelID(ctx, alias)
	if err != nil || got != string(resp.RoomID) {
		t.Fatalf("ChannelID(%s) = %q, %v; want %s", alias, got, err, resp.RoomID)
	}
	_, err = d.ChannelID(ctx, "#nowhere:"+server)
	if err == nil || !strings.Contains(err.Error(), "no room has the alias #nowhere:"+server) {
		t.Fatalf("unknown alias: %v", err)
	}
	if _, err := d.MemberID(ctx, "@alice"); err == nil {
		t.Fatal("MemberID resolved a Matrix name")
	}
}
