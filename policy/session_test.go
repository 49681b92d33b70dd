package policy

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestSessionNew(t *testing.T) {
	s := NewSessionState()
	if s.FSM == nil || s.Context == nil {
		t.Fatalf("NewSessionState() = %+v", s)
	}
	if s.FSM.State != StateResolving || !s.Context.Empty(t0) {
		t.Fatal("new session is not at its start")
	}
}

// busySession is a session mid-run: resolved, explicitly mentioned, pinned,
// written and not yet verified, with a pending recovery.
func busySession() *SessionState {
	s := NewSessionState()
	s.Context.Add(delly, t0)
	s.Context.AddExplicit(homepage, t0.Add(time.Minute))
	s.Context.Pin(homepage.ID)
	s.FSM.OnToolSuccess(KindResolve, "query", "")
	s.FSM.TrackPendingRecovery(CodeRoutingMismatch, "file_edit")
	s.FSM.OnToolSuccess(KindWrite, "file_edit", "homepage-docker")
	return s
}

func TestSessionResetIsCoherent(t *testing.T) {
	s := busySession()
	s.Reset()
	fresh := NewSessionState()
	fresh.FSM.RecoverySeq = s.FSM.RecoverySeq // IDs keep counting up
	if !reflect.DeepEqual(s.FSM, fresh.FSM) {
		t.Fatalf("FSM after Reset = %+v", s.FSM)
	}
	got, _ := json.Marshal(s)
	want, _ := json.Marshal(fresh)
	if string(got) != string(want) {
		t.Fatalf("after Reset %s, want %s", got, want)
	}
	// Nothing of the old session lets a write through: the FSM is back in
	// RESOLVING, and even past gate 1 the old target is unresolved.
	if s.FSM.CanExecute(KindWrite) == nil {
		t.Fatal("write allowed by the FSM after Reset")
	}
	if s.Context.CheckWrite("homepage-docker", t0) == nil {
		t.Fatal("pinned resource survived Reset")
	}
}

func TestSessionResetRepairsMissingParts(t *testing.T) {
	s := &SessionState{}
	s.Reset()
	if s.FSM == nil || s.Context == nil || s.FSM.State != StateResolving {
		t.Fatalf("Reset of an empty SessionState = %+v", s)
	}
}

func TestSessionJSONRoundTrip(t *testing.T) {
	s := busySession()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got SessionState
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("unmarshal: %v\n%s", err, data)
	}
	if !reflect.DeepEqual(got.FSM, s.FSM) {
		t.Fatalf("FSM changed:\n got %+v\nwant %+v", got.FSM, s.FSM)
	}
	again, _ := json.Marshal(&got)
	if string(again) != string(data) {
		t.Fatalf("round trip changed the session:\n got %s\nwant %s", again, data)
	}
	// The resumed session enforces what the saved one did.
	at := t0.Add(2 * time.Minute)
	if got.FSM.CanFinalAnswer() == nil {
		t.Error("resumed session forgot the unverified write")
	}
	assertGuardBlock(t, got.Context.CheckWrite("delly", at), CodeRoutingMismatch, true, "homepage-docker")
}

// A run persisted inside a larger record, as the agent does.
func TestSessionJSONEmbedded(t *testing.T) {
	type run struct {
		ID     string        `json:"id"`
		Policy *SessionState `json:"policy"`
	}
	in := run{ID: "r1", Policy: busySession()}
	data, _ := json.Marshal(in)
	var out run
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(out)
	if string(again) != string(data) {
		t.Fatalf("got %s\nwant %s", again, data)
	}
}

func TestSessionJSONMissingPartsComeBackFresh(t *testing.T) {
	for _, in := range []string{`{}`, `{"fsm":null,"context":null}`, `{"fsm":{"state":"READING"}}`} {
		var s SessionState
		if err := json.Unmarshal([]byte(in), &s); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if s.FSM == nil || s.Context == nil {
			t.Fatalf("%s: nil part after unmarshal: %+v", in, s)
		}
		if !s.Context.Empty(t0) {
			t.Fatalf("%s: context not empty", in)
		}
	}
	var s SessionState
	if err := json.Unmarshal([]byte(`null`), &s); err != nil || s.FSM != nil {
		t.Fatalf("null: err %v, %+v", err, s)
	}
}

func TestSessionJSONRejectsDamage(t *testing.T) {
	for _, in := range []string{
		`{"fsm":{"state":"DONE"}}`,
		`{"context":{"ttl":"soon","max_entries":1,"entries":[]}}`,
		`{"fsm":[]}`,
	} {
		var s SessionState
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("accepted %s", in)
		}
	}
}
