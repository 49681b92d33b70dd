package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/transport"
)

// KnowledgeAction is the knowledge tool's action.
type KnowledgeAction string

const (
	KnowledgeRecall   KnowledgeAction = "recall"
	KnowledgeSearch   KnowledgeAction = "search"
	KnowledgeRemember KnowledgeAction = "remember"
	KnowledgeNote     KnowledgeAction = "note"
	KnowledgeSave     KnowledgeAction = "save"
)

func (KnowledgeAction) EnumValues() []string {
	return []string{"recall", "search", "remember", "note", "save"}
}

// Limits of the knowledge tool.
const (
	maxMemoryContent = 4000
	maxMemoryKey     = 128
	maxMemoryTags    = 10
	searchLimit      = 10
)

var tagPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,31}$`)

// KnowledgeArgs are the knowledge tool's arguments (SPEC T2).
type KnowledgeArgs struct {
	Action  KnowledgeAction `json:"action" jsonschema:"recall: the memory stored under key, or the best matches for query. search: memories matching query. remember and save: store content under key (replacing what was there). note: store content, keyed by itself unless key is given."`
	Query   string          `json:"query,omitempty" jsonschema:"recall and search: words to look for in keys, tags and content"`
	Key     string          `json:"key,omitempty" jsonschema:"a short name for the memory, e.g. media-server-backup-schedule"`
	Content string          `json:"content,omitempty" jsonschema:"remember, save and note: what to store; at most 4000 characters"`
	Tags    []string        `json:"tags,omitempty" jsonschema:"remember, save and note: up to 10 tags, e.g. the resources it concerns"`
}

func (a *KnowledgeArgs) Validate() error {
	if err := tools.CheckText("key", a.Key, true); err != nil {
		return err
	}
	if len(a.Key) > maxMemoryKey {
		return tools.FieldErrorf("key", "longer than %d characters", maxMemoryKey)
	}
	if err := tools.CheckText("query", a.Query, true); err != nil {
		return err
	}
	act := string(a.Action)
	switch a.Action {
	case KnowledgeRecall:
		if a.Key == "" && a.Query == "" {
			return tools.FieldErrorf("query", "recall needs key or query")
		}
		if err := tools.NotUsed("content", act, a.Content != ""); err != nil {
			return err
		}
		return tools.NotUsed("tags", act, len(a.Tags) > 0)
	case KnowledgeSearch:
		if a.Query == "" {
			return tools.FieldErrorf("query", "required for action search")
		}
		if err := tools.NotUsed("key", act, a.Key != ""); err != nil {
			return err
		}
		if err := tools.NotUsed("content", act, a.Content != ""); err != nil {
			return err
		}
		return tools.NotUsed("tags", act, len(a.Tags) > 0)
	default: // remember, save, note
		if a.Content == "" {
			return tools.FieldErrorf("content", "required for action %s", act)
		}
		if a.Key == "" && a.Action != KnowledgeNote {
			return tools.FieldErrorf("key", "required for action %s", act)
		}
		if len(a.Content) > maxMemoryContent {
			return tools.FieldErrorf("content", "is %d characters; the limit is %d", len(a.Content), maxMemoryContent)
		}
		if err := tools.CheckText("content", a.Content, false); err != nil {
			return err
		}
		if len(a.Tags) > maxMemoryTags {
			return tools.FieldErrorf("tags", "at most %d tags, got %d", maxMemoryTags, len(a.Tags))
		}
		for _, tag := range a.Tags {
			if !tagPattern.MatchString(tag) {
				return tools.FieldErrorf("tags", "tag %q: want 1-32 letters, digits, '.', '_', ':' or '-'", tag)
			}
		}
		return tools.NotUsed("query", act, a.Query != "")
	}
}

// KnowledgeTool is the `knowledge` tool: long-term memories, read with
// recall and search, written with remember, note and save.
type KnowledgeTool struct {
	store MemoryStore
	now   func() time.Time
	spec  tools.Spec
}

var _ tools.ToolOf[KnowledgeArgs] = (*KnowledgeTool)(nil)

// NewKnowledgeTool returns the knowledge tool over store.
func NewKnowledgeTool(store MemoryStore) tools.Tool {
	return tools.Typed[KnowledgeArgs](&KnowledgeTool{store: store, now: time.Now, spec: knowledgeToolSpec()})
}

func (t *KnowledgeTool) Spec() tools.Spec { return t.spec }

// knowledgeToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func knowledgeToolSpec() tools.Spec {
	return tools.Spec{
		Name: "knowledge",
		Description: "Long-term memory shared across conversations: recall or search what was learned before, and " +
			"remember durable facts (schedules, conventions, where things are) for later. Do not store secrets or " +
			"anything that changes by the minute.",
		Kinds: policy.ActionKinds{Actions: map[string]policy.Kind{
			string(KnowledgeRecall): policy.KindRead, string(KnowledgeSearch): policy.KindRead,
			string(KnowledgeRemember): policy.KindWrite, string(KnowledgeNote): policy.KindWrite, string(KnowledgeSave): policy.KindWrite,
		}},
	}
}

func (t *KnowledgeTool) Plan(a KnowledgeArgs) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{
		Action: policy.Action{Tool: "knowledge", Name: string(a.Action)},
	}
	switch a.Action {
	case KnowledgeRecall:
		if a.Key != "" {
			p.Summary = "recall memory " + a.Key
		} else {
			p.Summary = "recall memories about " + a.Query
		}
	case KnowledgeSearch:
		p.Summary = "search memories for " + a.Query
	default:
		p.Summary = fmt.Sprintf("%s %q (%d characters)", a.Action, memoryKey(a), len(a.Content))
	}
	return p, nil
}

// memoryKey is the key a write stores under: the given one, or for a note
// without one, a name derived from the content.
func memoryKey(a KnowledgeArgs) string {
	if a.Key != "" {
		return a.Key
	}
	sum := sha256.Sum256([]byte(a.Content))
	return "note-" + hex.EncodeToString(sum[:6])
}

func (t *KnowledgeTool) Run(ctx context.Context, a KnowledgeArgs, p tools.Proposal) tools.Result {
	switch a.Action {
	case KnowledgeRecall, KnowledgeSearch:
		q := a.Query
		if q == "" {
			q = a.Key
		}
		ms, err := t.store.Search(ctx, q, searchLimit)
		if err != nil {
			return tools.Result{Envelope: execFailed(nil, fmt.Errorf("%w: memory store: %w", transport.ErrTransport, err))}
		}
		if a.Key != "" {
			for _, m := range ms {
				if m.Key == a.Key {
					return tools.Result{Envelope: tools.OK(map[string]any{"memories": []Memory{m}, "count": 1})}
				}
			}
			return tools.Result{Envelope: tools.FailedWith(policy.CodeNotFound, fmt.Sprintf("no memory is stored under key %q", a.Key),
				"search with query to find related memories", map[string]any{"key": a.Key})}
		}
		if ms == nil {
			ms = []Memory{}
		}
		return tools.Result{Envelope: tools.OK(map[string]any{"memories": ms, "count": len(ms)})}
	default:
		tags := make([]string, len(a.Tags))
		for i, tag := range a.Tags {
			tags[i] = strings.ToLower(tag)
		}
		m := Memory{Key: memoryKey(a), Content: a.Content, Tags: tags, At: t.now()}
		if err := t.store.Remember(ctx, m); err != nil {
			return tools.Result{Envelope: execFailed(nil, fmt.Errorf("%w: memory store: %w", transport.ErrTransport, err))}
		}
		return tools.Result{Envelope: tools.OK(map[string]any{"saved": m.Key, "characters": len(m.Content)})}
	}
}
