package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// fsmIn returns an FSM in state s as a run would have it: VERIFYING and
// WRITING carry the write that led there.
func fsmIn(s State) *FSM {
	f := NewFSM()
	f.State = s
	if s == StateVerifying || s == StateWriting {
		f.LastWriteTool, f.LastWriteTarget, f.WroteThisEpisode = "control", "jellyfin", true
	}
	return f
}

func TestFSMNewStartsResolving(t *testing.T) {
	f := NewFSM()
	if f.State != StateResolving || f.ReadAfterWrite || f.WroteThisEpisode || f.PendingRecoveries != nil {
		t.Fatalf("NewFSM() = %+v, want a clean RESOLVING FSM", f)
	}
}

// TestFSMGate1 covers CanExecute for every state and kind.
func TestFSMGate1(t *testing.T) {
	const unknown = Kind("delete")
	tests := []struct {
		state    State
		kind     Kind
		blocked  bool
		autoRecv bool
		hint     string
	}{
		{StateResolving, KindResolve, false, false, ""},
		{StateResolving, KindRead, false, false, ""},
		{StateResolving, KindWrite, true, true, "query or discover"},
		{StateResolving, unknown, true, true, "query or discover"},
		{StateReading, KindResolve, false, false, ""},
		{StateReading, KindRead, false, false, ""},
		{StateReading, KindWrite, false, false, ""},
		{StateReading, unknown, false, false, ""},
		{StateWriting, KindResolve, false, false, ""},
		{StateWriting, KindRead, false, false, ""},
		{StateWriting, KindWrite, true, false, "read tool to check the result"},
		{StateVerifying, KindResolve, false, false, ""},
		{StateVerifying, KindRead, false, false, ""},
		{StateVerifying, KindWrite, true, false, "read tool to check the result"},
		{StateVerifying, unknown, true, false, "read tool to check the result"},
		{"", KindRead, false, false, ""},
		{"", KindWrite, true, true, "query or discover"},
		{State("BOGUS"), KindRead, false, false, ""},
		{State("BOGUS"), KindWrite, true, false, "read tool"},
	}
	for _, tt := range tests {
		t.Run(string(tt.state)+"/"+string(tt.kind), func(t *testing.T) {
			b := fsmIn(tt.state).CanExecute(tt.kind)
			if !tt.blocked {
				if b != nil {
					t.Fatalf("CanExecute = %v, want allowed", b)
				}
				return
			}
			assertGuardBlock(t, b, CodeFSMBlocked, tt.autoRecv, tt.hint)
		})
	}
}

// TestFSMTransitions covers OnToolSuccess for every state and kind.
func TestFSMTransitions(t *testing.T) {
	tests := []struct {
		from State
		kind Kind
		want State
	}{
		{StateResolving, KindResolve, StateReading},
		{StateResolving, KindRead, StateReading},
		{StateResolving, KindWrite, StateVerifying},
		{StateReading, KindResolve, StateReading},
		{StateReading, KindRead, StateReading},
		{StateReading, KindWrite, StateVerifying},
		{StateReading, Kind("mystery"), StateVerifying},
		{StateWriting, KindResolve, StateWriting},
		{StateWriting, KindRead, StateReading},
		{StateWriting, KindWrite, StateVerifying},
		{StateVerifying, KindResolve, StateVerifying},
		{StateVerifying, KindRead, StateReading},
		{StateVerifying, KindWrite, StateVerifying},
		{"", KindResolve, StateReading},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"/"+string(tt.kind), func(t *testing.T) {
			f := fsmIn(tt.from)
			f.OnToolSuccess(tt.kind, "tool", "target")
			if f.State != tt.want {
				t.Fatalf("state = %s, want %s", f.State, tt.want)
			}
			if f.ReadAfterWrite {
				t.Fatal("ReadAfterWrite left set after OnToolSuccess")
			}
			if normalKind(tt.kind) == KindWrite {
				if f.LastWriteTool != "tool" || f.LastWriteTarget != "target" || !f.WroteThisEpisode {
					t.Fatalf("write not recorded: %+v", f)
				}
			}
		})
	}
}

func TestFSMGate2(t *testing.T) {
	for _, s := range []State{StateResolving, StateReading} {
		if b := fsmIn(s).CanFinalAnswer(); b != nil {
			t.Errorf("%s: CanFinalAnswer = %v, want allowed", s, b)
		}
	}
	for _, s := range []State{StateVerifying, StateWriting} {
		b := fsmIn(s).CanFinalAnswer()
		assertGuardBlock(t, b, CodeFSMBlocked, false, "verification required: read or check jellyfin before answering")
	}
}

func TestFSMVerificationPrompt(t *testing.T) {
	tests := []struct {
		name string
		f    *FSM
		want string
	}{
		{"not verifying", fsmIn(StateReading), ""},
		{"target", &FSM{State: StateVerifying, LastWriteTool: "control", LastWriteTarget: "nginx"},
			"verification required: read or check nginx before answering"},
		{"tool only", &FSM{State: StateVerifying, LastWriteTool: "alerts"},
			"verification required: read or check alerts before answering"},
		{"nothing known", &FSM{State: StateVerifying},
			"verification required: read or check the result of the last write before answering"},
	}
	for _, tt := range tests {
		if got := tt.f.VerificationPrompt(); got != tt.want {
			t.Errorf("%s: VerificationPrompt() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// step is one move in a regression sequence: a tool call that must be
// allowed (or blocked) and, when allowed, succeeds.
type step struct {
	tool, action, target string
	blocked              bool
	after                State
}

// toolKinds are the built-in tools' declarations as the FSM tests use them;
// the tools package tests the real declarations.
var toolKinds = map[string]ActionKinds{
	"query":     {Every: KindResolve},
	"discover":  {Every: KindResolve},
	"metrics":   {Every: KindRead},
	"control":   {Every: KindWrite},
	"read":      {Actions: map[string]Kind{"exec": KindRead, "file": KindRead, "find": KindRead, "tail": KindRead, "logs": KindRead}},
	"file_edit": {Actions: map[string]Kind{"read": KindRead, "write": KindWrite, "append": KindWrite}},
}

func kindOf(tool, action string) Kind { return toolKinds[tool].KindOf(action) }

// runSteps drives an FSM the way the agent does: classify, gate 1, execute,
// OnToolSuccess.
func runSteps(t *testing.T, f *FSM, steps []step) {
	t.Helper()
	for i, s := range steps {
		k := kindOf(s.tool, s.action)
		b := f.CanExecute(k)
		if s.blocked != (b != nil) {
			t.Fatalf("step %d %s %s: CanExecute = %v, want blocked=%v", i, s.tool, s.action, b, s.blocked)
		}
		if b == nil {
			f.OnToolSuccess(k, s.tool, s.target)
		}
		if f.State != s.after {
			t.Fatalf("step %d %s %s: state = %s, want %s", i, s.tool, s.action, f.State, s.after)
		}
	}
}

// Seed regression: "check the logs on jellyfin" — a logs investigation must
// stay in READING however many reads it takes, and may answer at the end.
func TestFSMRegressionLogsInvestigationStaysReading(t *testing.T) {
	f := NewFSM()
	runSteps(t, f, []step{
		{"query", "get", "jellyfin", false, StateReading},
		{"read", "logs", "jellyfin", false, StateReading},
		{"read", "exec", "jellyfin", false, StateReading},
		{"read", "tail", "jellyfin", false, StateReading},
		{"metrics", "", "jellyfin", false, StateReading},
		{"file_edit", "read", "jellyfin", false, StateReading},
	})
	if b := f.CanFinalAnswer(); b != nil {
		t.Fatalf("CanFinalAnswer after reads = %v", b)
	}
	if f.WroteThisEpisode {
		t.Fatal("reads marked the episode as written")
	}
}

// Seed Failure Mode 1: a read-like command sent through a write tool is a
// write; the FSM classifies by tool, not by command.
func TestFSMRegressionGrepThroughControlIsAWrite(t *testing.T) {
	f := NewFSM()
	runSteps(t, f, []step{
		{"query", "search", "", false, StateReading},
		{"control", "command", "jellyfin", false, StateVerifying},
		{"control", "command", "jellyfin", true, StateVerifying},
		{"read", "exec", "jellyfin", false, StateReading},
	})
}

// Seed Failure Mode 2: VERIFYING clears on the first read, so the next write
// is allowed.
func TestFSMRegressionWriteReadWrite(t *testing.T) {
	f := NewFSM()
	runSteps(t, f, []step{
		{"discover", "", "nginx", false, StateReading},
		{"control", "service", "nginx", false, StateVerifying},
		{"control", "service", "nginx", true, StateVerifying},
		{"read", "exec", "nginx", false, StateReading},
		{"control", "service", "nginx", false, StateVerifying},
		{"read", "logs", "nginx", false, StateReading},
	})
}

// Seed Failure Mode 2, second test: several reads after a write keep the
// session in READING and leave writes allowed.
func TestFSMRegressionMultipleReadsAfterWrite(t *testing.T) {
	f := NewFSM()
	runSteps(t, f, []step{
		{"query", "get", "web", false, StateReading},
		{"file_edit", "write", "web", false, StateVerifying},
		{"file_edit", "read", "web", false, StateReading},
		{"read", "file", "web", false, StateReading},
		{"read", "logs", "web", false, StateReading},
		{"metrics", "", "web", false, StateReading},
		{"file_edit", "append", "web", false, StateVerifying},
	})
}

// Seed Failure Mode 4: ReadAfterWrite must not stick into the next cycle;
// each write needs its own read before the answer.
func TestFSMRegressionReadAfterWriteNotSticky(t *testing.T) {
	f := NewFSM()
	f.OnToolSuccess(KindResolve, "query", "")
	for cycle := range 3 {
		f.OnToolSuccess(KindWrite, "control", "nginx")
		if f.ReadAfterWrite {
			t.Fatalf("cycle %d: ReadAfterWrite set straight after a write", cycle)
		}
		if f.CanFinalAnswer() == nil {
			t.Fatalf("cycle %d: final answer allowed before verification", cycle)
		}
		f.CompleteVerification() // without a read this must not verify
		if f.State != StateVerifying {
			t.Fatalf("cycle %d: CompleteVerification without a read left %s", cycle, f.State)
		}
		f.OnToolSuccess(KindRead, "read", "nginx")
		if f.ReadAfterWrite || f.State != StateReading {
			t.Fatalf("cycle %d: after read state=%s readAfterWrite=%v", cycle, f.State, f.ReadAfterWrite)
		}
		if b := f.CanFinalAnswer(); b != nil {
			t.Fatalf("cycle %d: CanFinalAnswer after read = %v", cycle, b)
		}
	}
}

func TestFSMRegressionFinalAnswerRefusedWhileVerifying(t *testing.T) {
	f := NewFSM()
	f.OnToolSuccess(KindResolve, "query", "")
	f.OnToolSuccess(KindWrite, "control", "lxc:delly:141")
	b := f.CanFinalAnswer()
	assertGuardBlock(t, b, CodeFSMBlocked, false, "verification required: read or check lxc:delly:141 before answering")
	if b.Details["state"] != string(StateVerifying) {
		t.Errorf("details state = %v", b.Details["state"])
	}
	// A resolve is not a check of the write's effect.
	f.OnToolSuccess(KindResolve, "query", "")
	if f.CanFinalAnswer() == nil {
		t.Fatal("a resolve completed verification")
	}
	f.OnToolSuccess(KindRead, "read", "lxc:delly:141")
	if b := f.CanFinalAnswer(); b != nil {
		t.Fatalf("CanFinalAnswer after read = %v", b)
	}
}

func TestFSMRegressionWriteBeforeDiscoveryBlocked(t *testing.T) {
	f := NewFSM()
	b := f.CanExecute(kindOf("control", "service"))
	assertGuardBlock(t, b, CodeFSMBlocked, true, "use query or discover")
	if f.State != StateResolving {
		t.Fatalf("a block changed the state to %s", f.State)
	}
}

func TestFSMCompleteVerificationOutsideVerifying(t *testing.T) {
	f := fsmIn(StateReading)
	f.ReadAfterWrite = true // as an older replica might have persisted it
	f.CompleteVerification()
	if f.State != StateReading || f.ReadAfterWrite {
		t.Fatalf("got %+v", f)
	}
	f = fsmIn(StateVerifying)
	f.ReadAfterWrite = true
	f.CompleteVerification()
	if f.State != StateReading || f.ReadAfterWrite {
		t.Fatalf("got %+v", f)
	}
}

func TestFSMReset(t *testing.T) {
	f := NewFSM()
	f.OnToolSuccess(KindResolve, "query", "")
	f.OnToolSuccess(KindWrite, "control", "nginx")
	id := f.TrackPendingRecovery(CodeFSMBlocked, "control")
	f.Reset()
	want := &FSM{State: StateResolving, RecoverySeq: 1}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("after Reset = %+v, want %+v", f, want)
	}
	if next := f.TrackPendingRecovery(CodeFSMBlocked, "control"); next == id {
		t.Fatalf("recovery ID %q reused after Reset", id)
	}
}

func TestFSMPendingRecovery(t *testing.T) {
	f := NewFSM()
	a := f.TrackPendingRecovery(CodeFSMBlocked, "control")
	if again := f.TrackPendingRecovery(CodeFSMBlocked, "control"); again != a {
		t.Fatalf("same code and tool got a new ID: %q vs %q", again, a)
	}
	b := f.TrackPendingRecovery(CodeStrictResolution, "control")
	c := f.TrackPendingRecovery(CodeStrictResolution, "file_edit")
	if a == b || b == c || a == c {
		t.Fatalf("IDs not distinct: %q %q %q", a, b, c)
	}
	if got := f.CheckRecoverySuccess("read"); got != nil {
		t.Fatalf("unrelated tool resolved %+v", got)
	}
	got := f.CheckRecoverySuccess("control")
	want := &PendingRecovery{ID: a, Code: CodeFSMBlocked, Tool: "control", Attempts: 2}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CheckRecoverySuccess = %+v, want %+v", got, want)
	}
	if got := f.CheckRecoverySuccess("control"); got != nil {
		t.Fatalf("second success of control resolved %+v again", got)
	}
	if len(f.PendingRecoveries) != 1 || f.PendingRecoveries[0].ID != c {
		t.Fatalf("pending = %+v, want only %s", f.PendingRecoveries, c)
	}
	f.CheckRecoverySuccess("file_edit")
	if f.PendingRecoveries != nil {
		t.Fatalf("empty pending list is %#v, want nil", f.PendingRecoveries)
	}
}

func TestFSMPendingRecoveryBounded(t *testing.T) {
	f := NewFSM()
	var last string
	for i := range maxPendingRecoveries + 5 {
		last = f.TrackPendingRecovery(CodeFSMBlocked, "tool"+string(rune('a'+i)))
	}
	if len(f.PendingRecoveries) != maxPendingRecoveries {
		t.Fatalf("kept %d recoveries, want %d", len(f.PendingRecoveries), maxPendingRecoveries)
	}
	if f.PendingRecoveries[len(f.PendingRecoveries)-1].ID != last {
		t.Fatal("newest recovery was dropped")
	}
	if f.CheckRecoverySuccess("toola") != nil {
		t.Fatal("oldest recovery was kept")
	}
}

func TestFSMJSONRoundTrip(t *testing.T) {
	verifying := NewFSM()
	verifying.OnToolSuccess(KindResolve, "query", "")
	verifying.OnToolSuccess(KindWrite, "control", "nginx")
	verifying.TrackPendingRecovery(CodeFSMBlocked, "control")
	verifying.TrackPendingRecovery(CodeFSMBlocked, "control")
	verifying.TrackPendingRecovery(CodeStrictResolution, "file_edit")

	drained := fsmIn(StateReading)
	drained.TrackPendingRecovery(CodeFSMBlocked, "control")
	drained.CheckRecoverySuccess("control")

	for name, f := range map[string]*FSM{
		"new":       NewFSM(),
		"reading":   fsmIn(StateReading),
		"writing":   fsmIn(StateWriting),
		"verifying": verifying,
		"drained":   drained,
		"zero":      {},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			var got FSM
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("unmarshal %s: %v", data, err)
			}
			if !reflect.DeepEqual(&got, f) {
				t.Fatalf("round trip changed the FSM:\n got %+v\nwant %+v", &got, f)
			}
		})
	}
}

// The resumed FSM must behave like the saved one, not just look like it.
func TestFSMJSONResumeKeepsGates(t *testing.T) {
	f := NewFSM()
	f.OnToolSuccess(KindResolve, "query", "")
	f.OnToolSuccess(KindWrite, "control", "nginx")
	data, _ := json.Marshal(f)
	var resumed FSM
	if err := json.Unmarshal(data, &resumed); err != nil {
		t.Fatal(err)
	}
	if resumed.CanExecute(KindWrite) == nil || resumed.CanFinalAnswer() == nil {
		t.Fatal("resumed FSM forgot the unverified write")
	}
}

func TestFSMJSONRejectsUnknownState(t *testing.T) {
	var f FSM
	err := json.Unmarshal([]byte(`{"state":"DONE"}`), &f)
	if err == nil || !strings.Contains(err.Error(), "DONE") {
		t.Fatalf("unmarshal unknown state: err = %v", err)
	}
}

// assertGuardBlock checks the shape every session guard block must have.
func assertGuardBlock(t *testing.T, b *Block, code Code, auto bool, hintContains string) {
	t.Helper()
	if b == nil {
		t.Fatalf("got no block, want %s", code)
	}
	if b.Code != code {
		t.Fatalf("code = %s, want %s (%v)", b.Code, code, b)
	}
	if b.Message == "" || b.RecoveryHint == "" {
		t.Fatalf("block lacks message or hint: %+v", b)
	}
	if !strings.Contains(b.RecoveryHint, hintContains) {
		t.Fatalf("hint %q does not contain %q", b.RecoveryHint, hintContains)
	}
	if b.AutoRecoverable != auto {
		t.Fatalf("AutoRecoverable = %v, want %v", b.AutoRecoverable, auto)
	}
	if b.Details["recovery_hint"] != b.RecoveryHint || b.Details["auto_recoverable"] != auto {
		t.Fatalf("details do not repeat hint and auto_recoverable: %v", b.Details)
	}
}
