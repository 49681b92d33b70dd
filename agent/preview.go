package agent

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// previewTimeout bounds the read a preview makes, so an unreachable target
// delays the approval card by no more than this.
const previewTimeout = 20 * time.Second

// preview lets the tool of a call stopped for approval show the change
// against its target as it is now (tools.Previewer), and returns the
// proposal with the card's change lines and basis. The one read the tool
// may ask for goes through policy exactly as the model's read of the same
// target and path would: the same gate, the same sandbox. Its output goes
// to the card alone, never to the model, the history or a trace.
func (a *Agent) preview(ctx context.Context, s *Session, p tools.Proposal) tools.Proposal {
	t, ok := a.reg(s.Run).Get(p.Tool)
	if !ok {
		return p
	}
	pv, ok := t.(tools.Previewer)
	if !ok {
		return p
	}
	ctx, cancel := context.WithTimeout(ctx, previewTimeout)
	defer cancel()
	var used atomic.Bool
	read := func(ctx context.Context, args json.RawMessage) tools.PreviewRead {
		at := a.now()
		if used.Swap(true) {
			return tools.PreviewRead{Refused: "a preview makes one read", At: at}
		}
		rp, blk := a.reg(s.Run).Propose(p.Tool, args)
		switch {
		case blk != nil:
			return tools.PreviewRead{Refused: blk.Message, At: at}
		case rp.Kind != policy.KindRead:
			return tools.PreviewRead{Refused: "the call is not a read", At: at}
		case rp.Target != p.Target || rp.Path != p.Path:
			return tools.PreviewRead{Refused: "the read is not of the change's own target and path", At: at}
		}
		dec := a.policy.Authorize(s.Policy, rp.Action, s.Run.Level, s.Run.Role, at)
		switch {
		case dec.Block != nil:
			return tools.PreviewRead{Refused: dec.Block.Message, At: at}
		case !dec.Allow || dec.NeedsApproval:
			return tools.PreviewRead{Refused: "the read would need approval", At: at}
		}
		rp.Execution = dec.Execution
		rp.Actor = s.Run.Actor
		res := a.safeExecute(ctx, a.reg(s.Run), rp)
		a.log.Info("read for an approval card", "session", s.Key, "run", s.Run.ID, "tool", rp.Tool,
			"target", rp.Target, "path", rp.Path, "ok", res.Envelope.OK)
		return tools.PreviewRead{Result: res, At: at}
	}
	pr, ok := a.safePreview(ctx, pv, p, read)
	if !ok {
		return p
	}
	p.Details, p.Basis = pr.Details, pr.Basis
	return p
}

// safePreview turns a panicking preview into none: the card then shows the
// proposal's own change lines.
func (a *Agent) safePreview(ctx context.Context, pv tools.Previewer, p tools.Proposal, read tools.ReadFunc) (pr tools.Preview, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			a.log.Error("tool preview panicked", "tool", p.Tool, "panic", v)
			ok = false
		}
	}()
	return pv.Preview(ctx, p, read), true
}
