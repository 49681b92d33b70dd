package transport

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/vigilops/vigil/tools"
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
	return fmt.Sprintf("\n[output truncated: %s total, showing first %s]", tools.FormatSize(total), tools.FormatSize(int64(shown)))
}

// tail returns at most the last n bytes of s, starting at a whole line when
// one begins within them.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return strings.ToValidUTF8(s, "")
}
