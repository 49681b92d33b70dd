package bot

import "time"

// Clock is the time the bot reads and waits on: the system's by default,
// a test's own where a test moves time by hand (the alert debounce and
// sweep wait on it, so their tests need not sleep).
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed on this clock; stop cancels
	// the call if it has not happened yet and reports whether it did so.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc: f runs in its own goroutine.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// ClockOf is the system clock reading the time from now (nil: time.Now),
// for callers that move only the time read, not the timers.
func ClockOf(now func() time.Time) Clock {
	if now == nil {
		return SystemClock{}
	}
	return nowClock(now)
}

type nowClock func() time.Time

func (c nowClock) Now() time.Time { return c() }

func (nowClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
