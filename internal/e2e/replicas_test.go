package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/testenv/modeltest"
	"github.com/vigilops/vigil/internal/testenv/redistest"
	"github.com/vigilops/vigil/internal/testenv/testkit"
	"github.com/vigilops/vigil/policy"
	redisstore "github.com/vigilops/vigil/store/redis"
)

// Several replicas on one Redis (SPEC D2): three vigil processes, each with
// its own Redis client and its own connection to the chat platform, share
// state under one key prefix. The test plays the platform, choosing which
// replica receives each event.

// replicaWait bounds the waits of the replica tests; a loaded 2-core
// machine running the race detector needs the margin.
const replicaWait = 30 * time.Second

// startReplicas starts n replicas on the shared Redis under a fresh prefix.
func startReplicas(t *testing.T, n int, o replicaOptions) []*replica {
	t.Helper()
	addr := redistest.RequireShared(t)
	prefix := uniquePrefix(t, addr)
	reps := make([]*replica, n)
	for i := range reps {
		reps[i] = startReplica(t, fmt.Sprintf("r%d", i), redisstore.Options{Addr: addr, KeyPrefix: prefix}, o)
	}
	return reps
}

// routeTurns scripts concurrent conversations: the conversation whose first
// user message contains a key gets that key's steps, one per model turn.
func routeTurns(model *modeltest.Server, convs map[string][]modeltest.Step) {
	model.Route(func(r modeltest.Request) modeltest.Step {
		first := r.FirstUser()
		for key, steps := range convs {
			if strings.Contains(first, key) && r.Turns() < len(steps) {
				return steps[r.Turns()]
			}
		}
		return modeltest.Step{}
	})
}

// answers returns the final answers posted in a thread across replicas,
// with the name of the replica that posted each.
func answers(reps []*replica, th bot.ThreadRef) (texts, by []string) {
	for _, r := range reps {
		for _, p := range r.chat.Posts(th) {
			if p.Card == nil && p.Reply.Kind == bot.ReplyAnswer {
				texts = append(texts, p.Reply.Text)
				by = append(by, r.name)
			}
		}
	}
	return texts, by
}

// transcripts renders a thread as every replica saw it, for failures.
func transcripts(reps []*replica, th bot.ThreadRef) string {
	var b strings.Builder
	for _, r := range reps {
		fmt.Fprintf(&b, "--- %s\n%s", r.name, r.chat.Transcript(th))
	}
	return b.String()
}

// waitAnswers waits until the thread has at least one final answer on some
// replica, then until every replica is idle, and returns the answers.
func waitAnswers(t *testing.T, reps []*replica, th bot.ThreadRef) (texts, by []string) {
	t.Helper()
	waitFor(t, replicaWait, "a final answer in "+th.Key(), func() bool {
		texts, _ := answers(reps, th)
		return len(texts) > 0
	})
	idleAll(t, reps)
	return answers(reps, th)
}

// idleAll waits until no replica has work queued or running.
func idleAll(t *testing.T, reps []*replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replicaWait)
	defer cancel()
	for _, r := range reps {
		if !r.running() {
			continue
		}
		if err := r.app.Bot.WaitIdle(ctx); err != nil {
			t.Fatalf("replica %s did not become idle: %v", r.name, err)
		}
	}
}

var eventRe = regexp.MustCompile(`event (\d+):`)

// 200 events, each delivered twice at once to two different replicas (a
// platform retry landing elsewhere): each is handled exactly once. Replicas
// also sweep for orphaned runs every 100ms, so live runs are constantly
// probed by the other replicas' recovery, which must leave them alone.
func TestReplicasHandleEachEventOnce(t *testing.T) {
	const events = 200
	model := modeltest.New(t)
	model.Route(func(r modeltest.Request) modeltest.Step {
		m := eventRe.FindStringSubmatch(r.FirstUser())
		if m == nil {
			return modeltest.Step{}
		}
		switch r.Turns() {
		case 0:
			return modeltest.Calls(readExec("echo event-" + m[1]))
		case 1:
			return modeltest.Text("done " + m[1])
		}
		return modeltest.Step{}
	})
	reps := startReplicas(t, 3, replicaOptions{
		Model:      model,
		Channels:   []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelReadOnly}},
		SweepEvery: 100 * time.Millisecond,
	})

	thread := func(n int) bot.ThreadRef { return testkit.Thread("ops", fmt.Sprintf("t%d", n)) }
	var wg sync.WaitGroup
	for n := range events {
		for _, r := range []*replica{reps[n%3], reps[(n+1)%3]} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.chat.SayEvent(t, thread(n), "alice", fmt.Sprintf("event %d: check @localhost", n), fmt.Sprintf("Ev%d", n))
			}()
		}
	}
	wg.Wait()

	count := func() int {
		total := 0
		for n := range events {
			texts, _ := answers(reps, thread(n))
			total += len(texts)
		}
		return total
	}
	waitFor(t, replicaWait, fmt.Sprintf("%d final answers", events), func() bool { return count() >= events })
	idleAll(t, reps)

	perReplica := map[string]int{}
	for n := range events {
		texts, by := answers(reps, thread(n))
		if len(texts) != 1 || texts[0] != "done "+strconv.Itoa(n) {
			t.Fatalf("event %d: answers %q, want exactly one %q\n%s", n, texts, "done "+strconv.Itoa(n), transcripts(reps, thread(n)))
		}
		perReplica[by[0]]++
		traces := 0
		for _, r := range reps {
			for _, p := range r.chat.Posts(thread(n)) {
				if p.Reply.Trace != nil {
					traces++
					if p.Reply.Trace.Outcome != bot.OutcomeOK {
						t.Fatalf("event %d: read not ok:\n%s", n, transcripts(reps, thread(n)))
					}
				}
			}
		}
		if traces != 1 {
			t.Fatalf("event %d: %d tool traces, want 1 (the read ran once)\n%s", n, traces, transcripts(reps, thread(n)))
		}
	}
	firsts := map[string]int{}
	total := 0
	for _, r := range model.Requests() {
		if r.Turns() != 0 {
			continue
		}
		total++
		if m := eventRe.FindStringSubmatch(r.FirstUser()); m != nil {
			firsts[m[1]]++
		}
	}
	if total != events || len(firsts) != events {
		t.Fatalf("the model saw %d first requests for %d distinct events, want %d for %d", total, len(firsts), events, events)
	}
	for n, c := range firsts {
		if c != 1 {
			t.Fatalf("event %s reached the model %d times", n, c)
		}
	}
	if got := model.Count(); got != 2*events {
		t.Fatalf("the model got %d requests, want %d (two turns per event)", got, 2*events)
	}
	// Every replica took a share: the duplicate really raced a live twin.
	for _, r := range reps {
		if perReplica[r.name] == 0 {
			t.Fatalf("replica %s handled no event (shares %v); the race was not exercised", r.name, perReplica)
		}
	}
	t.Logf("events handled per replica: %v", perReplica)
}

// The write-then-verify conversation the approval tests script.
func writeSteps(file, final string) []modeltest.Step {
	return []modeltest.Step{
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Calls(readExec("cat " + file)),
		modeltest.Text(final),
	}
}

// 50 approvers click Approve at once, spread over three replicas: the call
// runs exactly once, and the 49 others are told it was already approved.
func TestReplicasConcurrentApprovalsExecuteOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	var approvers []string
	for i := range 50 {
		approvers = append(approvers, fmt.Sprintf("u%d", i))
	}
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{"append a line": writeSteps(file, "done")})
	reps := startReplicas(t, 3, replicaOptions{
		Model: model,
		Channels: []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
			Operators: []string{"alice"}, Approvers: approvers}},
	})
	th := testkit.Thread("ops", "t1")
	reps[0].chat.Say(t, th, "alice", "append a line on @localhost")
	card := reps[0].chat.WaitCard(t, th, replicaWait)

	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, u := range approvers {
		r := reps[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r.chat.Decide(t, bot.Decision{EventID: "click-" + u, ApprovalID: card.ID, Token: card.Token, Approve: true, User: u, Thread: th})
		}()
	}
	close(start)
	wg.Wait()

	texts, by := waitAnswers(t, reps, th)
	if len(texts) != 1 || texts[0] != "done" {
		t.Fatalf("answers %q by %v, want one \"done\"\n%s", texts, by, transcripts(reps, th))
	}
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("50 approvals over 3 replicas ran the write %d times, want 1\n%s", n, transcripts(reps, th))
	}
	lost, winners := 0, 0
	for _, u := range approvers {
		told := 0
		for _, r := range reps {
			for _, n := range r.chat.Notes(u) {
				told++
				if strings.Contains(n, "already approved by") {
					lost++
				}
			}
		}
		if told == 0 {
			winners++
		}
	}
	if lost != 49 || winners != 1 {
		t.Fatalf("%d deciders were told it was already approved and %d were not told anything; want 49 and 1", lost, winners)
	}
	a, err := reps[2].store.GetApproval(context.Background(), card.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != policy.ApprovalExecuted {
		t.Fatalf("approval status %s, want executed", a.Status)
	}
}

// A replica dies mid-run, while a slow read is in flight: another replica
// notices the orphaned run, continues it from the last checkpoint, tells
// the model the read was interrupted, and finishes it; the write in the
// rest of the run happens exactly once.
//
// "cancelled": A's Run context is cancelled (SIGTERM, a deploy); the job
// stops without saving and releases the thread lock, so B takes over at
// its next sweep. "crashed": A loses Redis first, as a process that dies
// does, so its lock stays until it expires (A's LockTTL) and only then
// can B take over.
func TestReplicaKilledMidRunCompletesElsewhere(t *testing.T) {
	for _, crash := range []bool{false, true} {
		name := "cancelled"
		if crash {
			name = "crashed"
		}
		t.Run(name, func(t *testing.T) { killMidRun(t, crash) })
	}
}

func killMidRun(t *testing.T, crash bool) {
	file := filepath.Join(t.TempDir(), "log")
	// The marker finds this test's slow command among the machine's
	// processes.
	slow := fmt.Sprintf("sleep 3; echo slow-%d", time.Now().UnixNano())
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{"slow check": {
		modeltest.Calls(discoverLocal()),
		modeltest.Calls(readExec(slow)),
		modeltest.Calls(controlCmd(testkit.AppendLine(file))),
		modeltest.Calls(readExec("cat " + file)),
		modeltest.Text("finished"),
	}})
	addr := redistest.RequireShared(t)
	prefix := uniquePrefix(t, addr)
	channels := []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelAutonomous, Operators: []string{"alice"}}}
	aOpts := replicaOptions{Model: model, Channels: channels}
	if crash {
		aOpts.LockTTL = time.Second
	}
	a := startReplica(t, "A", redisstore.Options{Addr: addr, KeyPrefix: prefix}, aOpts)
	b := startReplica(t, "B", redisstore.Options{Addr: addr, KeyPrefix: prefix}, replicaOptions{Model: model, Channels: channels,
		SweepEvery: 100 * time.Millisecond, LockTTL: time.Second})
	reps := []*replica{a, b}
	th := testkit.Thread("ops", "t1")

	a.chat.Say(t, th, "alice", "slow check on @localhost, then append a line")
	// A checkpoints the read as in flight, then runs it.
	waitFor(t, replicaWait, "the slow read checkpointed as in flight on A", func() bool {
		s, err := a.store.LoadSession(context.Background(), th.Key())
		return err == nil && s.Run != nil && len(s.Run.InFlight) == 1 && s.Run.InFlight[0].Name == "read"
	})
	waitFor(t, replicaWait, "the slow read running", func() bool { return commandRunning(slow) })
	if crash {
		_ = a.store.Close()
	}
	if err := a.kill(replicaWait); err != nil {
		t.Fatalf("kill A: %v", err)
	}

	texts, by := waitAnswers(t, reps, th)
	if len(texts) != 1 || by[0] != "B" || texts[0] != "finished" {
		t.Fatalf("answers %q by %v, want one \"finished\" from B\n%s", texts, by, transcripts(reps, th))
	}
	b.chat.WaitText(t, th, "Picking up where the previous attempt stopped", replicaWait)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the write ran %d times, want 1\n%s", n, transcripts(reps, th))
	}
	perTurn := map[int]int{}
	var afterKill *modeltest.Request
	for _, r := range model.Requests() {
		perTurn[r.Turns()]++
		if r.Turns() == 2 {
			afterKill = &r
		}
	}
	for turn := range 5 {
		if perTurn[turn] != 1 {
			t.Fatalf("model requests per turn %v, want one each for turns 0-4 (no turn repeated)", perTurn)
		}
	}
	var readID string
	for _, m := range afterKill.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == "read" && strings.Contains(c.Arguments, "slow-") {
				readID = c.ID
			}
		}
	}
	res := afterKill.LastToolResults()
	if readID == "" || len(res) != 1 || res[0].ToolCallID != readID {
		t.Fatalf("after the takeover the model got results %+v, want the interrupted read's (%q)", res, readID)
	}
	if e := decodeEnvelope(t, res[0].Content); e.OK || code(e) != string(policy.CodeExecutionFailed) || !strings.Contains(e.Error.Message, "interrupted") {
		t.Fatalf("the interrupted read's result: %+v, want a failure saying it was interrupted", e.Error)
	}
	s, err := b.store.LoadSession(context.Background(), th.Key())
	if err != nil {
		t.Fatal(err)
	}
	if s.Run != nil {
		t.Fatalf("run still open after the answer: %+v", s.Run)
	}
	active, err := b.store.Stores().Runs.ActiveRuns(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(active) != 0 {
		t.Fatalf("runs still indexed as active: %v", active)
	}
}

// commandRunning reports whether a process on this machine runs a shell
// command line containing cmd.
func commandRunning(cmd string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), cmd) {
			return true
		}
	}
	return false
}

// An approval requested on replica A is decided on replica B: B executes
// the bound call once and resumes the run; A does nothing more.
func TestReplicasApprovalDecidedOnAnotherReplica(t *testing.T) {
	file := filepath.Join(t.TempDir(), "log")
	model := modeltest.New(t)
	routeTurns(model, map[string][]modeltest.Step{"append a line": writeSteps(file, "appended")})
	reps := startReplicas(t, 2, replicaOptions{
		Model: model,
		Channels: []policy.ChannelPolicy{{Match: "testchat:ops", Level: policy.LevelControlled,
			Operators: []string{"alice"}, Approvers: []string{"bob"}}},
	})
	a, b := reps[0], reps[1]
	th := testkit.Thread("ops", "t1")
	a.chat.Say(t, th, "alice", "append a line on @localhost")
	card := a.chat.WaitCard(t, th, replicaWait)
	idleAll(t, reps)
	if n := testkit.LineCount(t, file); n != 0 {
		t.Fatalf("the write ran %d times before approval", n)
	}

	b.chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	texts, by := waitAnswers(t, reps, th)
	if len(texts) != 1 || by[0] != b.name || texts[0] != "appended" {
		t.Fatalf("answers %q by %v, want one \"appended\" from %s\n%s", texts, by, b.name, transcripts(reps, th))
	}
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("the approved write ran %d times, want 1", n)
	}
	if got, ok := b.chat.Card(card.ID); !ok || got.Status != bot.ApprovalApproved || got.DecidedBy != "bob" {
		t.Fatalf("B's card after the decision: %+v (found %v)", got, ok)
	}
	for _, p := range a.chat.Posts(th) {
		if p.Reply.Trace != nil && p.Reply.Trace.Tool == "control" {
			t.Fatalf("replica A ran the approved call:\n%s", transcripts(reps, th))
		}
	}
	// The same click delivered again, to A this time, changes nothing.
	a.chat.Decide(t, bot.Decision{EventID: "click-1", ApprovalID: card.ID, Token: card.Token, Approve: true, User: "bob", Thread: th})
	idleAll(t, reps)
	if n := testkit.LineCount(t, file); n != 1 {
		t.Fatalf("a redelivered click ran the write again: %d lines", n)
	}
}
