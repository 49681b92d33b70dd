// Package slackfake is a fake Slack for tests. It speaks the real wire
// format: the Web API over HTTP (form and JSON posts, Slack's {"ok":..}
// envelopes, 429 with Retry-After), the file-upload URL, and Socket Mode over
// a websocket. Every Web API call is recorded with its parameters and decoded
// blocks so tests can assert on what a client actually sent.
//
// slack-go's slacktest is not enough for vigil: it neither records
// chat.postMessage nor serves chat.update, files.*, usergroups.* or Socket
// Mode. This package builds on net/http/httptest and gorilla/websocket only.
package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Identities of the fake workspace.
const (
	TeamID        = "T0VIGIL"
	AppID         = "A0VIGIL"
	BotUserID     = "U0VIGIL"
	BotID         = "B0VIGIL"
	BotToken      = "xoxb-fake-bot-token"
	AppToken      = "xapp-fake-app-token"
	SigningSecret = "fake-signing-secret"
)

// Call is one recorded Web API call.
type Call struct {
	Method string
	// Params holds form parameters, or for JSON bodies the top-level values
	// (strings as they are, anything else as compact JSON).
	Params url.Values
	// Blocks are the decoded "blocks" parameter (or view.blocks for
	// views.open), nil when absent.
	Blocks []map[string]any
	// Status is the HTTP status the fake answered with; Error the Slack
	// error code ("" when ok).
	Status int
	Error  string
	// TS is the timestamp assigned to a posted message.
	TS string
	At time.Time
}

// Param returns one parameter.
func (c Call) Param(name string) string { return c.Params.Get(name) }

// OK reports whether the fake answered the call successfully.
func (c Call) OK() bool { return c.Status == http.StatusOK && c.Error == "" }

// Text concatenates the message's fallback text and every "text" string in
// its blocks (recursively), for contains-style assertions.
func (c Call) Text() string {
	var b strings.Builder
	b.WriteString(c.Param("text"))
	for _, blk := range c.Blocks {
		collectText(&b, blk)
	}
	return b.String()
}

func collectText(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := v[k].(string); ok && k == "text" {
				b.WriteString("\n")
				b.WriteString(s)
				continue
			}
			collectText(b, v[k])
		}
	case []any:
		for _, e := range v {
			collectText(b, e)
		}
	}
}

// Button is an interactive button found in a call's blocks.
type Button struct {
	ActionID string
	Value    string
	Style    string
	Text     string
	// URL is set on link buttons.
	URL     string
	Confirm bool
}

// Buttons returns every button in the call's blocks, in order.
func (c Call) Buttons() []Button {
	var out []Button
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "button" {
				b := Button{}
				b.ActionID, _ = v["action_id"].(string)
				b.Value, _ = v["value"].(string)
				b.Style, _ = v["style"].(string)
				b.URL, _ = v["url"].(string)
				if t, ok := v["text"].(map[string]any); ok {
					b.Text, _ = t["text"].(string)
				}
				_, b.Confirm = v["confirm"]
				out = append(out, b)
				return
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(v[k])
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, blk := range c.Blocks {
		walk(blk)
	}
	return out
}

// Fault scripts an error answer for a Web API method.
type Fault struct {
	// Nth is the 1-based number of the call to this method that fails;
	// 0 means every call.
	Nth int
	// Status 429 answers "rate limited" with RetryAfter seconds.
	Status     int
	RetryAfter int
	// Error answers HTTP 200 {"ok":false,"error":Error}.
	Error string
}

// User is a workspace member served by users.info.
type User struct {
	ID       string
	Name     string
	RealName string
}

// Usergroup is served by usergroups.list and usergroups.users.list.
type Usergroup struct {
	ID      string
	Handle  string
	Name    string
	Members []string
	// ListWithoutUsers leaves the members out of usergroups.list even with
	// include_users, so clients must ask usergroups.users.list.
	ListWithoutUsers bool
}

// Upload is a file received on the upload URL.
type Upload struct {
	FileID   string
	Filename string
	Content  string
	// Completed is set once files.completeUploadExternal shared it.
	Completed bool
	Channel   string
	ThreadTS  string
	Title     string
}

// Option configures a Server.
type Option func(*Server)

// WithAckTimeout sets how long Socket Mode waits for an ack before
// redelivering an envelope once (default 3s, like Slack).
func WithAckTimeout(d time.Duration) Option { return func(s *Server) { s.ackTimeout = d } }

// WithPingInterval sets how often the socket sends websocket pings
// (default 5s).
func WithPingInterval(d time.Duration) Option { return func(s *Server) { s.pingInterval = d } }

// Server is the fake Slack. Create it with New; it closes itself when the
// test ends.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	ackTimeout   time.Duration
	pingInterval time.Duration

	mu       sync.Mutex
	calls    []Call
	counts   map[string]int
	faults   map[string][]Fault
	users    map[string]User
	groups   []Usergroup
	messages map[string]bool // channel/ts of posted messages
	uploads  map[string]*Upload
	seq      int
	changed  chan struct{} // closed and replaced on every recorded change

	sock socketState
}

// New starts a fake Slack on a loopback port.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		t:            t,
		ackTimeout:   3 * time.Second,
		pingInterval: 5 * time.Second,
		counts:       map[string]int{},
		faults:       map[string][]Fault{},
		users:        map[string]User{},
		messages:     map[string]bool{},
		uploads:      map[string]*Upload{},
		changed:      make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	s.sock.init()
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/upload/", s.serveUpload)
	mux.HandleFunc("/socket", s.serveSocket)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// APIURL is the Web API base, ending in /api/, for slack.OptionAPIURL.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// Close stops the server and drops socket connections.
func (s *Server) Close() {
	s.sock.closeAll()
	s.srv.Close()
}

// Inject adds a scripted fault for a method.
func (s *Server) Inject(method string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f)
}

// AddUser registers a user for users.info.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// AddUsergroup registers a user group.
func (s *Server) AddUsergroup(g Usergroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups = append(s.groups, g)
}

// Calls returns the recorded calls to the given methods (all calls when
// none are given), in arrival order.
func (s *Server) Calls(methods ...string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if len(methods) == 0 || contains(methods, c.Method) {
			out = append(out, c)
		}
	}
	return out
}

// Posts returns the successful chat.postMessage calls.
func (s *Server) Posts() []Call {
	var out []Call
	for _, c := range s.Calls("chat.postMessage") {
		if c.OK() {
			out = append(out, c)
		}
	}
	return out
}

// Uploads returns the files received, in upload order.
func (s *Server) Uploads() []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Upload
	for _, u := range s.uploads {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FileID < out[j].FileID })
	return out
}

// WaitFor waits until cond holds over the recorded calls or fails the test
// after timeout.
func (s *Server) WaitFor(t testing.TB, timeout time.Duration, what string, cond func(calls []Call) bool) []Call {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		calls := append([]Call(nil), s.calls...)
		ch := s.changed
		s.mu.Unlock()
		if cond(calls) {
			return calls
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("slackfake: timed out after %s waiting for %s; calls: %s", timeout, what, summarize(calls))
			return nil
		}
	}
}

// WaitCalls waits for at least n successful calls to method and returns
// them.
func (s *Server) WaitCalls(t testing.TB, method string, n int, timeout time.Duration) []Call {
	t.Helper()
	var got []Call
	s.WaitFor(t, timeout, fmt.Sprintf("%d successful %s calls", n, method), func(calls []Call) bool {
		got = got[:0]
		for _, c := range calls {
			if c.Method == method && c.OK() {
				got = append(got, c)
			}
		}
		return len(got) >= n
	})
	return got
}

func summarize(calls []Call) string {
	var parts []string
	for _, c := range calls {
		p := c.Method
		if c.Error != "" {
			p += "(" + c.Error + ")"
		} else if c.Status != http.StatusOK {
			p += "(" + strconv.Itoa(c.Status) + ")"
		}
		parts = append(parts, p)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// notifyLocked wakes WaitFor callers; s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// serveAPI answers one Web API method.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	params, raw, err := readParams(r)
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	call := Call{Method: method, Params: params, At: time.Now()}
	if b := params.Get("blocks"); b != "" {
		_ = json.Unmarshal([]byte(b), &call.Blocks)
	}
	if v, ok := raw["view"].(map[string]any); ok {
		if bl, ok := v["blocks"].([]any); ok {
			for _, e := range bl {
				if m, ok := e.(map[string]any); ok {
					call.Blocks = append(call.Blocks, m)
				}
			}
		}
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = params.Get("token")
	}
	call.Params.Del("token")

	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[method]++
	n := s.counts[method]

	status, body := s.answerLocked(method, n, token, &call, r)
	call.Status = status
	if ok, _ := body["ok"].(bool); !ok {
		call.Error, _ = body["error"].(string)
	}
	s.calls = append(s.calls, call)
	s.notifyLocked()
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(s.retryAfterLocked(method, n)))
	}
	writeJSON(w, status, body)
}

func (s *Server) faultLocked(method string, n int) (Fault, bool) {
	for _, f := range s.faults[method] {
		if f.Nth == 0 || f.Nth == n {
			return f, true
		}
	}
	return Fault{}, false
}

func (s *Server) retryAfterLocked(method string, n int) int {
	f, _ := s.faultLocked(method, n)
	return f.RetryAfter
}

func (s *Server) nextTSLocked() string {
	s.seq++
	return fmt.Sprintf("1700000000.%06d", s.seq*100)
}

func (s *Server) answerLocked(method string, n int, token string, call *Call, r *http.Request) (int, map[string]any) {
	fail := func(code string) (int, map[string]any) {
		return http.StatusOK, map[string]any{"ok": false, "error": code}
	}
	if f, ok := s.faultLocked(method, n); ok {
		if f.Status == http.StatusTooManyRequests {
			return http.StatusTooManyRequests, map[string]any{"ok": false, "error": "ratelimited"}
		}
		if f.Status != 0 && f.Status != http.StatusOK {
			return f.Status, map[string]any{"ok": false, "error": "fake_http_error"}
		}
		return fail(f.Error)
	}
	wantApp := method == "apps.connections.open"
	switch {
	case token == "":
		return fail("not_authed")
	case wantApp && token != AppToken:
		return fail("invalid_auth")
	case !wantApp && token != BotToken:
		return fail("invalid_auth")
	}
	p := call.Params
	ok := func(kv ...any) (int, map[string]any) {
		m := map[string]any{"ok": true}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return http.StatusOK, m
	}
	switch method {
	case "auth.test":
		return ok("url", "https://vigil-fake.slack.com/", "team", "vigil-fake", "user", "vigil",
			"team_id", TeamID, "user_id", BotUserID, "bot_id", BotID)
	case "apps.connections.open":
		return ok("url", "ws"+strings.TrimPrefix(s.srv.URL, "http")+"/socket?ticket="+strconv.Itoa(n))
	case "chat.postMessage":
		ch := p.Get("channel")
		if ch == "" {
			return fail("channel_not_found")
		}
		if p.Get("text") == "" && p.Get("blocks") == "" {
			return fail("no_text")
		}
		if e := blocksError(p.Get("text"), anySlice(call.Blocks)); e != "" {
			return fail(e)
		}
		ts := s.nextTSLocked()
		call.TS = ts
		s.messages[ch+"/"+ts] = true
		msg := map[string]any{"type": "message", "text": p.Get("text"), "ts": ts, "user": BotUserID, "bot_id": BotID}
		if th := p.Get("thread_ts"); th != "" {
			msg["thread_ts"] = th
		}
		return ok("channel", ch, "ts", ts, "message", msg)
	case "chat.update":
		ch, ts := p.Get("channel"), p.Get("ts")
		if !s.messages[ch+"/"+ts] {
			return fail("message_not_found")
		}
		if e := blocksError(p.Get("text"), anySlice(call.Blocks)); e != "" {
			return fail(e)
		}
		call.TS = ts
		return ok("channel", ch, "ts", ts, "text", p.Get("text"))
	case "chat.postEphemeral":
		if p.Get("channel") == "" || p.Get("user") == "" {
			return fail("user_not_in_channel")
		}
		ts := s.nextTSLocked()
		call.TS = ts
		return ok("message_ts", ts)
	case "assistant.threads.setStatus":
		if p.Get("channel_id") == "" || p.Get("thread_ts") == "" {
			return fail("invalid_arguments")
		}
		return ok()
	case "views.open":
		if p.Get("trigger_id") == "" {
			return fail("invalid_trigger_id")
		}
		s.seq++
		return ok("view", map[string]any{"id": fmt.Sprintf("V%06d", s.seq), "type": "modal"})
	case "users.info":
		u, found := s.users[p.Get("user")]
		if !found {
			return fail("user_not_found")
		}
		return ok("user", map[string]any{"id": u.ID, "name": u.Name, "real_name": u.RealName,
			"profile": map[string]any{"real_name": u.RealName, "display_name": u.Name}})
	case "usergroups.list":
		var list []map[string]any
		for _, g := range s.groups {
			e := map[string]any{"id": g.ID, "team_id": TeamID, "handle": g.Handle, "name": g.Name,
				"is_usergroup": true, "user_count": len(g.Members)}
			if p.Get("include_users") == "true" && !g.ListWithoutUsers {
				e["users"] = g.Members
			}
			list = append(list, e)
		}
		return ok("usergroups", list)
	case "usergroups.users.list":
		for _, g := range s.groups {
			if g.ID == p.Get("usergroup") {
				return ok("users", append([]string{}, g.Members...))
			}
		}
		return fail("no_such_subteam")
	case "files.getUploadURLExternal":
		if p.Get("filename") == "" || p.Get("length") == "" {
			return fail("invalid_arguments")
		}
		s.seq++
		id := fmt.Sprintf("F%06d", s.seq)
		s.uploads[id] = &Upload{FileID: id, Filename: p.Get("filename")}
		return ok("upload_url", s.srv.URL+"/upload/"+id, "file_id", id)
	case "files.completeUploadExternal":
		var files []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		}
		if err := json.Unmarshal([]byte(p.Get("files")), &files); err != nil || len(files) == 0 {
			return fail("invalid_arguments")
		}
		var out []map[string]any
		for _, f := range files {
			u, found := s.uploads[f.ID]
			if !found || u.Content == "" {
				return fail("file_not_found")
			}
			u.Completed, u.Channel, u.ThreadTS, u.Title = true, p.Get("channel_id"), p.Get("thread_ts"), f.Title
			out = append(out, map[string]any{"id": f.ID, "title": f.Title})
		}
		return ok("files", out)
	}
	return fail("unknown_method")
}

// serveUpload receives a file on the URL files.getUploadURLExternal handed
// out.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	content, err := readUpload(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	u, found := s.uploads[id]
	if !found || err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	u.Content = content
	s.notifyLocked()
	_, _ = fmt.Fprintf(w, "OK - %d", len(content))
}

func readUpload(r *http.Request) (string, error) {
	if r.Method != http.MethodPost {
		return "", fmt.Errorf("method %s", r.Method)
	}
	mt, mp, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(r.Body, mp["boundary"])
		for {
			part, err := mr.NextPart()
			if err != nil {
				return "", fmt.Errorf("no file part: %w", err)
			}
			if part.FormName() == "file" {
				b, err := io.ReadAll(part)
				return string(b), err
			}
		}
	}
	b, err := io.ReadAll(r.Body)
	return string(b), err
}

// readParams decodes form and JSON bodies into flat parameters; raw holds
// the decoded JSON object, if any.
func readParams(r *http.Request) (url.Values, map[string]any, error) {
	params := url.Values{}
	for k, v := range r.URL.Query() {
		params[k] = v
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		var raw map[string]any
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, nil, err
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, &raw); err != nil {
				return nil, nil, err
			}
		}
		for k, v := range raw {
			if s, ok := v.(string); ok {
				params.Set(k, s)
				continue
			}
			b, _ := json.Marshal(v)
			params.Set(k, string(b))
		}
		return params, raw, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, nil, err
	}
	for k, v := range r.PostForm {
		params[k] = v
	}
	return params, nil, nil
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
