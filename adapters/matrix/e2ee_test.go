//go:build goolm

package matrix

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/crypto/cryptohelper"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

// Run with: CGO_ENABLED=1 go test -tags goolm -run E2EE ./adapters/matrix/
// (pure-Go Olm; the crypto store is mautrix's SQLite, which needs cgo).

// withCrypto gives a person's client its own crypto store and sync loop,
// like an E2EE-capable client such as Element.
func withCrypto(t *testing.T, c *mautrix.Client) *cryptohelper.CryptoHelper {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	who, err := c.Whoami(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.DeviceID = who.DeviceID
	helper, err := cryptohelper.NewCryptoHelper(c, []byte("test pickle key"), filepath.Join(t.TempDir(), "crypto.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Init(ctx); err != nil {
		t.Fatal(err)
	}
	c.Crypto = helper
	syncCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.SyncWithContext(syncCtx) }()
	t.Cleanup(func() { cancel(); <-done; _ = helper.Close() })
	return helper
}

func TestE2EEEncryptedRoom(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t, 90*time.Second)
	// An encrypted room with alice (E2EE client) and the bot.
	resp, err := h.owner.CreateRoom(ctx, &mautrix.ReqCreateRoom{
		Preset: "public_chat",
		InitialState: []*event.Event{{
			Type:    event.StateEncryption,
			Content: event.Content{Parsed: &event.EncryptionEventContent{Algorithm: id.AlgorithmMegolmV1}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h.room = resp.RoomID
	if _, err := h.alice.JoinRoomByID(ctx, h.room); err != nil {
		t.Fatal(err)
	}
	aliceCrypto := withCrypto(t, h.alice)
	h.invite(h.room)

	cfg := h.config(t.TempDir())
	cfg.E2EE = true
	r := h.startJoined(cfg)

	// Alice's client learns the room is encrypted from its sync.
	deadline := time.Now().Add(15 * time.Second)
	for {
		enc, _ := h.alice.StateStore.IsEncrypted(ctx, h.room)
		members, _ := h.alice.StateStore.GetRoomJoinedOrInvitedMembers(ctx, h.room)
		if enc && len(members) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's client never saw the encrypted room with the bot (encrypted=%v members=%v)", enc, members)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Alice's message is sent encrypted; the adapter decrypts it.
	rootID := h.say(h.alice, h.mention("secret check of @vault-1"))
	if raw := h.event(rootID); raw.Type != event.EventEncrypted {
		t.Fatalf("alice's message went out as %s, want m.room.encrypted", raw.Type.Type)
	}
	m := r.rec.message(t)
	if m.EventID != string(rootID) || m.Text != "secret check of @vault-1" || len(m.Mentions) != 1 || m.Mentions[0].Name != "vault-1" {
		t.Fatalf("decrypted message = %+v", m)
	}

	// The bot's reply is encrypted, in the thread, and alice can read it.
	thread := bot.ThreadRef{Platform: "matrix", Channel: string(h.room), Thread: string(rootID)}
	ref, err := r.Post(ctx, thread, bot.Reply{Kind: bot.ReplyNotice, Text: "vault-1 is sealed"})
	if err != nil {
		t.Fatal(err)
	}
	raw := h.event(id.EventID(ref.ID))
	if raw.Type != event.EventEncrypted {
		t.Fatalf("bot reply sent as %s, want m.room.encrypted", raw.Type.Type)
	}
	raw.RoomID = h.room
	dec, err := aliceCrypto.Decrypt(ctx, raw)
	if err != nil {
		t.Fatalf("alice cannot decrypt the bot's reply: %v", err)
	}
	mc := dec.Content.AsMessage()
	if mc.Body != "vault-1 is sealed" || mc.RelatesTo.GetThreadParent() != rootID {
		t.Fatalf("decrypted reply = %+v", mc)
	}

	// An encrypted approval card still maps reactions to its approval.
	card, err := r.PostApproval(ctx, thread, testCard(bot.ApprovalPending))
	if err != nil {
		t.Fatal(err)
	}
	r.cards = newBounded[id.EventID, cardRef](cacheSize) // force the fetch-and-decrypt path
	h.react(h.alice, id.EventID(card.ID), "✅")
	d := r.rec.decision(t)
	if d.ApprovalID != "ap-42" || !d.Approve || !strings.HasPrefix(d.User, "@alice:") {
		t.Fatalf("decision in encrypted room = %+v", d)
	}
}
