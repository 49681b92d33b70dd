package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/bot"
	"github.com/vigilops/vigil/internal/metrics"
)

// The load gauges follow the bot: a running job and one queued behind it
// in the same thread, an approval waiting as the sweep finds it, and an
// alert group from its first firing notification to its resolution.
func TestLoadGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	release := make(chan struct{})
	runner := newRunner()
	runner.start = func(ctx context.Context, s *agent.Session, in agent.Input, env agent.RunEnv) agent.Outcome {
		if err := begin(ctx, s, in, env); err != nil {
			return stopped(ctx, s, env, err)
		}
		if strings.Contains(in.Text, "restart") {
			return proposeWrite(ctx, s, env)
		}
		select {
		case <-release:
		case <-ctx.Done():
			return stopped(ctx, s, env, ctx.Err())
		}
		return answer(ctx, s, env, "done")
	}
	r := newReplica(t, replicaOptions{runner: runner, observer: m, alertDebounce: time.Hour})
	ctx := context.Background()

	th := thread("load")
	r.say(th, "olga", "what is going on?")
	recv(t, runner.entered, "the first run")
	r.say(th, "olga", "and now?")
	gauges(t, reg, map[string]float64{"vigil_runs_in_flight": 1, "vigil_runs_queued": 1})
	close(release)
	recv(t, runner.entered, "the second run")
	r.idle(t)
	gauges(t, reg, map[string]float64{"vigil_runs_in_flight": 0, "vigil_runs_queued": 0})

	other := thread("load-approval")
	r.say(other, "olga", "restart nginx")
	r.chat.waitCard(t, other)
	r.idle(t)
	r.bot.SweepOnce(ctx)
	gauges(t, reg, map[string]float64{"vigil_approvals_pending": 1})

	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertFiring, latency("web-1", "firing")), alertRoute); err != nil {
		t.Fatal(err)
	}
	gauges(t, reg, map[string]float64{"vigil_alert_groups_open": 1})
	if err := r.bot.DeliverAlert(ctx, notification(bot.AlertResolved, latency("web-1", "resolved")), alertRoute); err != nil {
		t.Fatal(err)
	}
	gauges(t, reg, map[string]float64{"vigil_alert_groups_open": 0})
}

// gauges fails unless every named gauge in reg has the wanted value.
func gauges(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range want {
		found := false
		for _, mf := range mfs {
			if mf.GetName() != name || len(mf.GetMetric()) != 1 || mf.GetMetric()[0].GetGauge() == nil {
				continue
			}
			found = true
			if g := mf.GetMetric()[0].GetGauge().GetValue(); g != v {
				t.Errorf("%s = %v, want %v", name, g, v)
			}
		}
		if !found {
			t.Errorf("%s is not registered as one gauge", name)
		}
	}
}
