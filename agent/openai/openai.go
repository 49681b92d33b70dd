package openai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/sashabaranov/go-openai"
	"github.com/vigilops/vigil/agent"
	"github.com/vigilops/vigil/tools"
)

// Defaults of Config.
const (
	DefaultModelTimeout  = 120 * time.Second
	DefaultModelRetries  = 4
	DefaultBackoffBase   = time.Second
	DefaultBackoffMax    = 20 * time.Second
	DefaultMaxRetryAfter = 30 * time.Second
	DefaultAzureVersion  = "2024-10-21"
	openAIAPITypeOpenAI  = "openai"
	openAIAPITypeAzure   = "azure"
)

// Model is an agent.Model over any OpenAI-compatible chat completions API,
// with native tool calls. It is safe for concurrent use.
type Model struct {
	client *sdk.Client
	model  string
	temp   float32
	// maxTokens and maxCompletionTokens: at most one is set.
	maxTokens           int
	maxCompletionTokens int
	stream              bool
	retry               *retrier
	log                 *slog.Logger
	tools               toolCache
}

var _ agent.Model = (*Model)(nil)

// New validates cfg, applies defaults and builds the client.
// Errors name the configuration key, e.g. "llm.base_url is empty".
func New(cfg Config) (*Model, error) {
	if err := validateConfig(&cfg); err != nil {
		return nil, err
	}
	var hc *http.Client
	if cfg.HTTPClient != nil {
		hc = cfg.HTTPClient
	} else {
		hc = &http.Client{Transport: newTransport()}
	}
	var oc sdk.ClientConfig
	if cfg.APIType == openAIAPITypeAzure {
		oc = sdk.DefaultAzureConfig(cfg.APIKey.Reveal(), cfg.BaseURL)
		oc.APIVersion = cfg.APIVersion
		// Model is the deployment name as configured: no renaming.
		oc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		oc = sdk.DefaultConfig(cfg.APIKey.Reveal())
		oc.BaseURL = cfg.BaseURL
	}
	oc.HTTPClient = releasingDoer{next: recordingDoer{next: headerDoer{next: hc, headers: cfg.Headers}}}

	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Model{
		client: sdk.NewClientWithConfig(oc),
		model:  cfg.Model,
		temp:   cfg.Temperature,
		stream: cfg.Stream,
		log:    log,
		retry: &retrier{
			maxRetries:    max(cfg.MaxRetries, 0),
			timeout:       cfg.Timeout,
			base:          cfg.BackoffBase,
			max:           cfg.BackoffMax,
			maxRetryAfter: cfg.MaxRetryAfter,
			secret:        cfg.APIKey.Reveal(),
			log:           log,
			now:           time.Now,
		},
	}
	// Reasoning models refuse max_tokens; let the SDK's own rules decide.
	m.maxTokens = cfg.MaxTokens
	probe := m.baseRequest()
	if err := sdk.NewReasoningValidator().Validate(probe); errors.Is(err, sdk.ErrReasoningModelMaxTokensDeprecated) {
		m.maxTokens, m.maxCompletionTokens = 0, cfg.MaxTokens
		probe = m.baseRequest()
	}
	if err := sdk.NewReasoningValidator().Validate(probe); err != nil {
		return nil, fmt.Errorf("llm.model %q does not accept this configuration (llm.temperature, llm.max_tokens): %w", cfg.Model, err)
	}
	return m, nil
}

// newTransport is the model client's own transport: Go's default one (the
// proxy from the environment; HTTP/2 over TLS, which hosted APIs such as
// OpenAI and Azure speak, so that concurrent calls share a few
// connections) keeping more than the default two idle connections: many
// runs call one endpoint at once, and over HTTP/1.1 (a local vLLM or
// Ollama) each call in flight holds a connection, which calls then reuse
// instead of opening (and TLS-handshaking) new ones.
func newTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return tr
}

func validateConfig(cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultModelTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultModelRetries
	}
	if cfg.BackoffBase < 0 || cfg.BackoffMax < 0 || cfg.MaxRetryAfter < 0 {
		return errors.New("llm backoff durations must not be negative")
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax == 0 {
		cfg.BackoffMax = max(DefaultBackoffMax, cfg.BackoffBase)
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	for k, v := range cfg.Headers {
		if err := checkHeader(k, v); err != nil {
			return fmt.Errorf("llm.headers: %q: %w", k, err)
		}
	}
	switch strings.ToLower(cfg.APIType) {
	case "", openAIAPITypeOpenAI:
		cfg.APIType = openAIAPITypeOpenAI
	case openAIAPITypeAzure:
		cfg.APIType = openAIAPITypeAzure
		if cfg.APIVersion == "" {
			cfg.APIVersion = DefaultAzureVersion
		}
	default:
		return fmt.Errorf("llm.api_type %q is unknown; use \"openai\" or \"azure\"", cfg.APIType)
	}
	return nil
}

// checkHeader refuses a header vigil sets itself (the authentication
// above all: a header must not replace llm.api_key) and one that is not a
// header name with a one-line value.
func checkHeader(k, v string) error {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Api-Key", "Content-Type", "Accept", "Content-Length", "Host":
		return errors.New("is set by vigil itself (the key goes in llm.api_key)")
	}
	if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
		return errors.New("is not a header name with a one-line value")
	}
	return nil
}

// redactURL drops userinfo from a URL for error messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

func (m *Model) baseRequest() sdk.ChatCompletionRequest {
	return sdk.ChatCompletionRequest{
		Model:       m.model,
		Temperature: m.temp,
		//lint:ignore SA1019 max_tokens is what OpenAI-compatible servers (Ollama, vLLM, older Azure deployments) read; New sends max_completion_tokens instead to the models that require it.
		MaxTokens:           m.maxTokens,
		MaxCompletionTokens: m.maxCompletionTokens,
	}
}

// Complete sends one chat completion, retrying transient failures. With
// streaming on, onDelta (if not nil) receives each piece of text as it
// arrives; without streaming it receives the whole text once. A failure
// after text was handed to onDelta is not retried. Errors wrap
// ErrModelUnavailable or ErrModelRejected, or the context's error when ctx
// ended.
func (m *Model) Complete(ctx context.Context, req agent.ModelRequest, onDelta func(string)) (agent.ModelResponse, error) {
	creq, err := m.chatRequest(req)
	if err != nil {
		return agent.ModelResponse{}, fmt.Errorf("build model request: %w", err)
	}
	start := time.Now()
	var resp agent.ModelResponse
	if m.stream {
		resp, err = m.retry.do(ctx, func(ctx context.Context) (agent.ModelResponse, bool, error) {
			return m.completeStream(ctx, creq, onDelta)
		})
	} else {
		resp, err = m.retry.do(ctx, func(ctx context.Context) (agent.ModelResponse, bool, error) {
			r, err := m.completeOnce(ctx, creq)
			return r, false, err
		})
		if err == nil && onDelta != nil && resp.Content != "" {
			onDelta(resp.Content)
		}
	}
	if err != nil {
		return agent.ModelResponse{}, err
	}
	m.log.Debug("model call", "model", m.model, "stream", m.stream,
		"duration", time.Since(start).Round(time.Millisecond), "tool_calls", len(resp.ToolCalls),
		"finish", resp.FinishReason, "prompt_tokens", resp.Usage.PromptTokens,
		"completion_tokens", resp.Usage.CompletionTokens)
	return resp, nil
}

// chatRequest converts a agent.ModelRequest to the SDK's request.
func (m *Model) chatRequest(req agent.ModelRequest) (sdk.ChatCompletionRequest, error) {
	creq := m.baseRequest()
	creq.Stream = m.stream
	if m.stream {
		creq.StreamOptions = &sdk.StreamOptions{IncludeUsage: true}
	}
	msgs, err := toSDKMessages(req.Messages)
	if err != nil {
		return creq, err
	}
	creq.Messages = msgs
	creq.Tools, err = m.tools.get(req.Tools)
	return creq, err
}

// maxToolLists bounds the tool lists toolCache keeps.
const maxToolLists = 16

// toolCache keeps the SDK form of the tool lists the model is offered. A
// run is offered the same list on every turn (a registry's Specs, shared
// and unchanging), so calls in flight share one conversion instead of
// each holding its own copy of every tool's definition while the model
// thinks. A list is found by its first element's address and checked
// field by field (cheap when it is the same list), so a changed list is
// converted again.
type toolCache struct {
	mu    sync.Mutex
	lists map[*tools.Spec]convertedTools
}

type convertedTools struct {
	specs []tools.Spec // what was converted
	sdk   []sdk.Tool
}

func (c *toolCache) get(specs []tools.Spec) ([]sdk.Tool, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	key := &specs[0]
	c.mu.Lock()
	hit, ok := c.lists[key]
	c.mu.Unlock()
	if ok && sameSpecs(hit.specs, specs) {
		return hit.sdk, nil
	}
	out, err := sdkTools(specs)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.lists == nil || len(c.lists) >= maxToolLists {
		c.lists = make(map[*tools.Spec]convertedTools)
	}
	c.lists[key] = convertedTools{specs: slices.Clone(specs), sdk: out}
	c.mu.Unlock()
	return out, nil
}

func sameSpecs(a, b []tools.Spec) bool {
	return slices.EqualFunc(a, b, func(x, y tools.Spec) bool {
		return x.Name == y.Name && x.Description == y.Description && bytes.Equal(x.Parameters, y.Parameters)
	})
}

// sdkTools converts tool specs to the SDK's tools.
func sdkTools(specs []tools.Spec) ([]sdk.Tool, error) {
	out := make([]sdk.Tool, 0, len(specs))
	for _, spec := range specs {
		params := spec.Parameters
		if len(strings.TrimSpace(string(params))) == 0 {
			params = json.RawMessage(agent.EmptyParameters)
		} else if !json.Valid(params) {
			return nil, fmt.Errorf("tool %q: parameters schema is not valid JSON", spec.Name)
		}
		out = append(out, sdk.Tool{
			Type: sdk.ToolTypeFunction,
			Function: &sdk.FunctionDefinition{
				Name:        spec.Name,
				Description: spec.Description,
				Parameters:  params,
			},
		})
	}
	return out, nil
}

// toSDKMessages converts vigil's history to the SDK's messages.
func toSDKMessages(msgs []agent.Message) ([]sdk.ChatCompletionMessage, error) {
	out := make([]sdk.ChatCompletionMessage, 0, len(msgs))
	for i, msg := range msgs {
		om := sdk.ChatCompletionMessage{Content: msg.Content}
		switch msg.Role {
		case agent.RoleSystem:
			om.Role = sdk.ChatMessageRoleSystem
		case agent.RoleUser:
			om.Role = sdk.ChatMessageRoleUser
		case agent.RoleAssistant:
			om.Role = sdk.ChatMessageRoleAssistant
			for _, tc := range msg.ToolCalls {
				om.ToolCalls = append(om.ToolCalls, sdk.ToolCall{
					ID:       tc.ID,
					Type:     sdk.ToolTypeFunction,
					Function: sdk.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
				})
			}
		case agent.RoleTool:
			if msg.ToolCallID == "" {
				return nil, fmt.Errorf("message %d: tool message without tool_call_id", i)
			}
			om.Role = sdk.ChatMessageRoleTool
			om.ToolCallID = msg.ToolCallID
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, msg.Role)
		}
		out = append(out, om)
	}
	return out, nil
}

// errEmptyAnswer is an answer with no choices at all: a broken response,
// retried.
var errEmptyAnswer = errors.New("the endpoint returned no answer")

// completeOnce is one non-streaming attempt.
func (m *Model) completeOnce(ctx context.Context, creq sdk.ChatCompletionRequest) (agent.ModelResponse, error) {
	resp, err := m.client.CreateChatCompletion(withBody(ctx, creq), creq)
	if err != nil {
		return agent.ModelResponse{}, err
	}
	if len(resp.Choices) == 0 {
		return agent.ModelResponse{}, errEmptyAnswer
	}
	choice := resp.Choices[0]
	out := agent.ModelResponse{
		Content:      choice.Message.Content,
		FinishReason: string(choice.FinishReason),
		Usage: agent.Usage{
			PromptTokens:     resp.Usage.PromptTokens,
			CompletionTokens: resp.Usage.CompletionTokens,
			TotalTokens:      resp.Usage.TotalTokens,
		},
	}
	if out.Content == "" {
		out.Content = choice.Message.Refusal
	}
	for _, tc := range choice.Message.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	m.finish(&out, creq)
	return out, nil
}

// completeStream is one streaming attempt. partial reports whether text
// already reached onDelta.
func (m *Model) completeStream(ctx context.Context, creq sdk.ChatCompletionRequest, onDelta func(string)) (_ agent.ModelResponse, partial bool, _ error) {
	stream, err := m.client.CreateChatCompletionStream(withBody(ctx, creq), creq)
	if err != nil {
		return agent.ModelResponse{}, false, err
	}
	defer stream.Close()
	var acc streamAccumulator
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return agent.ModelResponse{}, acc.emitted, err
		}
		acc.add(chunk, onDelta)
	}
	if !acc.answered {
		return agent.ModelResponse{}, acc.emitted, errEmptyAnswer
	}
	out := acc.response()
	m.finish(&out, creq)
	return out, acc.emitted, nil
}

// finish normalises a response: tool calls without an ID get one, empty
// arguments become {}, nameless calls are dropped, and a missing usage is
// estimated so token budgets still count.
func (m *Model) finish(out *agent.ModelResponse, creq sdk.ChatCompletionRequest) {
	calls := out.ToolCalls[:0]
	for _, tc := range out.ToolCalls {
		if strings.TrimSpace(tc.Name) == "" {
			m.log.Warn("model returned a tool call without a name; ignored", "model", m.model)
			continue
		}
		if tc.ID == "" {
			tc.ID = "call_" + randomHex(8)
		}
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
		calls = append(calls, tc)
	}
	out.ToolCalls = calls
	if len(out.ToolCalls) == 0 {
		out.ToolCalls = nil
	}
	if out.Usage == (agent.Usage{}) {
		out.Usage = estimateUsage(creq, *out)
		m.log.Debug("endpoint reported no usage; estimated", "model", m.model,
			"prompt_tokens", out.Usage.PromptTokens, "completion_tokens", out.Usage.CompletionTokens)
	} else if out.Usage.TotalTokens == 0 {
		out.Usage.TotalTokens = out.Usage.PromptTokens + out.Usage.CompletionTokens
	}
}

// estimateUsage approximates tokens as one per four bytes of text.
func estimateUsage(creq sdk.ChatCompletionRequest, out agent.ModelResponse) agent.Usage {
	est := func(s string) int { return (len(s) + 3) / 4 }
	var u agent.Usage
	for _, msg := range creq.Messages {
		u.PromptTokens += 1 + est(msg.Content)
		for _, tc := range msg.ToolCalls {
			u.PromptTokens += est(tc.Function.Name) + est(tc.Function.Arguments)
		}
	}
	for _, t := range creq.Tools {
		if b, err := json.Marshal(t); err == nil {
			u.PromptTokens += est(string(b))
		}
	}
	u.CompletionTokens = est(out.Content)
	for _, tc := range out.ToolCalls {
		u.CompletionTokens += est(tc.Name) + est(tc.Arguments)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// streamAccumulator assembles a streamed answer: content in order, tool
// calls from their deltas by index.
type streamAccumulator struct {
	content  strings.Builder
	refusal  strings.Builder
	calls    []*streamedCall
	byIndex  map[int]*streamedCall
	finish   string
	usage    *sdk.Usage
	answered bool // a choice or usage arrived
	emitted  bool // text went to onDelta
}

type streamedCall struct {
	id, name string
	args     strings.Builder
}

func (a *streamAccumulator) add(chunk sdk.ChatCompletionStreamResponse, onDelta func(string)) {
	if chunk.Usage != nil {
		a.usage = chunk.Usage
		a.answered = true
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // we ask for one choice
		}
		a.answered = true
		if d := choice.Delta.Content; d != "" {
			a.content.WriteString(d)
			if onDelta != nil {
				a.emitted = true
				onDelta(d)
			}
		}
		a.refusal.WriteString(choice.Delta.Refusal)
		for _, tc := range choice.Delta.ToolCalls {
			a.addToolDelta(tc)
		}
		if choice.FinishReason != "" {
			a.finish = string(choice.FinishReason)
		}
	}
}

// addToolDelta merges one tool-call delta. Deltas carry an index; servers
// that omit it send one call per delta or continue the last one.
func (a *streamAccumulator) addToolDelta(tc sdk.ToolCall) {
	var c *streamedCall
	switch {
	case tc.Index != nil:
		if a.byIndex == nil {
			a.byIndex = map[int]*streamedCall{}
		}
		c = a.byIndex[*tc.Index]
		if c == nil {
			c = &streamedCall{}
			a.byIndex[*tc.Index] = c
			a.calls = append(a.calls, c)
		}
	case len(a.calls) > 0 && (tc.ID == "" || tc.ID == a.calls[len(a.calls)-1].id):
		c = a.calls[len(a.calls)-1]
	default:
		c = &streamedCall{}
		a.calls = append(a.calls, c)
	}
	if c.id == "" {
		c.id = tc.ID
	}
	// Most servers send the name once; some repeat it whole in every
	// delta; pieces of a name are joined.
	if name := tc.Function.Name; name != "" && name != c.name {
		c.name += name
	}
	c.args.WriteString(tc.Function.Arguments)
}

func (a *streamAccumulator) response() agent.ModelResponse {
	out := agent.ModelResponse{Content: a.content.String(), FinishReason: a.finish}
	if out.Content == "" {
		out.Content = a.refusal.String()
	}
	for _, c := range a.calls {
		out.ToolCalls = append(out.ToolCalls, agent.ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	if a.usage != nil {
		out.Usage = agent.Usage{
			PromptTokens:     a.usage.PromptTokens,
			CompletionTokens: a.usage.CompletionTokens,
			TotalTokens:      a.usage.TotalTokens,
		}
	}
	return out
}
