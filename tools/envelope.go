package tools

import (
	"encoding/json"

	"github.com/vigilops/vigil/policy"
)

// Envelope is the one shape every tool result takes (SPEC T1). It is what the
// model reads back, serialised as JSON.
type Envelope struct {
	OK    bool           `json:"ok"`
	Data  any            `json:"data,omitempty"`
	Error *ErrorInfo     `json:"error,omitempty"`
	Meta  map[string]any `json:"meta,omitempty"`
}

// ErrorInfo explains a refusal or failure. Recoverable errors carry
// details.recovery_hint and details.auto_recoverable.
type ErrorInfo struct {
	Code      policy.Code    `json:"code"`
	Message   string         `json:"message"`
	Blocked   bool           `json:"blocked"`
	Failed    bool           `json:"failed"`
	Retryable bool           `json:"retryable"`
	Details   map[string]any `json:"details,omitempty"`
}

// OK wraps a successful result.
func OK(data any) Envelope { return Envelope{OK: true, Data: data} }

// Failed reports that a tool ran but did not succeed (the command failed, the
// file was missing). The model may try something else.
func Failed(code policy.Code, msg string, retryable bool) Envelope {
	return Envelope{Error: &ErrorInfo{Code: code, Message: msg, Failed: true, Retryable: retryable}}
}

// Blocked converts a policy refusal into the envelope the model sees.
func Blocked(b *policy.Block) Envelope {
	details := make(map[string]any, len(b.Details)+3)
	for k, v := range b.Details {
		details[k] = v
	}
	if b.RecoveryHint != "" {
		details["recovery_hint"] = b.RecoveryHint
	}
	details["auto_recoverable"] = b.AutoRecoverable
	if b.SuggestedRewrite != "" {
		details["suggested_rewrite"] = b.SuggestedRewrite
	}
	return Envelope{Error: &ErrorInfo{Code: b.Code, Message: b.Message, Blocked: true, Details: details}}
}

// JSON renders the envelope for the model. Marshalling only fails for values
// a tool should never put in Data; that is reported as an envelope too.
func (e Envelope) JSON() string {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(Failed(policy.CodeExecutionFailed, "tool result could not be encoded: "+err.Error(), false))
	}
	return string(b)
}
