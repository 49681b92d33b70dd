// Package confkey is what a module's configuration shares with vigil's
// configuration loader: the Error its Validate returns, naming the key as
// the file writes it relative to the module's section ("bot_token",
// "rooms[2]"), and Secret, the type of a value that is never printed.
// The loader (internal/config) adds the section, the value as written,
// where it came from and an example; a module used on its own gets a
// message that already names the key and the fix.
//
// It is its own small package because modules outside internal/ may not
// import internal/config, and internal/config must not import every
// module just to word their errors.
package confkey

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// Error is one problem with one key of a module's configuration.
type Error struct {
	// Section is the module's section in the file ("slack", "plugins[0]");
	// Key is relative to it ("app_token").
	Section, Key string
	// Value is the bad value as the module shows it on its own ("3",
	// a quoted string); empty when the problem is that it is missing. The
	// loader shows the value as written instead.
	Value string
	// Problem says what is wrong and how to fix it, starting with its verb
	// ("is required", "must be …").
	Problem string
	// Example is a good value, when the loader's own example for the key
	// would not fit this problem; usually empty.
	Example string
}

// FullKey is the key as the file writes it: "slack.app_token".
func (e *Error) FullKey() string {
	switch {
	case e.Section == "":
		return e.Key
	case e.Key == "":
		return e.Section
	case strings.HasPrefix(e.Key, "["):
		return e.Section + e.Key
	}
	return e.Section + "." + e.Key
}

// Error reads "slack.app_token is required …": Problem starts with its
// verb.
func (e *Error) Error() string {
	if e.Value != "" {
		return e.FullKey() + " " + e.Value + " " + e.Problem
	}
	return e.FullKey() + " " + e.Problem
}

// Errors collects the problems of one section, so that a Validate reports
// every problem at once.
type Errors struct {
	section string
	errs    []error
}

// NewErrors starts a collection for section ("slack").
func NewErrors(section string) *Errors { return &Errors{section: section} }

// Add records a problem with key.
func (es *Errors) Add(key, format string, args ...any) {
	es.errs = append(es.errs, &Error{Section: es.section, Key: key, Problem: fmt.Sprintf(format, args...)})
}

// AddValue records a problem with key's value v, which the module's
// own message shows (quoted if it is a string).
func (es *Errors) AddValue(key string, v any, format string, args ...any) {
	val := fmt.Sprint(v)
	if s, ok := v.(string); ok {
		val = fmt.Sprintf("%q", s)
	}
	es.errs = append(es.errs, &Error{Section: es.section, Key: key, Value: val, Problem: fmt.Sprintf(format, args...)})
}

// Err is the problems joined (errors.Join), or nil.
func (es *Errors) Err() error { return errors.Join(es.errs...) }

// List returns every *Error in err (joined errors are unwrapped); an
// error that is not an *Error is returned as one without a key.
func List(err error) []*Error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []*Error
		for _, e := range j.Unwrap() {
			out = append(out, List(e)...)
		}
		return out
	}
	var ce *Error
	if errors.As(err, &ce) {
		return []*Error{ce}
	}
	return []*Error{{Problem: err.Error()}}
}

// Secret is a configuration value that must never be printed: String,
// LogValue and MarshalText all give "***".
type Secret string

func (s Secret) String() string { return mask(s) }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(mask(s)) }

// MarshalText implements encoding.TextMarshaler (JSON, YAML).
func (s Secret) MarshalText() ([]byte, error) { return []byte(mask(s)), nil }

// GoString keeps %#v from printing the value too.
func (s Secret) GoString() string { return `confkey.Secret("` + mask(s) + `")` }

// Reveal returns the secret itself, for the one place that needs it.
func (s Secret) Reveal() string { return string(s) }

func mask(s Secret) string {
	if s == "" {
		return ""
	}
	return "***"
}
