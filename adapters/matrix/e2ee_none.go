//go:build !goolm

package matrix

import (
	"context"
	"errors"
)

// errNoE2EE explains how to get a binary that can encrypt.
var errNoE2EE = errors.New("matrix.e2ee is true, but this binary was built without end-to-end encryption: " +
	"rebuild with `CGO_ENABLED=1 go build -tags goolm` (pure-Go Olm plus the SQLite crypto store), " +
	"or set matrix.e2ee to false and use unencrypted rooms")

func e2eeSupported() error { return errNoE2EE }

func (a *Adapter) setupCrypto(context.Context) (cryptoEngine, error) { return nil, errNoE2EE }
