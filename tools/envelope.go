package tools

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

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

// failed is a Failed envelope with a recovery hint and extra details.
func FailedWith(code policy.Code, msg, hint string, details map[string]any) Envelope {
	e := Failed(code, msg, false)
	e.Error.Details = map[string]any{"auto_recoverable": false}
	if hint != "" {
		e.Error.Details["recovery_hint"] = hint
	}
	for k, v := range details {
		e.Error.Details[k] = v
	}
	return e
}

// formatSize renders a byte count for people: 512 B, 64 KiB, 1.9 MiB.
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, exp := float64(n)/unit, 0
	for v >= unit && exp < 4 {
		v /= unit
		exp++
	}
	s := fmt.Sprintf("%.1f", v)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[exp]
}

// DefaultDataCap bounds the JSON of one structured tool result (metrics
// summaries, alert lists, Kubernetes objects): results are summarised by
// the tool first, and this is the backstop.
const DefaultDataCap = 32 * 1024

// CapData keeps an envelope's JSON within limit bytes (DefaultDataCap when
// limit is 0). A result over the cap keeps its error and meta; its data is
// replaced by the first part of its JSON encoding, cut at a character
// boundary, with a notice saying how much there was, so the model never
// receives an unbounded result and knows it saw only part.
func CapData(e Envelope, limit int) Envelope {
	if limit <= 0 {
		limit = DefaultDataCap
	}
	if e.Data == nil {
		return e
	}
	raw, err := json.Marshal(e.Data)
	if err != nil || len(raw) <= limit {
		return e
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	e.Data = map[string]any{
		"truncated": true,
		"notice": fmt.Sprintf("the result was %s of JSON, over the %s cap; showing its first %s. Narrow the request (a smaller window, a filter, a lower limit) to see all of it.",
			FormatSize(int64(len(raw))), FormatSize(int64(limit)), FormatSize(int64(cut))),
		"partial": string(raw[:cut]),
	}
	return e
}
