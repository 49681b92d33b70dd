package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// capBuffer keeps the first limit bytes written to it and counts the rest.
// Write never fails, so a command is never blocked on a full pipe: the output
// beyond the cap is read and dropped.
type capBuffer struct {
	limit int
	buf   []byte
	total int64
}

func newCapBuffer(limit int) *capBuffer { return &capBuffer{limit: limit} }

func (c *capBuffer) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capBuffer) truncated() bool { return c.total > int64(len(c.buf)) }

// text returns what was kept, cut back to a whole UTF-8 character, with a
// notice appended when output was dropped.
func (c *capBuffer) text() string {
	b := c.buf
	if c.truncated() {
		// Drop a rune the cap split in two.
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
				break
			}
			b = b[:len(b)-1]
		}
		return string(b) + truncationNotice(c.total, len(b))
	}
	return string(b)
}

// truncationNotice tells the reader that output was cut, how much there was
// and how much is shown.
func truncationNotice(total int64, shown int) string {
	return fmt.Sprintf("\n[output truncated: %s total, showing first %s]", formatSize(total), formatSize(int64(shown)))
}

// formatSize renders a byte count for people: 512 B, 64 KiB, 1.9 MiB.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, exp := float64(n)/unit, 0
	for v >= unit && exp < 4 {
		v /= unit
		exp++
	}
	s := fmt.Sprintf("%.1f", v)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[exp]
}

// tail returns at most the last n bytes of s, starting at a whole line when
// one begins within them.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(s, "")
}
