//go:build tinygo || pgquery_cgo

package sqlcheck

// Built with cgo (or TinyGo), go-pgquery runs libpg_query natively: a
// syntax error unwinds a native stack, which does not grow, so there is no
// instance to recycle.

func pgNoteError() {}
