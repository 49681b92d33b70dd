package bot_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigilops/vigil/bot"
)

// HandleMessage is the fast path an adapter calls while the platform waits
// for its acknowledgement: it returns while the thread's run is held and
// while the platform is slow to say who the sender is (a "stop" is judged
// in the background), and the stop is still judged and carried out.
func TestHandleMessageDoesNotWaitOnThePlatformOrTheRun(t *testing.T) {
	r := newReplica(t, replicaOptions{})
	run := newPausedRun(r.runner)
	th := thread("fast-path")

	r.say(th, "rita", "why is the disk full?")
	at := recv(t, run.paused, "rita's run to be under way")

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.chat.mu.Lock()
	r.chat.onFacts = func(user string) {
		if user == "rita" {
			once.Do(func() { close(entered); <-release })
		}
	}
	r.chat.mu.Unlock()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		r.say(th, "rita", "and the memory?") // queued behind the held run
		r.say(th, "rita", "stop")
	}()
	recv(t, entered, "the stop to ask the platform about rita")
	recv(t, returned, "HandleMessage to return while the platform is asked")
	if at.ctx.Err() != nil {
		t.Fatal("the run was stopped before the stop was judged")
	}
	close(release)
	r.chat.waitText(t, th, "Stopping.")
	r.idle(t)
	if n := len(r.runner.of("start")); n != 1 {
		t.Fatalf("%d runs, want 1: the message queued before the stop is dropped", n)
	}
}

// blockingDedup is a Deduper whose store never answers.
type blockingDedup struct{}

func (blockingDedup) FirstSeen(ctx context.Context, _ string, _ time.Duration) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// A store that does not answer does not hold the acknowledgement: the
// dedup check is bounded, the message is not run (it could be a
// duplicate), and the thread is told.
func TestHandleMessageBoundsItsStoreWork(t *testing.T) {
	stores := memStores(nil)
	stores.Dedup = blockingDedup{}
	r := newReplica(t, replicaOptions{stores: stores})
	th := thread("slow-store")
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		r.bot.HandleMessage(context.Background(), bot.Message{EventID: "ev-slow", Thread: th, User: "rita",
			Text: "why is the disk full?", Addressed: true, At: time.Now()})
	}()
	recv(t, returned, "HandleMessage to give up on the store")
	r.chat.waitText(t, th, "I cannot reach my state store right now")
	r.idle(t)
	if n := len(r.runner.of("start")); n != 0 {
		t.Fatalf("%d runs started without the dedup's answer", n)
	}
}
