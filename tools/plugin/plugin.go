// Package plugin turns MCP servers the operator lists in config into tools
// the model can call (SPEC T5). Each server runs as a child process spoken
// to over stdio; each of its tools becomes a tools.Tool named
// <plugin>_<tool>.
//
// Plugins are untrusted. A tool is a read only when the operator lists it
// in the plugin's ReadOnlyTools (plugins[].read_only_tools); otherwise it
// is a write that needs approval where the channel demands it. The
// server's own readOnlyHint is a claim by the untrusted party, so it
// decides nothing. Every call runs under the plugin's timeout; a reply
// longer than the plugin's frame limit is refused without reading it whole
// (frames.go), and the plugin keeps running; output is text only,
// sanitised of tool-call syntax, capped and wrapped in a data block marked
// untrusted. A plugin sees only its own process and its
// own tools: it is given no handle on the registry or on other plugins, so it
// cannot list or call them; the MCP client matches every response to its
// request ID.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

const (
	// DefaultTimeout bounds one call to a plugin tool, and the start.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResponse bounds the text one call returns to the model.
	DefaultMaxResponse = 64 * 1024
	// maxTools bounds how many tools one plugin may offer.
	maxTools = 128
	// maxDescription bounds a tool description the server supplies.
	maxDescription = 1024
	// maxSchema bounds a tool's input schema.
	maxSchema = 64 * 1024
	// maxArgs bounds the arguments of one call.
	maxArgs = 1 << 20
	// maxToolName is the longest function name model APIs accept.
	maxToolName = 64
)

// Sentinel errors.
var (
	// ErrInvalidConfig: the plugin's configuration is unusable.
	ErrInvalidConfig = errors.New("invalid plugin config")
	// ErrInvalidTool: the server offered a tool vigil will not expose.
	ErrInvalidTool = errors.New("invalid plugin tool")
	// ErrUnknownReadOnlyTool: read_only_tools names a tool the server does
	// not offer.
	ErrUnknownReadOnlyTool = errors.New("read_only_tools names a tool the plugin does not offer")
)

// Plugin is a running MCP server and the tools it offers.
type Plugin struct {
	cfg     Config
	session *mcp.ClientSession
	cmd     *exec.Cmd
	tools   []tools.Tool
	log     *slog.Logger
	closing atomic.Bool
	exited  chan struct{}
}

// Connect starts the plugin's server, initialises the MCP session and lists
// its tools. ctx bounds the start only; the process lives until Close.
func Connect(ctx context.Context, cfg Config, log *slog.Logger) (*Plugin, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: plugin %s: %w", ErrInvalidConfig, cfg.Name, err)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponse <= 0 {
		cfg.MaxResponse = DefaultMaxResponse
	}
	log = log.With("plugin", cfg.Name)

	if cfg.URL != "" {
		return connectHTTP(ctx, cfg, log)
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env = pluginEnv(cfg.Env)
	transport := &stdioTransport{cmd: cmd, limit: frameLimit(cfg.MaxResponse), terminate: 2 * time.Second,
		refused: func(id string, size int64, request bool) {
			what := "a reply"
			switch {
			case request:
				what = "a request or notification from the plugin (dropped)"
			case id == "":
				what = "a message without a request ID (dropped)"
			}
			log.Warn("plugin message refused: over the frame limit (16 × plugins[].max_response, at least 1 MiB)",
				"what", what, "id", id, "bytes", size, "limit", frameLimit(cfg.MaxResponse))
		}}
	client := mcp.NewClient(&mcp.Implementation{Name: "vigil", Version: "1"}, nil)

	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: start %s: %w", cfg.Name, cfg.Command, err)
	}
	return start(ctx, &Plugin{cfg: cfg, session: session, cmd: cmd, log: log, exited: make(chan struct{})})
}

// start watches the session and lists the plugin's tools.
func start(ctx context.Context, p *Plugin) (*Plugin, error) {
	log := p.log
	go p.watch()

	ts, err := p.listTools(ctx)
	if err != nil {
		_ = p.Close()
		return nil, err
	}
	p.tools = ts
	reads := 0
	for _, t := range ts {
		if t.(*tool).spec.Kinds.Every == policy.KindRead {
			reads++
		}
	}
	log.Info("plugin started", "tools", len(ts), "read_only", reads)
	return p, nil
}

// watch notes in the log when the server exits on its own.
func (p *Plugin) watch() {
	err := p.session.Wait()
	close(p.exited)
	if !p.closing.Load() {
		p.log.Error("plugin process ended; its tools fail until vigil restarts", "err", err)
	}
}

// pluginEnv is the environment of a plugin: PATH and HOME from vigil's, so
// the command can be found and behaves normally, then the configured pairs.
func pluginEnv(extra []string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}

func (p *Plugin) listTools(ctx context.Context) ([]tools.Tool, error) {
	var out []tools.Tool
	seen := make(map[string]string)
	var remote []string
	for t, err := range p.session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("plugin %s: list tools: %w", p.cfg.Name, err)
		}
		if len(out) == maxTools {
			return nil, fmt.Errorf("%w: plugin %s offers more than %d tools", ErrInvalidTool, p.cfg.Name, maxTools)
		}
		tl, err := p.newTool(t)
		if err != nil {
			return nil, err
		}
		if other, dup := seen[tl.spec.Name]; dup {
			return nil, fmt.Errorf("%w: plugin %s: tools %q and %q are both named %s", ErrInvalidTool, p.cfg.Name, other, t.Name, tl.spec.Name)
		}
		seen[tl.spec.Name] = t.Name
		remote = append(remote, t.Name)
		out = append(out, tl)
	}
	for _, name := range p.cfg.ReadOnlyTools {
		if !slices.Contains(remote, name) {
			return nil, fmt.Errorf("%w: plugin %s: plugins[].read_only_tools names %q; the plugin offers: %s",
				ErrUnknownReadOnlyTool, p.cfg.Name, name, strings.Join(remote, ", "))
		}
	}
	return out, nil
}

// Name is the plugin's configured name.
func (p *Plugin) Name() string { return p.cfg.Name }

// Tools returns the plugin's tools, in the order the server listed them.
func (p *Plugin) Tools() []tools.Tool { return append([]tools.Tool(nil), p.tools...) }

// Close ends the session and the server process.
func (p *Plugin) Close() error {
	if p.closing.Swap(true) {
		return nil
	}
	err := p.session.Close()
	<-p.exited
	if err != nil && !errors.Is(err, mcp.ErrConnectionClosed) {
		// The process exiting on a signal is how Close often ends.
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return nil
		}
		return fmt.Errorf("plugin %s: close: %w", p.cfg.Name, err)
	}
	return nil
}

// toolName is <plugin>_<tool> with the tool's name lower-cased and every
// character outside [a-z0-9_] replaced by '_'.
func toolName(plugin, tool string) string {
	b := []byte(strings.ToLower(tool))
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			b[i] = '_'
		}
	}
	return plugin + "_" + string(b)
}

// inputSchema checks that a tool's input schema is a JSON object schema of
// bounded size and resolves it for argument validation. A schema
// jsonschema-go cannot resolve (another draft) is still offered to the model;
// the server then validates alone.
func inputSchema(raw any) (json.RawMessage, *jsonschema.Resolved, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	if len(b) > maxSchema {
		return nil, nil, fmt.Errorf("input schema is %d bytes; the limit is %d", len(b), maxSchema)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, nil, errors.New("input schema is not a JSON object")
	}
	var typ string
	if err := json.Unmarshal(top["type"], &typ); err != nil || typ != "object" {
		return nil, nil, fmt.Errorf(`input schema has type %s; it must be "object"`, top["type"])
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return b, nil, nil
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return b, nil, nil
	}
	return b, resolved, nil
}
