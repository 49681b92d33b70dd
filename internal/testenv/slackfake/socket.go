package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Envelope is one Socket Mode message the fake sent.
type Envelope struct {
	EnvelopeID   string          `json:"envelope_id"`
	Type         string          `json:"type"`
	Payload      json.RawMessage `json:"payload"`
	RetryAttempt int             `json:"retry_attempt"`
	RetryReason  string          `json:"retry_reason"`
	// AcceptsResponsePayload is set for interactive envelopes.
	AcceptsResponsePayload bool `json:"accepts_response_payload"`
}

// Ack is one acknowledgement the client sent back.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage
	At         time.Time
}

// PushOption changes an envelope before it is sent.
type PushOption func(*Envelope)

// Retry marks the envelope as Slack's n-th redelivery.
func Retry(attempt int, reason string) PushOption {
	return func(e *Envelope) { e.RetryAttempt, e.RetryReason = attempt, reason }
}

// EnvelopeID fixes the envelope ID (by default a fresh one).
func EnvelopeID(id string) PushOption { return func(e *Envelope) { e.EnvelopeID = id } }

type socketConn struct {
	ws      *websocket.Conn
	writeMu sync.Mutex
	done    chan struct{}
}

func (c *socketConn) write(v any) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

type socketState struct {
	mu        sync.Mutex
	conns     []*socketConn
	current   *socketConn
	outbox    []Envelope
	sent      []Envelope
	acks      []Ack
	acked     map[string]bool
	redeliver map[string]bool // envelope IDs already redelivered
	connects  int
	seq       int
	changed   chan struct{}
	closed    bool
}

func (st *socketState) init() {
	st.acked = map[string]bool{}
	st.redeliver = map[string]bool{}
	st.changed = make(chan struct{})
}

func (st *socketState) notifyLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

func (st *socketState) closeAll() {
	st.mu.Lock()
	st.closed = true
	conns := st.conns
	st.conns, st.current = nil, nil
	st.notifyLocked()
	st.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.Close()
	}
}

// serveSocket is the websocket apps.connections.open points at.
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &socketConn{ws: ws, done: make(chan struct{})}
	st := &s.sock
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		_ = ws.Close()
		return
	}
	st.conns = append(st.conns, c)
	st.connects++
	st.mu.Unlock()

	hello := map[string]any{
		"type":            "hello",
		"num_connections": 1,
		"debug_info":      map[string]any{"host": "slackfake", "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": AppID},
	}
	if err := c.write(hello); err != nil {
		_ = ws.Close()
		return
	}
	st.mu.Lock()
	st.current = c
	pending := st.outbox
	st.outbox = nil
	st.notifyLocked()
	st.mu.Unlock()
	for _, e := range pending {
		s.send(c, e)
	}

	go s.pingLoop(c)
	s.readLoop(c)
}

func (s *Server) pingLoop(c *socketConn) {
	t := time.NewTicker(s.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)); err != nil {
				return
			}
		}
	}
}

func (s *Server) readLoop(c *socketConn) {
	st := &s.sock
	defer func() {
		close(c.done)
		_ = c.ws.Close()
		st.mu.Lock()
		if st.current == c {
			st.current = nil
		}
		st.notifyLocked()
		st.mu.Unlock()
	}()
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		var resp struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(data, &resp); err != nil || resp.EnvelopeID == "" {
			continue
		}
		st.mu.Lock()
		st.acks = append(st.acks, Ack{EnvelopeID: resp.EnvelopeID, Payload: resp.Payload, At: time.Now()})
		st.acked[resp.EnvelopeID] = true
		st.notifyLocked()
		st.mu.Unlock()
	}
}

// send writes an envelope and arms the single redelivery.
func (s *Server) send(c *socketConn, e Envelope) {
	st := &s.sock
	st.mu.Lock()
	st.sent = append(st.sent, e)
	st.notifyLocked()
	st.mu.Unlock()
	if err := c.write(e); err != nil {
		return
	}
	if e.RetryAttempt > 0 {
		return
	}
	time.AfterFunc(s.ackTimeout, func() {
		st.mu.Lock()
		if st.acked[e.EnvelopeID] || st.redeliver[e.EnvelopeID] || st.closed {
			st.mu.Unlock()
			return
		}
		st.redeliver[e.EnvelopeID] = true
		cur := st.current
		st.mu.Unlock()
		if cur == nil {
			return
		}
		again := e
		again.RetryAttempt, again.RetryReason = 1, "timeout"
		s.send(cur, again)
	})
}

func (s *Server) push(typ string, payload []byte, opts ...PushOption) string {
	st := &s.sock
	st.mu.Lock()
	st.seq++
	e := Envelope{
		EnvelopeID:             fmt.Sprintf("env-%04d", st.seq),
		Type:                   typ,
		Payload:                json.RawMessage(payload),
		AcceptsResponsePayload: typ == "interactive",
	}
	for _, o := range opts {
		o(&e)
	}
	cur := st.current
	if cur == nil {
		st.outbox = append(st.outbox, e)
		st.mu.Unlock()
		return e.EnvelopeID
	}
	st.mu.Unlock()
	s.send(cur, e)
	return e.EnvelopeID
}

// PushEventsAPI sends an events_api envelope carrying an Events API
// callback (see EventCallback) and returns its envelope ID. Envelopes
// pushed before a client connects are sent on connect.
func (s *Server) PushEventsAPI(payload []byte, opts ...PushOption) string {
	return s.push("events_api", payload, opts...)
}

// PushInteractive sends an interactive envelope (see BlockActions,
// ViewSubmission).
func (s *Server) PushInteractive(payload []byte, opts ...PushOption) string {
	return s.push("interactive", payload, opts...)
}

// PushRaw writes a raw frame to the connected client (for malformed input
// tests). It fails the test when no client is connected.
func (s *Server) PushRaw(t testing.TB, frame []byte) {
	t.Helper()
	st := &s.sock
	st.mu.Lock()
	cur := st.current
	st.mu.Unlock()
	if cur == nil {
		t.Fatal("slackfake: PushRaw with no socket client connected")
	}
	cur.writeMu.Lock()
	defer cur.writeMu.Unlock()
	if err := cur.ws.WriteMessage(websocket.TextMessage, frame); err != nil {
		t.Fatalf("slackfake: push raw: %v", err)
	}
}

// Acks returns the acknowledgements received so far.
func (s *Server) Acks() []Ack {
	s.sock.mu.Lock()
	defer s.sock.mu.Unlock()
	return append([]Ack(nil), s.sock.acks...)
}

// Sent returns every envelope written to clients, redeliveries included.
func (s *Server) Sent() []Envelope {
	s.sock.mu.Lock()
	defer s.sock.mu.Unlock()
	return append([]Envelope(nil), s.sock.sent...)
}

// Connects is how many socket connections clients opened.
func (s *Server) Connects() int {
	s.sock.mu.Lock()
	defer s.sock.mu.Unlock()
	return s.sock.connects
}

func (s *Server) waitSock(t testing.TB, timeout time.Duration, what string, cond func(st *socketState) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.sock.mu.Lock()
		ok := cond(&s.sock)
		ch := s.sock.changed
		s.sock.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("slackfake: timed out after %s waiting for %s", timeout, what)
		}
	}
}

// WaitConnected waits until a socket client has received hello.
func (s *Server) WaitConnected(t testing.TB, timeout time.Duration) {
	t.Helper()
	s.waitSock(t, timeout, "a socket mode connection", func(st *socketState) bool { return st.current != nil })
}

// WaitAck waits for the acknowledgement of an envelope.
func (s *Server) WaitAck(t testing.TB, envelopeID string, timeout time.Duration) Ack {
	t.Helper()
	var got Ack
	s.waitSock(t, timeout, "ack of "+envelopeID, func(st *socketState) bool {
		for _, a := range st.acks {
			if a.EnvelopeID == envelopeID {
				got = a
				return true
			}
		}
		return false
	})
	return got
}

// Disconnect asks the connected client to reconnect, as Slack does when it
// refreshes connections.
func (s *Server) Disconnect(t testing.TB) {
	t.Helper()
	st := &s.sock
	st.mu.Lock()
	cur := st.current
	st.mu.Unlock()
	if cur == nil {
		t.Fatal("slackfake: Disconnect with no socket client connected")
	}
	if err := cur.write(map[string]any{"type": "disconnect", "reason": "refresh_requested",
		"debug_info": map[string]any{"host": "slackfake"}}); err != nil {
		t.Fatalf("slackfake: disconnect: %v", err)
	}
}
