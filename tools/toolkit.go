package tools

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/vigilops/vigil/policy"
)

// This file exports the helpers the built-in tools use, for tool packages
// that live outside this one (tools/metrics, tools/alerts, tools/kube,
// tools/changes): the same strict arguments, field errors, envelopes and
// output caps, so every tool keeps one contract (SPEC T1, T2).

// FieldErrorf is a validation failure the model can fix, naming the
// argument. Returned from an argument struct's Validate, DecodeArgs reports
// it as INVALID_INPUT with details.field set.
func FieldErrorf(field, format string, args ...any) error {
	return fieldErrorf(field, format, args...)
}

// CheckText rejects NUL bytes in an argument and, when singleLine is set,
// line breaks.
func CheckText(field, v string, singleLine bool) error { return checkText(field, v, singleLine) }

// NotUsed rejects an argument the action would ignore, so the model does
// not believe it had an effect.
func NotUsed(field, action string, set bool) error { return notUsed(field, action, set) }

// MustSchema derives the JSON Schema of argument struct T for a tool whose
// argument type is fixed at compile time; a failure is a programming error
// every test run catches, so it panics like regexp.MustCompile.
func MustSchema[T any]() json.RawMessage { return mustSchema[T]() }

// ArgsOf recovers a tool's typed arguments from a proposal it made.
func ArgsOf[T any](p Proposal) (T, bool) { return argsOf[T](p) }

// InvalidInput is the INVALID_INPUT block for a bad argument the model can
// correct; field may be "".
func InvalidInput(field, msg string) *policy.Block { return invalidInput(field, msg) }

// FailedWith is a Failed envelope (the tool ran, the call did not succeed)
// with a recovery hint for the model and extra details.
func FailedWith(code policy.Code, msg, hint string, details map[string]any) Envelope {
	return failed(code, msg, hint, details)
}

// BadProposal is the Result for an Execute called with a proposal the tool
// did not make: it refuses rather than run something policy did not see.
func BadProposal(tool string, p Proposal, why string) Result { return badProposal(tool, p, why) }

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
			formatSize(int64(len(raw))), formatSize(int64(limit)), formatSize(int64(cut))),
		"partial": string(raw[:cut]),
	}
	return e
}
