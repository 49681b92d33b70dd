package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// Keyed chains (SPEC R4). A chain whose records are only hashed proves the
// log is consistent, not that nobody rewrote it: edit a record's actor,
// recompute every later hash, and the chain is whole again. A keyed chain
// replaces each hash with an HMAC-SHA256 under a secret key that vigil
// holds and the log does not, so a record cannot be edited, added or
// rewritten without the key.
//
// HMAC, not signatures: the replicas that write the chain must all hold
// the writing key anyway, and `vigil audit verify` runs where the operator
// keeps vigil's secrets. A signature scheme (ed25519) would let a third
// party verify without the power to forge, at a price: a signature per
// decision and a key pair per deployment to manage, and verifying a long
// log a hundred times slower. Where verification must happen without the
// key, ship the head (below) to the third party instead.
//
// Cutting records off the end leaves a chain that is whole. The head — the
// last record's sequence number and hash, sealed with the key under its
// own label so no record's MAC can stand in for it — is kept beside the
// log (the audit file's head file, the store's head key) and checked by
// verify: a log shorter than its head, or a head that is missing, is
// reported with the last record known to exist.
//
// Rotation: every record names the ID of the key that sealed it. When
// vigil starts with a new key, the first record it chains is a
// key_rotated record sealed with the new key, naming the old and the new
// key IDs; verify then needs every key the log was sealed with, and
// refuses a record sealed with a key the chain had already moved on from.

// MinKeyLength is the shortest key accepted, in bytes: 256 bits.
const MinKeyLength = 32

// Key is an audit key: its ID, derived from the secret, names it in records
// without revealing it.
type Key struct {
	ID     string
	secret []byte
}

// String never prints the secret.
func (k *Key) String() string { return "audit key " + k.ID }

// ParseKey makes a key of secret, trimmed of blanks and newlines: at least
// MinKeyLength bytes, such as the 64 hex characters of
// `openssl rand -hex 32`.
func ParseKey(secret []byte) (*Key, error) {
	secret = bytes.TrimSpace(secret)
	if len(secret) < MinKeyLength {
		return nil, fmt.Errorf("the audit key is %d bytes; it must be at least %d (generate one with `openssl rand -hex 32`)",
			len(secret), MinKeyLength)
	}
	sum := sha256.Sum256(append([]byte("vigil-audit-key-id\x00"), secret...))
	return &Key{ID: "k" + hex.EncodeToString(sum[:6]), secret: bytes.Clone(secret)}, nil
}

// LoadKeyFile reads a key from a file. A file that others than its owner
// can read is reported in warn (the key still loads: a Kubernetes Secret
// volume is 0644 by default).
func LoadKeyFile(path string) (k *Key, warn string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read audit key file: %w", err)
	}
	k, err = ParseKey(b)
	if err != nil {
		return nil, "", fmt.Errorf("audit key file %s: %w", path, err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		warn = fmt.Sprintf("audit key file %s is readable by others (mode %s); make it 0600", path, st.Mode().Perm())
	}
	return k, warn, nil
}

// Keyring is the key that seals new records and the keys older records
// were sealed with. A nil *Keyring is an unkeyed chain: records are only
// hashed.
type Keyring struct {
	current *Key
	keys    map[string]*Key
}

// NewKeyring returns a keyring sealing with current (nil: verify only)
// that also verifies with previous.
func NewKeyring(current *Key, previous ...*Key) *Keyring {
	k := &Keyring{current: current, keys: map[string]*Key{}}
	for _, p := range append([]*Key{current}, previous...) {
		if p != nil {
			k.keys[p.ID] = p
		}
	}
	return k
}

// Current is the key that seals new records, nil for none.
func (k *Keyring) Current() *Key {
	if k == nil {
		return nil
	}
	return k.current
}

// CurrentID is the current key's ID, "" when records are only hashed.
func (k *Keyring) CurrentID() string {
	if c := k.Current(); c != nil {
		return c.ID
	}
	return ""
}

// IDs lists the keyring's key IDs.
func (k *Keyring) IDs() []string {
	if k == nil {
		return nil
	}
	var ids []string
	for id := range k.keys {
		ids = append(ids, id)
	}
	return ids
}

func (k *Keyring) key(id string) *Key {
	if k == nil {
		return nil
	}
	return k.keys[id]
}

// KeyRotated records that the chain's key changed: Reason names the old
// and the new key IDs ("none" for an unkeyed chain).
const KeyRotated Action = "key_rotated"

// rotationRecord is the record that moves a chain from one key to another.
func rotationRecord(from, to string, r Record) Record {
	name := func(id string) string {
		if id == "" {
			return "none"
		}
		return id
	}
	return Record{Time: r.Time, Actor: "vigil", Action: KeyRotated, Outcome: name(to),
		Reason: "audit key changed from " + name(from) + " to " + name(to)}
}

// ErrUnknownKey means a chain's newest record is sealed with a key this
// keyring does not hold.
var ErrUnknownKey = errors.New("audit chain sealed with an unknown key")

// CanFollow reports whether records sealed with the current key may follow
// one sealed with key id: the same key, no key, or a key the keyring holds
// (a rotation it knows of). A chain sealed with a key it does not know is
// either misconfigured (the old key is missing from
// audit.previous_key_files) or newer than this writer (a replica not yet
// restarted during a rotation), and this writer must not move it back.
func (k *Keyring) CanFollow(id string) error {
	if id == "" || id == k.CurrentID() || k.key(id) != nil {
		return nil
	}
	return fmt.Errorf("%w: the newest record is sealed with key %s, which this vigil does not hold (it has: %s); "+
		"start it with that key (audit.key_file or VIGIL_AUDIT_KEY), or list it in audit.previous_key_files if it is an old one",
		ErrUnknownKey, id, keyNames(k.IDs()))
}

// Chain makes r the record after prev (nil for the first record), sealed
// with the current key: it sets Seq, PrevHash, KeyID and Hash. When prev
// was sealed with another key (or none), a key_rotated record comes first
// and Chain returns both, in order. Free text is redacted first (Prepare).
func (k *Keyring) Chain(prev *Record, r Record) []Record {
	out := make([]Record, 0, 2)
	id := k.CurrentID()
	if prev != nil && prev.KeyID != id {
		rot := k.seal(prev, rotationRecord(prev.KeyID, id, r))
		out = append(out, rot)
		prev = &out[0]
	}
	return append(out, k.seal(prev, Prepare(r)))
}

// seal sets r's chain fields after prev.
func (k *Keyring) seal(prev *Record, r Record) Record {
	r.Seq, r.PrevHash = 1, ""
	if prev != nil {
		r.Seq, r.PrevHash = prev.Seq+1, prev.Hash
	}
	r.KeyID = k.CurrentID()
	r.Hash = r.mac(k.Current())
	return r
}

// Head is what a log must reach: the last record's sequence number and
// hash, and a MAC over them under the key's head label ("" when unkeyed).
type Head struct {
	Seq   int64  `json:"seq"`
	Hash  string `json:"hash"`
	KeyID string `json:"key_id,omitempty"`
	MAC   string `json:"mac,omitempty"`
}

// HeadOf seals the head of a chain whose last record is last.
func (k *Keyring) HeadOf(last Record) Head {
	h := Head{Seq: last.Seq, Hash: last.Hash, KeyID: k.CurrentID()}
	if c := k.Current(); c != nil {
		h.MAC = h.mac(c)
	}
	return h
}

func (h Head) mac(k *Key) string {
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte("vigil-audit-head-v1\x00" + strconv.FormatInt(h.Seq, 10) + "\x00" + h.Hash + "\x00" + h.KeyID))
	return hex.EncodeToString(m.Sum(nil))
}

// checkHead verifies h's MAC.
func (k *Keyring) checkHead(h Head) error {
	if h.KeyID == "" {
		if h.MAC != "" {
			return errors.New("the head carries a MAC but names no key")
		}
		return nil
	}
	key := k.key(h.KeyID)
	if key == nil {
		return fmt.Errorf("the head is sealed with key %s, which verify was not given", h.KeyID)
	}
	if !hmac.Equal([]byte(h.MAC), []byte(h.mac(key))) {
		return errors.New("the head's MAC does not match: the head was edited")
	}
	return nil
}

// ErrNoHead means the head is missing.
var ErrNoHead = errors.New("audit head missing")

// HeadPath is the head file of the audit file at path.
func HeadPath(path string) string { return path + ".head" }

// readHead reads a head file; ErrNoHead when there is none.
func readHead(path string) (*Head, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoHead
	}
	if err != nil {
		return nil, fmt.Errorf("read audit head: %w", err)
	}
	h, err := parseHead(b)
	if err != nil {
		return nil, fmt.Errorf("audit head %s: %w", path, err)
	}
	return h, nil
}

func parseHead(b []byte) (*Head, error) {
	var h Head
	if err := decodeStrict(bytes.TrimSpace(b), &h); err != nil {
		return nil, err
	}
	if h.Seq < 0 || h.Seq > 0 && h.Hash == "" {
		return nil, errors.New("not a head: a sequence number without a hash")
	}
	return &h, nil
}

// keyNames lists IDs for a message.
func keyNames(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
