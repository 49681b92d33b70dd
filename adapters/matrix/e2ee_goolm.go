//go:build goolm

package matrix

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"maunium.net/go/mautrix/crypto/cryptohelper"
	"maunium.net/go/mautrix/event"
)

// e2eeSupported reports whether E2EE can run in this binary: the pure-Go
// Olm implementation (goolm) is compiled in, and the crypto store needs
// mautrix's SQLite driver, which is cgo-only.
func e2eeSupported() error {
	if !slices.Contains(sql.Drivers(), "sqlite3-fk-wal") {
		return errors.New("matrix.e2ee: this binary has no SQLite driver for the crypto store; " +
			"build with CGO_ENABLED=1 and -tags goolm")
	}
	return nil
}

// setupCrypto starts mautrix's crypto helper with its SQLite store in the
// state dir and attaches it to the client (encrypts sends, decrypts sync).
func (a *Adapter) setupCrypto(ctx context.Context) (cryptoEngine, error) {
	key, err := pickleKey(a.state.path("pickle.key"))
	if err != nil {
		return nil, fmt.Errorf("matrix.e2ee: pickle key: %w", err)
	}
	helper, err := cryptohelper.NewCryptoHelper(a.client, key, a.state.path("crypto.db"))
	if err != nil {
		return nil, fmt.Errorf("matrix.e2ee: crypto store in %s: %w", a.state.dir, err)
	}
	helper.DecryptErrorCallback = func(evt *event.Event, err error) {
		a.log.Warn("matrix: cannot decrypt event", "room", evt.RoomID, "event", evt.ID, "err", err)
	}
	if err := helper.Init(ctx); err != nil {
		return nil, fmt.Errorf("matrix.e2ee: init crypto: %w", err)
	}
	a.client.Crypto = helper
	return helper, nil
}

// pickleKey loads (or creates once) the key that encrypts the crypto store.
func pickleKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return hex.DecodeString(strings.TrimSpace(string(b)))
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	return key, nil
}
