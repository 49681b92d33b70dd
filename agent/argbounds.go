package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vigilops/vigil/policy"
)

// Bounds on what the model's own output adds to the conversation. The model
// is untrusted: a call with megabytes of arguments (for any tool, or none)
// would otherwise stay whole in the history and be sent again with every
// later model call, far past the context budget, since compaction shortens
// tool results, not the model's calls.
const (
	// MaxToolArgumentBytes bounds one tool call's arguments: 32 KiB, about
	// 8,000 tokens, a third of the default context budget. A larger call
	// is not decoded or run: it is answered with an error naming the limit,
	// and the history keeps a short form of it. The largest legitimate
	// arguments are file contents, which file_edit can write in parts
	// (append).
	MaxToolArgumentBytes = 32 << 10
	// maxToolNameBytes bounds a call's tool name (real ones are short).
	maxToolNameBytes = 64
	// maxKeptModelText bounds the model's text kept beside its calls and
	// a JSON-mode reply that could not be read.
	maxKeptModelText = 16 << 10
)

// omittedKey is the key of the short form that replaces oversized
// arguments.
const omittedKey = "vigil_arguments_omitted"

// omittedArgs is the short form's content.
type omittedArgs struct {
	Bytes     int    `json:"bytes"`
	NameBytes int    `json:"name_bytes,omitempty"`
	Limit     int    `json:"limit"`
	Note      string `json:"note"`
}

// oversizedName replaces a tool name over maxToolNameBytes.
const oversizedName = "oversized_tool_name"

// boundCalls returns calls as the history keeps them: a call whose
// arguments or name are over their limits gets a short form (valid JSON
// naming the sizes) and is refused by precheck. Calls within the limits
// are returned as they are.
func boundCalls(calls []ToolCall) []ToolCall {
	var out []ToolCall
	for i, c := range calls {
		if len(c.Arguments) <= MaxToolArgumentBytes && len(c.Name) <= maxToolNameBytes {
			continue
		}
		if out == nil {
			out = append([]ToolCall(nil), calls...)
		}
		o := omittedArgs{Bytes: len(c.Arguments), Limit: MaxToolArgumentBytes,
			Note: "vigil did not keep or run these arguments: they are over the limit for one tool call"}
		if len(c.Name) > maxToolNameBytes {
			o.NameBytes = len(c.Name)
			out[i].Name = oversizedName
		}
		raw, _ := json.Marshal(map[string]omittedArgs{omittedKey: o})
		out[i].Arguments = string(raw)
	}
	if out == nil {
		return calls
	}
	return out
}

// oversizeBlock is the refusal of a call boundCalls shortened, or nil.
func oversizeBlock(c ToolCall) *policy.Block {
	if !strings.Contains(c.Arguments, omittedKey) {
		return nil
	}
	var m map[string]omittedArgs
	if json.Unmarshal([]byte(c.Arguments), &m) != nil || len(m) != 1 {
		return nil
	}
	o, ok := m[omittedKey]
	if !ok {
		return nil
	}
	msg := fmt.Sprintf("this call's arguments are %d bytes, over the limit of %d bytes for one tool call; they were not run and are not kept",
		o.Bytes, MaxToolArgumentBytes)
	if o.NameBytes > 0 {
		msg = fmt.Sprintf("this call's tool name is %d bytes, over the limit of %d; it was not run", o.NameBytes, maxToolNameBytes)
	}
	return &policy.Block{Code: policy.CodeInvalidInput, Message: msg,
		RecoveryHint: "send smaller arguments: write a large file in parts (file_edit append), narrow the command, or use a tool's own filters"}
}

// keptText bounds the model's text kept in the history, marking the cut.
func keptText(s string) string {
	if len(s) <= maxKeptModelText {
		return s
	}
	cut := maxKeptModelText
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[vigil cut %d bytes of this reply: over the %d bytes kept]", len(s)-cut, maxKeptModelText)
}
