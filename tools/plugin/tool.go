package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// tool is one MCP tool of a plugin, offered to the model as <plugin>_<tool>.
type tool struct {
	p      *Plugin
	remote string // the tool's name on the server
	spec   tools.Spec
	schema *jsonschema.Resolved // nil: the server validates alone
}

var _ tools.Tool = (*tool)(nil)

func (p *Plugin) newTool(t *mcp.Tool) (*tool, error) {
	name := toolName(p.cfg.Name, t.Name)
	if t.Name == "" || len(name) > maxToolName {
		return nil, fmt.Errorf("%w: plugin %s: tool name %q is empty or makes %s longer than %d characters", ErrInvalidTool, p.cfg.Name, t.Name, name, maxToolName)
	}
	params, resolved, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("%w: plugin %s: tool %q: %v", ErrInvalidTool, p.cfg.Name, t.Name, err)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = "Tool " + t.Name + " of plugin " + p.cfg.Name + "."
	}
	// The description reaches the prompt, so it gets the output guards
	// short of the data block.
	desc = capText(Sanitize(desc), maxDescription)
	// The operator's list decides; the server's readOnlyHint is the
	// untrusted party's word and decides nothing.
	kind := policy.KindWrite
	if slices.Contains(p.cfg.ReadOnlyTools, t.Name) {
		kind = policy.KindRead
	} else if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		p.log.Info("plugin tool claims to be read-only; it is a write unless plugins[].read_only_tools lists it",
			"tool", t.Name)
	}
	return &tool{
		p:      p,
		remote: t.Name,
		spec: tools.Spec{Name: name, Description: "[plugin " + p.cfg.Name + "] " + desc, Parameters: params,
			Kinds: policy.ActionKinds{Every: kind}},
		schema: resolved,
	}, nil
}

func (t *tool) Spec() tools.Spec { return t.spec }

// Propose accepts one JSON object of arguments, valid against the server's
// schema where vigil can check it. Plugin calls have no inventory target and
// no command: policy sees only the tool and its kind.
func (t *tool) Propose(raw json.RawMessage) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{Action: policy.Action{Tool: t.spec.Name}}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	p.Summary = "call plugin tool " + t.spec.Name
	if len(raw) > maxArgs {
		return p, invalid(fmt.Sprintf("arguments are %d bytes; the limit is %d", len(raw), maxArgs))
	}
	var obj map[string]any
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return p, invalid("arguments must be one JSON object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		p.Summary += " with " + strings.Join(keys, ", ")
	}
	if t.schema != nil {
		if err := t.schema.Validate(obj); err != nil {
			return p, invalid("arguments do not match the tool's schema: " + err.Error())
		}
	}
	p.Args = json.RawMessage(raw)
	return p, nil
}

func invalid(msg string) *policy.Block {
	return &policy.Block{
		Code:         policy.CodeInvalidInput,
		Message:      msg,
		RecoveryHint: "correct the arguments to match the tool's parameter schema and call again",
	}
}

// Execute calls the tool on the server under the plugin's timeout and
// returns its text output through the guards. It never panics: a hung,
// crashed or misbehaving server is an EXECUTION_FAILED envelope.
func (t *tool) Execute(ctx context.Context, p tools.Proposal) tools.Result {
	args, ok := p.Args.(json.RawMessage)
	if !ok {
		return failed("plugin call was not proposed by this tool", false)
	}
	callCtx, cancel := context.WithTimeout(ctx, t.p.cfg.Timeout)
	defer cancel()
	start := time.Now()
	res, err := t.p.session.CallTool(callCtx, &mcp.CallToolParams{Name: t.remote, Arguments: args})
	log := t.p.log.With("tool", t.spec.Name, "elapsed", time.Since(start))
	var wire *jsonrpc.Error
	switch {
	case err == nil:
	case errors.As(err, &wire) && wire.Code == refusedCode:
		log.Warn("plugin reply refused", "err", err)
		return failed(wire.Message, false)
	case ctx.Err() != nil:
		return failed("the call was cancelled", false)
	case callCtx.Err() != nil:
		log.Warn("plugin call timed out", "timeout", t.p.cfg.Timeout)
		return failed(fmt.Sprintf("plugin timed out after %s", t.p.cfg.Timeout), true)
	case t.p.ended():
		log.Error("plugin call failed: the plugin process is not running", "err", err)
		return failed(fmt.Sprintf("plugin %s is not running (its process ended); tell the operator", t.p.cfg.Name), false)
	default:
		log.Warn("plugin call failed", "err", err)
		return failed("plugin call failed: "+capText(Sanitize(err.Error()), 512), false)
	}

	text := resultText(res)
	if res.IsError {
		log.Info("plugin tool reported an error")
		env := tools.Failed(policy.CodeExecutionFailed, "plugin tool "+t.spec.Name+" reported an error:\n"+guard(t.spec.Name, text, t.p.cfg.MaxResponse), false)
		return tools.Result{Envelope: env, Output: capText(text, t.p.cfg.MaxResponse)}
	}
	log.Debug("plugin call done", "bytes", len(text))
	return tools.Result{
		Envelope: tools.OK(map[string]any{
			"plugin": t.p.cfg.Name,
			"tool":   t.remote,
			"output": guard(t.spec.Name, text, t.p.cfg.MaxResponse),
		}),
		Output: capText(text, t.p.cfg.MaxResponse),
	}
}

// ended reports whether the server process has gone.
func (p *Plugin) ended() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// resultText joins the text parts of a result. Only text reaches the model:
// other content is named and omitted; structured content without text is
// rendered as JSON text.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, "[non-text content omitted: image]")
		case *mcp.AudioContent:
			parts = append(parts, "[non-text content omitted: audio]")
		default:
			parts = append(parts, fmt.Sprintf("[non-text content omitted: %T]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

func failed(msg string, retryable bool) tools.Result {
	return tools.Result{Envelope: tools.Failed(policy.CodeExecutionFailed, msg, retryable)}
}
