package agent

import (
	"encoding/json"
	"time"

	"github.com/vigilops/vigil/policy"
)

// maxRunRecords bounds the finished runs a session remembers.
const maxRunRecords = 20

// RunRecord is a finished run as vigil remembers it (SPEC A13): what was
// asked and answered, the tool calls in between, whether a change ran and
// was verified, and the feedback people gave on the answer. The messages
// themselves stay in the session's history, From to To.
type RunRecord struct {
	ID        string `json:"id"`
	Requester string `json:"requester"`
	Channel   string `json:"channel"`
	// Question is the user's message, without vigil's context block.
	Question string `json:"question"`
	// Answer is the final answer; Answered is false when the run ended
	// without one from the model (a stop, a failure, a phantom answer
	// replaced).
	Answer   string `json:"answer,omitempty"`
	Answered bool   `json:"answered"`
	Steps    []Step `json:"steps,omitempty"`
	// Wrote reports a change ran (or may have); Verified that a read
	// succeeded after the last one, so the session was not left verifying.
	Wrote    bool `json:"wrote,omitempty"`
	Verified bool `json:"verified,omitempty"`
	// From and To delimit the run's messages in Session.History.
	From      int       `json:"from"`
	To        int       `json:"to"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// Feedback holds each person's latest rating of the answer.
	Feedback []Feedback `json:"feedback,omitempty"`
	// RunbookApproval is the approval of a runbook drafted from this run;
	// Runbook the path it was saved under, once saved.
	RunbookApproval string `json:"runbook_approval,omitempty"`
	Runbook         string `json:"runbook,omitempty"`
}

// Step is one tool call of a run.
type Step struct {
	CallID string      `json:"call_id"`
	Tool   string      `json:"tool"`
	Action string      `json:"action,omitempty"`
	Kind   policy.Kind `json:"kind"`
	Target string      `json:"target,omitempty"`
	// Command is the exact command, or the call's one-line summary when it
	// ran none.
	Command string `json:"command,omitempty"`
	OK      bool   `json:"ok"`
	// Code is the error code when not OK.
	Code string `json:"code,omitempty"`
}

// Rating is a person's verdict on an answer.
type Rating string

const (
	RatingGood Rating = "good"
	RatingBad  Rating = "bad"
)

// Feedback is one person's rating of a run's answer.
type Feedback struct {
	User     string    `json:"user"`
	Rating   Rating    `json:"rating"`
	Platform string    `json:"platform,omitempty"`
	At       time.Time `json:"at"`
}

// Rate records user's rating, replacing their earlier one. It reports
// whether anything changed.
func (r *RunRecord) Rate(f Feedback) bool {
	for i, g := range r.Feedback {
		if g.User == f.User {
			if g.Rating == f.Rating {
				return false
			}
			r.Feedback[i] = f
			return true
		}
	}
	r.Feedback = append(r.Feedback, f)
	return true
}

// MarkedGood reports whether more people rated the answer good than bad.
func (r *RunRecord) MarkedGood() bool {
	n := 0
	for _, f := range r.Feedback {
		switch f.Rating {
		case RatingGood:
			n++
		case RatingBad:
			n--
		}
	}
	return n > 0
}

// RunRecord returns the record of the run with id, or with id "" the newest run
// that answered.
func (s *Session) RunRecord(id string) *RunRecord {
	for i := len(s.Runs) - 1; i >= 0; i-- {
		r := &s.Runs[i]
		if (id == "" && r.Answered) || (id != "" && r.ID == id) {
			return r
		}
	}
	return nil
}

// recordRun remembers the run ending now in s.Runs.
func (a *Agent) recordRun(s *Session) {
	r := s.Run
	if r == nil {
		return
	}
	from := min(max(r.HistoryStart, 0), len(s.History))
	rec := RunRecord{
		ID: r.ID, Requester: r.Requester, Channel: r.Channel, Question: r.Question,
		From: from, To: len(s.History), StartedAt: r.StartedAt, EndedAt: a.now(),
		Wrote: len(r.Changes) > 0,
	}
	rec.Verified = rec.Wrote && s.Policy != nil && s.Policy.FSM != nil && s.Policy.FSM.CanFinalAnswer() == nil
	if n := len(s.History); n > from {
		last := s.History[n-1]
		if last.Role == RoleAssistant && len(last.ToolCalls) == 0 && last.Content != PhantomReply {
			rec.Answer, rec.Answered = last.Content, true
		}
	}
	kinds := map[string]policy.ActionKinds{}
	for _, sp := range a.tools.Specs() {
		kinds[sp.Name] = sp.Kinds
	}
	steps := map[string]int{}
	for _, m := range s.History[from:] {
		switch {
		case m.Role == RoleAssistant:
			for _, c := range m.ToolCalls {
				steps[c.ID] = len(rec.Steps)
				rec.Steps = append(rec.Steps, a.stepOf(kinds, c))
			}
		case m.Role == RoleTool:
			if i, ok := steps[m.ToolCallID]; ok {
				var env struct {
					OK    bool `json:"ok"`
					Error *struct {
						Code string `json:"code"`
					} `json:"error"`
				}
				if json.Unmarshal([]byte(m.Content), &env) == nil {
					rec.Steps[i].OK = env.OK
					if env.Error != nil {
						rec.Steps[i].Code = env.Error.Code
					}
				}
			}
		}
	}
	s.Runs = append(s.Runs, rec)
	if len(s.Runs) > maxRunRecords {
		s.Runs = append(s.Runs[:0], s.Runs[len(s.Runs)-maxRunRecords:]...)
	}
}

// stepOf describes a call by its arguments and its tool's declared kinds.
func (a *Agent) stepOf(kinds map[string]policy.ActionKinds, c ToolCall) Step {
	ci := callInfoOf(c)
	st := Step{CallID: c.ID, Tool: c.Name, Action: ci.Action, Target: ci.Target, Command: ci.Command, Kind: policy.KindWrite}
	if k, ok := kinds[c.Name]; ok {
		st.Kind = k.KindOf(ci.Action)
	}
	if st.Command == "" {
		st.Command = ci.What()
	}
	if st.Command == "" {
		st.Command = ci.Query
	}
	return st
}
