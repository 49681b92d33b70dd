package plugin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A plugin speaks MCP over its stdio: one JSON-RPC message per line. The SDK's
// own transport gives up on the connection when one line is longer than its
// cap (16 MiB), so one oversized reply killed the plugin until vigil
// restarted. vigil reads the lines itself instead: a line longer than the
// plugin's frame limit is never buffered whole; it is skipped, and in its
// place the client receives an error response for the same request ID,
// which names plugins[].max_response. The call fails, the plugin and its
// session stay, and the next call works.

// refusedCode is the JSON-RPC error code of a refused reply (the range
// -32000 to -32099 is for implementations).
const refusedCode = -32050

// minFrameLimit is the smallest frame limit: a protocol message (a tool
// list, an initialize result) must fit whatever max_response says.
const minFrameLimit = 1 << 20

// frameLimit is the longest message read from a plugin: sixteen times its
// response cap (JSON escaping inflates text, and a result may carry the
// text twice, as content and structured content), at least minFrameLimit.
// A reply up to that is read and its text truncated to max_response; a
// longer one is refused.
func frameLimit(maxResponse int) int { return max(16*maxResponse, minFrameLimit) }

// stdioTransport starts the plugin's process and connects to its stdio
// through a frameFilter.
type stdioTransport struct {
	cmd       *exec.Cmd
	limit     int
	terminate time.Duration
	// refused is told of every message refused: the request ID it
	// answered ("" when it had none) and how many bytes it had.
	refused func(id string, size int64, request bool)
}

var _ mcp.Transport = (*stdioTransport)(nil)

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	r := &frameFilter{src: bufio.NewReaderSize(stdout, 64<<10), limit: t.limit, refused: t.refused}
	w := &processWriter{WriteCloser: stdin, cmd: t.cmd, terminate: t.terminate}
	return (&mcp.IOTransport{Reader: io.NopCloser(r), Writer: w, MaxLineLength: -1}).Connect(ctx)
}

// processWriter is the plugin's stdin; closing it ends the process as the
// MCP stdio transport says: close stdin, wait, SIGTERM, wait, SIGKILL.
type processWriter struct {
	io.WriteCloser
	cmd       *exec.Cmd
	terminate time.Duration
}

func (w *processWriter) Close() error {
	if err := w.WriteCloser.Close(); err != nil {
		return fmt.Errorf("close stdin: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- w.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(w.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if w.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := w.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return fmt.Errorf("plugin process does not exit")
}

// frameFilter passes the plugin's messages through, line by line, and
// replaces a line longer than limit with an error response to the same
// request.
type frameFilter struct {
	src     *bufio.Reader
	limit   int
	refused func(id string, size int64, request bool)
	out     []byte // what Read hands out next
	err     error  // the source's error, once out is drained
}

func (f *frameFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// next reads one line into out, or its replacement.
func (f *frameFilter) next() {
	var line []byte
	var scan *idScanner
	var size int64
	for {
		chunk, err := f.src.ReadSlice('\n')
		size += int64(len(chunk))
		switch {
		case scan != nil:
			scan.feed(chunk)
		case len(line)+len(chunk) > f.limit:
			scan = &idScanner{}
			scan.feed(line)
			scan.feed(chunk)
			line = nil
		default:
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			f.err = err
		}
		break
	}
	if scan == nil {
		f.out = line
		return
	}
	id, request := scan.result()
	if f.refused != nil {
		f.refused(string(id), size, request)
	}
	if id == nil || request {
		// A notification or a request from the plugin: nothing waits for
		// it, so it is dropped (and logged).
		return
	}
	msg := fmt.Sprintf("plugin reply refused: it is %d bytes, over the limit of %d (16 × plugins[].max_response, "+
		"at least 1 MiB); the plugin is still running: ask it for less, or raise plugins[].max_response", size, f.limit)
	f.out = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, refusedCode, strconv.Quote(msg))
}

// idScanner reads a JSON-RPC message as it streams past, keeping only its
// top-level "id" (its raw JSON, when short) and whether it has a "method"
// (a request or notification, not a response). It never holds more than a
// few bytes of the message.
type idScanner struct {
	depth    int
	inString bool
	escape   bool
	// At depth 1: whether the next string is a key, the key being read
	// (capped) and the key whose value comes next.
	wantKey  bool
	key      []byte
	valueOf  string
	capture  bool // reading the id's value
	id       []byte
	tooLong  bool
	idDone   bool
	isMethod bool
}

const maxIDLength = 128

func (s *idScanner) feed(b []byte) {
	for _, c := range b {
		s.step(c)
	}
}

func (s *idScanner) step(c byte) {
	if s.capture && s.captureByte(c) {
		return
	}
	if s.inString {
		switch {
		case s.escape:
			s.escape = false
		case c == '\\':
			s.escape = true
		case c == '"':
			s.inString = false
			if s.depth == 1 && s.wantKey {
				s.valueOf, s.wantKey = string(s.key), false
				s.key = s.key[:0]
				return
			}
		}
		if s.depth == 1 && s.wantKey && c != '"' && len(s.key) < 16 {
			s.key = append(s.key, c)
		}
		return
	}
	switch c {
	case '"':
		s.inString = true
		return
	case '{', '[':
		s.depth++
		if s.depth == 1 {
			s.wantKey = c == '{'
		}
	case '}', ']':
		s.depth--
	case ',':
		if s.depth == 1 {
			s.wantKey = true
		}
	case ':':
		if s.depth == 1 {
			switch s.valueOf {
			case "id":
				// The last "id" counts, as for encoding/json.
				s.capture, s.idDone, s.tooLong = true, false, false
				s.id = s.id[:0]
			case "method":
				s.isMethod = true
			}
		}
	}
}

// captureByte reads the id's value (a number, a string or null) and
// reports whether it took c; a delimiter ends a number and belongs to the
// structure.
func (s *idScanner) captureByte(c byte) bool {
	switch {
	case len(s.id) == 0 && (c == ' ' || c == '\t' || c == '\r' || c == '\n'):
		return true
	case len(s.id) == 0 && c == '"':
		s.id = append(s.id, c)
		return true
	case len(s.id) > 0 && s.id[0] == '"':
		s.id = append(s.id, c)
		switch {
		case c == '"' && !s.escapedQuote():
			s.endCapture()
		case len(s.id) > maxIDLength:
			s.tooLong = true
			s.endCaptureAsString()
		}
		return true
	case c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' || c == '\n':
		s.endCapture()
		return false
	case c == '{' || c == '[' || c == '"':
		// Not an id JSON-RPC allows: read the rest as structure.
		s.tooLong = true
		s.endCapture()
		return false
	}
	s.id = append(s.id, c)
	if len(s.id) > maxIDLength {
		s.tooLong = true
		s.endCapture()
	}
	return true
}

func (s *idScanner) escapedQuote() bool {
	n := 0
	for i := len(s.id) - 2; i >= 1 && s.id[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func (s *idScanner) endCapture() { s.capture, s.idDone = false, true }

// endCaptureAsString stops reading an over-long string id: the rest of it
// is read as an ordinary string.
func (s *idScanner) endCaptureAsString() {
	s.endCapture()
	s.inString = true
}

// result returns the id's raw JSON (nil when none was found, or it was too
// long or not a number or string) and whether the message is a request or
// notification.
func (s *idScanner) result() (id []byte, request bool) {
	if !s.idDone || s.tooLong || len(s.id) == 0 || string(s.id) == "null" {
		return nil, s.isMethod
	}
	switch c := s.id[0]; {
	case c == '"' && len(s.id) >= 2 && s.id[len(s.id)-1] == '"':
	case c == '-' || '0' <= c && c <= '9':
		if _, err := strconv.ParseFloat(string(s.id), 64); err != nil {
			return nil, s.isMethod
		}
	default:
		return nil, s.isMethod
	}
	return s.id, s.isMethod
}
