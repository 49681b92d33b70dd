package policy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy/audit"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/policy/redact"
)

var aT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTestApproval(t *testing.T) *Approval {
	t.Helper()
	a, err := NewApproval(ApprovalRequest{
		Tool:      "control",
		Args:      json.RawMessage(`{"target": "web1", "action": "restart", "service": "nginx"}`),
		Target:    "web1",
		Command:   "systemctl restart nginx",
		Summary:   "restart nginx on web1",
		Risk:      command.RiskMedium,
		Reasons:   []string{"systemctl restart changes state"},
		Requester: "U_REQ",
		Channel:   "slack:C1",
		Thread:    "slack:C1:1700000000.000100",
	}, aT0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNewApproval(t *testing.T) {
	a := newTestApproval(t)
	if a.Status != ApprovalPending {
		t.Errorf("status %q", a.Status)
	}
	if got := a.ExpiresAt.Sub(a.CreatedAt); got != DefaultApprovalTTL {
		t.Errorf("TTL %s, want the 10m default", got)
	}
	if id, err := ParseApprovalID(a.ID); err != nil || id != a.ID {
		t.Errorf("ID %q is not typable: %v", a.ID, err)
	}
	tok, err := base64.RawURLEncoding.DecodeString(a.Token)
	if err != nil || len(tok) != 32 {
		t.Errorf("token %d bytes, err %v; want 256 bits", len(tok), err)
	}
	if want := `{"action":"restart","service":"nginx","target":"web1"}`; string(a.Args) != want {
		t.Errorf("args %s, want canonical %s", a.Args, want)
	}
	if a.Hash != BindingHash("control", a.Args) || len(a.Hash) != 64 {
		t.Errorf("hash %q", a.Hash)
	}

	seen := map[string]bool{}
	for range 500 {
		b := newTestApproval(t)
		if seen[b.ID] || seen[b.Token] {
			t.Fatal("ID or token repeated")
		}
		seen[b.ID], seen[b.Token] = true, true
	}
}

func TestNewApprovalRequestChecks(t *testing.T) {
	ok := ApprovalRequest{Tool: "control", Requester: "U1", Channel: "slack:C1"}
	a, err := NewApproval(ok, aT0)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.Args) != "{}" {
		t.Errorf("empty args became %s, want {}", a.Args)
	}
	ok.TTL = time.Minute
	if a, _ := NewApproval(ok, aT0); !a.ExpiresAt.Equal(aT0.Add(time.Minute)) {
		t.Errorf("TTL ignored: %s", a.ExpiresAt)
	}
	for name, mut := range map[string]func(*ApprovalRequest){
		"no tool":      func(r *ApprovalRequest) { r.Tool = "" },
		"no requester": func(r *ApprovalRequest) { r.Requester = "" },
		"no channel":   func(r *ApprovalRequest) { r.Channel = "" },
		"negative ttl": func(r *ApprovalRequest) { r.TTL = -time.Second },
		"bad json":     func(r *ApprovalRequest) { r.Args = json.RawMessage(`{"a":`) },
		"dup key":      func(r *ApprovalRequest) { r.Args = json.RawMessage(`{"a":1,"a":2}`) },
	} {
		r := ok
		mut(&r)
		if _, err := NewApproval(r, aT0); !errors.Is(err, ErrInvalidApproval) {
			t.Errorf("%s: err %v, want ErrInvalidApproval", name, err)
		}
	}
}

func TestApprovalRedactsDisplayNotBinding(t *testing.T) {
	args := `{"command":"mysql -uroot -phunter2 -e 'DROP TABLE x'"}`
	a, err := NewApproval(ApprovalRequest{
		Tool: "control", Args: json.RawMessage(args), Requester: "U1", Channel: "slack:C1",
		Command: "mysql -uroot -phunter2 -e 'DROP TABLE x'", Summary: "password=hunter2",
		Reasons: []string{"token=abc123"},
	}, aT0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append([]string{a.Command, a.Summary}, a.Reasons...) {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "abc123") {
			t.Errorf("display field not redacted: %q", s)
		}
	}
	if err := a.Binds("control", json.RawMessage(args)); err != nil {
		t.Errorf("the exact call must still bind: %v", err)
	}
}

func TestApprovalBinds(t *testing.T) {
	a := newTestApproval(t)
	tests := []struct {
		name string
		tool string
		args string
		ok   bool
	}{
		{"same call", "control", `{"target":"web1","action":"restart","service":"nginx"}`, true},
		{"keys reordered", "control", `{"service":"nginx","action":"restart","target":"web1"}`, true},
		{"whitespace", "control", "{\n  \"action\" : \"restart\",\t\"service\":\"nginx\", \"target\":\"web1\"\n}\n", true},
		{"escaped equivalently", "control", `{"action":"\u0072estart","service":"nginx","target":"web1"}`, true},
		{"different value", "control", `{"target":"web2","action":"restart","service":"nginx"}`, false},
		{"added field", "control", `{"target":"web1","action":"restart","service":"nginx","force":true}`, false},
		{"removed field", "control", `{"target":"web1","action":"restart"}`, false},
		{"type changed", "control", `{"target":"web1","action":"restart","service":["nginx"]}`, false},
		{"different tool", "exec", `{"target":"web1","action":"restart","service":"nginx"}`, false},
		{"invalid json", "control", `{"target":"web1"`, false},
		{"duplicate key smuggling", "control", `{"target":"web2","target":"web1","action":"restart","service":"nginx"}`, false},
		{"trailing data", "control", `{"target":"web1","action":"restart","service":"nginx"} {}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := a.Binds(tt.tool, json.RawMessage(tt.args))
			if tt.ok && err != nil {
				t.Errorf("Binds = %v, want nil", err)
			}
			if !tt.ok && !errors.Is(err, ErrBindingMismatch) {
				t.Errorf("Binds = %v, want ErrBindingMismatch", err)
			}
		})
	}

	t.Run("record tampered in the store", func(t *testing.T) {
		b := *a
		b.Args = json.RawMessage(`{"action":"restart","service":"nginx","target":"db1"}`)
		if err := b.Binds("control", b.Args); !errors.Is(err, ErrBindingMismatch) {
			t.Errorf("Binds on altered args = %v, want ErrBindingMismatch", err)
		}
	})
	t.Run("numbers as written", func(t *testing.T) {
		n, err := NewApproval(ApprovalRequest{Tool: "scale", Args: json.RawMessage(`{"replicas":1}`), Requester: "U", Channel: "c:1"}, aT0)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Binds("scale", json.RawMessage(`{"replicas": 1}`)); err != nil {
			t.Errorf("same number: %v", err)
		}
		for _, other := range []string{`{"replicas":1.0}`, `{"replicas":"1"}`, `{"replicas":10}`, `{"replicas":1e0}`} {
			if err := n.Binds("scale", json.RawMessage(other)); err == nil {
				t.Errorf("%s bound an approval for 1", other)
			}
		}
	})
	t.Run("after a store round trip", func(t *testing.T) {
		raw, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		var b Approval
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*a, b) {
			t.Errorf("round trip changed the approval:\n%+v\n%+v", *a, b)
		}
		if err := b.Binds("control", json.RawMessage(`{"service":"nginx","action":"restart","target":"web1"}`)); err != nil {
			t.Error(err)
		}
	})
}

func TestApprovalTokenMatches(t *testing.T) {
	a := newTestApproval(t)
	if !a.TokenMatches(a.Token) {
		t.Error("own token refused")
	}
	for _, tok := range []string{"", "forged", a.Token[:len(a.Token)-1], a.Token + "x", strings.ToUpper(a.Token)} {
		if tok != a.Token && a.TokenMatches(tok) {
			t.Errorf("token %q accepted", tok)
		}
	}
	if (&Approval{}).TokenMatches("") {
		t.Error("empty token matched an empty record")
	}
}

func TestApprovalLogValueHidesToken(t *testing.T) {
	a := newTestApproval(t)
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("decided", "approval", a)
	if strings.Contains(buf.String(), a.Token) || !strings.Contains(buf.String(), a.ID) {
		t.Errorf("log line %q", buf.String())
	}
}

func TestParseApprovalID(t *testing.T) {
	if id, err := ParseApprovalID("  K3XQ7M2A9P\n"); err == nil {
		t.Errorf("9 is not base32, got %q", id)
	}
	if id, err := ParseApprovalID(" K3XQ7M2A7P "); err != nil || id != "k3xq7m2a7p" {
		t.Errorf("got %q, %v", id, err)
	}
	for _, bad := range []string{"", "short", "k3xq7m2a7pp", "k3xq7m2a7*", "../../etc", "k3xq7m2a7\u00e9"} {
		if _, err := ParseApprovalID(bad); !errors.Is(err, ErrApprovalIDInvalid) {
			t.Errorf("ParseApprovalID(%q) = %v", bad, err)
		}
	}
}

func TestCheckDecision(t *testing.T) {
	base := newTestApproval(t)
	now := aT0.Add(time.Minute)
	approver := DecisionRequest{
		User: "U_BOSS", Token: base.Token, FromButton: true, Approve: true,
		Roles:   RoleSet{Viewer: true, Operator: true, Approver: true},
		Channel: "slack:C1", Level: LevelControlled,
	}
	decided := func(status ApprovalStatus) func(*Approval) {
		return func(a *Approval) {
			a.Status, a.DecidedBy, a.DecidedAt = status, "U_BOSS", aT0.Add(30*time.Second)
		}
	}
	tests := []struct {
		name    string
		mutA    func(*Approval)
		mutD    func(*DecisionRequest)
		now     time.Time
		want    error
		wantMsg string
	}{
		{name: "button approve", want: nil},
		{name: "typed approve without token", mutD: func(d *DecisionRequest) { d.Token, d.FromButton = "", false }},
		{name: "deny", mutD: func(d *DecisionRequest) { d.Approve, d.Reason = false, "not now" }},
		{name: "forged token on a typed command", mutD: func(d *DecisionRequest) { d.Token, d.FromButton = "forged", false }, want: ErrTokenMismatch},
		{name: "wrong token on a button", mutD: func(d *DecisionRequest) { d.Token = newTestApproval(t).Token }, want: ErrTokenMismatch},
		{name: "button without token is forged", mutD: func(d *DecisionRequest) { d.Token = "" }, want: ErrTokenMissing},
		{name: "other channel", mutD: func(d *DecisionRequest) { d.Channel = "slack:C2" }, want: ErrWrongChannel},
		{name: "read-only channel", mutD: func(d *DecisionRequest) { d.Level = LevelReadOnly }, want: ErrReadOnlyChannel},
		{name: "read-only channel refuses a deny too", mutD: func(d *DecisionRequest) { d.Level, d.Approve = LevelReadOnly, false }, want: ErrReadOnlyChannel},
		{name: "unknown level fails closed", mutD: func(d *DecisionRequest) { d.Level = "" }, want: ErrReadOnlyChannel},
		{name: "operator is not an approver", mutD: func(d *DecisionRequest) { d.Roles.Approver = false }, want: ErrNotApprover},
		{name: "deny needs the approver role", mutD: func(d *DecisionRequest) { d.Roles.Approver, d.Approve = false, false }, want: ErrNotApprover},
		{name: "expired", now: base.ExpiresAt, want: ErrApprovalExpired, wantMsg: "approval expired at 2026-03-01 12:10:00 UTC"},
		{name: "self-approval with four eyes", mutD: func(d *DecisionRequest) { d.User = "U_REQ" }, want: ErrSelfApproval},
		{name: "self-approval allowed", mutD: func(d *DecisionRequest) { d.User, d.AllowSelfApproval = "U_REQ", true }},
		{name: "denying your own request", mutD: func(d *DecisionRequest) { d.User, d.Approve = "U_REQ", false }},
		{name: "stop by the requester, who is no approver", mutD: func(d *DecisionRequest) {
			d.User, d.Approve, d.Stop, d.Token, d.FromButton, d.Roles = "U_REQ", false, true, "", false, RoleSet{Viewer: true}
		}},
		{name: "stop by an operator", mutD: func(d *DecisionRequest) {
			d.User, d.Approve, d.Stop, d.Token, d.FromButton, d.Roles = "U_OP", false, true, "", false, RoleSet{Viewer: true, Operator: true}
		}},
		{name: "stop by an approver", mutD: func(d *DecisionRequest) { d.Approve, d.Stop, d.Token, d.FromButton = false, true, "", false }},
		{name: "stop by a bystander", want: ErrMayNotStop, mutD: func(d *DecisionRequest) {
			d.User, d.Approve, d.Stop, d.Token, d.FromButton, d.Roles = "U_ANY", false, true, "", false, RoleSet{Viewer: true}
		}},
		{name: "stop in a channel made read-only still withdraws", mutD: func(d *DecisionRequest) {
			d.User, d.Approve, d.Stop, d.Token, d.FromButton, d.Level = "U_REQ", false, true, "", false, LevelReadOnly
		}},
		{name: "a stop never approves", want: ErrInvalidApproval, mutD: func(d *DecisionRequest) { d.Stop, d.Token, d.FromButton = true, "", false }},
		{name: "stop of a decided approval", mutA: decided(ApprovalApproved), want: ErrAlreadyDecided, mutD: func(d *DecisionRequest) {
			d.User, d.Approve, d.Stop, d.Token, d.FromButton = "U_REQ", false, true, "", false
		}},
		{name: "already approved", mutA: decided(ApprovalApproved), want: ErrAlreadyDecided,
			wantMsg: "already approved by U_BOSS at 2026-03-01 12:00:30 UTC"},
		{name: "being executed", mutA: decided(ApprovalExecuting), want: ErrAlreadyDecided,
			wantMsg: "already approved by U_BOSS at 2026-03-01 12:00:30 UTC"},
		{name: "already denied", mutA: decided(ApprovalDenied), want: ErrAlreadyDecided,
			wantMsg: "already denied by U_BOSS at 2026-03-01 12:00:30 UTC"},
		{name: "expired by the sweeper", mutA: decided(ApprovalExpired), want: ErrApprovalExpired,
			wantMsg: "expired at 2026-03-01 12:10:00 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, d := *base, approver
			if tt.mutA != nil {
				tt.mutA(&a)
			}
			if tt.mutD != nil {
				tt.mutD(&d)
			}
			at := now
			if !tt.now.IsZero() {
				at = tt.now
			}
			err := CheckDecision(&a, d, at)
			switch {
			case tt.want == nil && err != nil:
				t.Fatalf("CheckDecision = %v, want nil", err)
			case tt.want != nil && !errors.Is(err, tt.want):
				t.Fatalf("CheckDecision = %v, want %v", err, tt.want)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("message %q, want %q", err, tt.wantMsg)
			}
			if err != nil && strings.Contains(err.Error(), base.Token) {
				t.Error("error message shows the token")
			}
		})
	}
	console := *base
	console.Channel = ConsoleChannel
	self := approver
	self.User, self.Channel = "U_REQ", ConsoleChannel
	if err := CheckDecision(&console, self, now); err != nil {
		t.Errorf("the console's single user approving their own request: %v", err)
	}
	if err := CheckDecision(nil, approver, now); !errors.Is(err, ErrApprovalNotFound) {
		t.Errorf("nil approval: %v", err)
	}
}

// TestDecisionReplay: the same click delivered twice, and a second approver
// clicking after the first, both get told who decided and when.
func TestDecisionReplay(t *testing.T) {
	a := newTestApproval(t)
	d := DecisionRequest{User: "U_BOSS", Token: a.Token, FromButton: true, Approve: true,
		Roles: RoleSet{Approver: true}, Channel: "slack:C1", Level: LevelControlled}
	at := aT0.Add(2 * time.Minute)
	if err := CheckDecision(a, d, at); err != nil {
		t.Fatal(err)
	}
	a, err := Decide(d, at).Apply(a)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != ApprovalApproved || a.DecidedBy != "U_BOSS" || !a.DecidedAt.Equal(at) {
		t.Fatalf("Decide: %+v", a)
	}
	for _, second := range []DecisionRequest{d, {User: "U_OTHER", Approve: false, Roles: RoleSet{Approver: true}, Channel: "slack:C1", Level: LevelControlled}} {
		err := CheckDecision(a, second, at.Add(time.Second))
		var de *DecidedError
		if !errors.As(err, &de) || !errors.Is(err, ErrAlreadyDecided) {
			t.Fatalf("second decision: %v", err)
		}
		if want := "already approved by U_BOSS at 2026-03-01 12:02:00 UTC"; err.Error() != want {
			t.Errorf("got %q, want %q", err, want)
		}
	}

	if err := a.StatusError(); err == nil || err.Error() != "already approved by U_BOSS at 2026-03-01 12:02:00 UTC" {
		t.Errorf("StatusError after approval: %v", err)
	}
	if err := newTestApproval(t).StatusError(); err != nil {
		t.Errorf("StatusError of a pending approval: %v", err)
	}

	b := newTestApproval(t)
	deny := d
	deny.Approve, deny.Reason, deny.Token = false, "change freeze; password=hunter2", b.Token
	b, err = Decide(deny, at).Apply(b)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != ApprovalDenied || strings.Contains(b.Reason, "hunter2") {
		t.Errorf("deny recorded as %+v", b)
	}
	d.Token = b.Token
	if err := CheckDecision(b, d, at); err == nil || err.Error() != "already denied by U_BOSS at 2026-03-01 12:02:00 UTC" {
		t.Errorf("after deny: %v", err)
	}
}

func TestApprovalExecution(t *testing.T) {
	base := newTestApproval(t)
	base.Status, base.DecidedBy, base.DecidedAt = ApprovalApproved, "U_BOSS", aT0.Add(time.Minute)
	args := json.RawMessage(`{"service":"nginx","target":"web1","action":"restart"}`)
	now := aT0.Add(2 * time.Minute)
	tests := []struct {
		name   string
		status ApprovalStatus
		tool   string
		args   string
		level  ControlLevel
		now    time.Time
		want   error
	}{
		{name: "approved", status: ApprovalApproved},
		{name: "claimed for execution", status: ApprovalExecuting},
		{name: "autonomous now", level: LevelAutonomous},
		{name: "pending", status: ApprovalPending, want: ErrNotApproved},
		{name: "denied", status: ApprovalDenied, want: ErrNotApproved},
		{name: "expired", status: ApprovalExpired, want: ErrNotApproved},
		{name: "already executed", status: ApprovalExecuted, want: ErrAlreadyDecided},
		{name: "arguments changed", args: `{"service":"nginx","target":"web2","action":"restart"}`, want: ErrBindingMismatch},
		{name: "field added", args: `{"service":"nginx","target":"web1","action":"restart","all":true}`, want: ErrBindingMismatch},
		{name: "tool changed", tool: "exec", want: ErrBindingMismatch},
		{name: "channel became read-only", level: LevelReadOnly, want: ErrReadOnlyChannel},
		{name: "within the grace", now: base.ExpiresAt.Add(ExecutionGrace)},
		{name: "past the grace", now: base.ExpiresAt.Add(ExecutionGrace + time.Second), want: ErrApprovalExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := *base
			if tt.status != "" {
				a.Status = tt.status
			}
			tool, call, level, at := "control", args, LevelControlled, now
			if tt.tool != "" {
				tool = tt.tool
			}
			if tt.args != "" {
				call = json.RawMessage(tt.args)
			}
			if tt.level != "" {
				level = tt.level
			}
			if !tt.now.IsZero() {
				at = tt.now
			}
			err := CheckExecution(&a, tool, call, level, at)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("CheckExecution = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestCanonicalJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "z" : [ 3 , 2 , {"y":null,"x":true} ] , "a" : "s" } `, `{"a":"s","z":[3,2,{"x":true,"y":null}]}`},
		{`1.50`, `1.50`},
		{`-0`, `-0`},
		{`1E+10`, `1E+10`},
		{`123456789012345678901234567890`, `123456789012345678901234567890`},
		{`"a<b>&c"`, `"a<b>&c"`},
		{`"\u00e9\n\"\\"`, `"é\n\"\\"`},
		{`"\/"`, `"/"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`{"é":1,"e":2,"Z":3}`, `{"Z":3,"e":2,"é":1}`},
	}
	for _, tt := range tests {
		got, err := CanonicalJSON(json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("CanonicalJSON(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{``, ` `, `{`, `{"a":1,"a":1}`, `[1,]`, `{"a":1}x`, `{"a":1}{"b":2}`, `nul`, `'a'`,
		strings.Repeat("[", maxJSONDepth+2) + strings.Repeat("]", maxJSONDepth+2)} {
		if got, err := CanonicalJSON(json.RawMessage(bad)); err == nil {
			t.Errorf("CanonicalJSON(%q) = %s, want an error", bad, got)
		}
	}
}

// randomJSON builds a random JSON value and writes it twice: once with keys
// in one random order and random whitespace, once in another.
func randomJSON(r *rand.Rand, depth int) any {
	switch k := r.IntN(7); {
	case depth > 3 || k == 0:
		return []any{nil, true, false}[r.IntN(3)]
	case k == 1:
		return json.Number([]string{"0", "-1", "3.25", "1e9", "12345678901234567890", "2.50"}[r.IntN(6)])
	case k == 2:
		return []string{"", "a", "é", "quote\"", "tab\t", "<&>", "\u2028", "emoji 🙂"}[r.IntN(8)]
	case k == 3 || k == 4:
		m := map[string]any{}
		for i := range r.IntN(5) {
			m["k"+strconv.Itoa(r.IntN(10))+string(rune('a'+i))] = randomJSON(r, depth+1)
		}
		return m
	default:
		n := r.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomJSON(r, depth+1)
		}
		return a
	}
}

func writeRandomly(r *rand.Rand, b *bytes.Buffer, v any) {
	ws := func() {
		b.WriteString([]string{"", " ", "\n", "\t ", "  \r\n"}[r.IntN(5)])
	}
	ws()
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			kb, _ := json.Marshal(k) // HTML-escaped: a different spelling of the same key
			b.Write(kb)
			ws()
			b.WriteByte(':')
			writeRandomly(r, b, t[k])
		}
		ws()
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeRandomly(r, b, e)
		}
		ws()
		b.WriteByte(']')
	default:
		vb, _ := json.Marshal(t)
		b.Write(vb)
	}
	ws()
}

// TestCanonicalJSONProperties: any two spellings of one value have the same
// canonical form; the form is a fixed point, valid JSON, and decodes to the
// same value.
func TestCanonicalJSONProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		v := randomJSON(r, 0)
		var x, y bytes.Buffer
		writeRandomly(r, &x, v)
		writeRandomly(r, &y, v)
		cx, err := CanonicalJSON(x.Bytes())
		if err != nil {
			t.Fatalf("case %d: %s: %v", i, x.Bytes(), err)
		}
		cy, err := CanonicalJSON(y.Bytes())
		if err != nil {
			t.Fatalf("case %d: %s: %v", i, y.Bytes(), err)
		}
		if !bytes.Equal(cx, cy) {
			t.Fatalf("case %d: two spellings, two forms:\n%s\n%s\n→ %s\n→ %s", i, x.Bytes(), y.Bytes(), cx, cy)
		}
		checkCanonical(t, x.Bytes(), cx)
	}
}

func checkCanonical(t *testing.T, in, c []byte) {
	t.Helper()
	again, err := CanonicalJSON(c)
	if err != nil || !bytes.Equal(again, c) {
		t.Fatalf("not a fixed point: %s → %s (%v)", c, again, err)
	}
	var a, b any
	if err := decodeNumbers(in, &a); err != nil {
		t.Fatal(err)
	}
	if err := decodeNumbers(c, &b); err != nil {
		t.Fatalf("canonical form %s is not JSON: %v", c, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("meaning changed: %s → %s", in, c)
	}
	if bytes.ContainsAny(c, "\n\t\r") {
		t.Fatalf("whitespace left in %q", c)
	}
}

func decodeNumbers(b []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[true,null,"x"]}`, `"\u00e9"`, `1e5`, `[{}]`, `{"a":{"b":{"c":-0.0}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := CanonicalJSON(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		checkCanonical(t, in, c)
	})
}

func ExampleCanonicalJSON() {
	c, _ := CanonicalJSON(json.RawMessage(`{ "target": "web1", "action": "restart" }`))
	fmt.Println(string(c))
	// Output: {"action":"restart","target":"web1"}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"password=hunter2", "Authorization: Bearer abc123def", "postgres://a:b@c/d",
		"-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", `{"token": "x1"}`, "ghp_" + strings.Repeat("a", 36)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := redact.String(in)
		if again := redact.String(out); again != out {
			t.Fatalf("not idempotent:\n in %q\nout %q\nagain %q", in, out, again)
		}
	})
}

func TestApprovalAuditRecord(t *testing.T) {
	a := newTestApproval(t)
	r := a.AuditRecord(audit.ApprovalRequested, a.Requester, aT0)
	if r.ApprovalID != a.ID || r.Tool != "control" || r.Command != a.Command || r.Channel != "slack:C1" || r.Actor != "U_REQ" {
		t.Errorf("%+v", r)
	}
}
