package agent

import (
	"encoding/json"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/vigilops/vigil/tools"
)

// TokenCounter counts the tokens of a text the way the model will. Counts
// are for budgeting the prompt: close is enough, over is better than under.
type TokenCounter interface {
	Count(text string) int
	// Exact reports whether counts come from the model's own tokenizer
	// (false: an estimate from the byte length).
	Exact() bool
}

// messageOverhead is what a chat message costs beyond its text: the role
// and the separators OpenAI's chat format wraps it in (the OpenAI cookbook
// counts 3 per message and 1 per name; 4 covers both).
const messageOverhead = 4

// replyPriming is what every request costs beyond its messages: the
// assistant turn the model is primed with.
const replyPriming = 3

// NewTokenCounter returns a counter for model: the tiktoken encoding of an
// OpenAI model (gpt-4o, gpt-4.1, gpt-4, gpt-3.5-turbo, o1/o3/o4, gpt-5 and
// their dated variants, also behind a "provider/" prefix as LiteLLM names
// them), whose vocabularies are compiled into the binary, so counting needs
// no network. Any other model (Ollama, vLLM, Azure deployment names) gets a
// byte estimate that errs on the high side.
func NewTokenCounter(model string) TokenCounter {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimPrefix(name, "ft:")
	for _, e := range encodings {
		for _, p := range e.prefixes {
			if strings.HasPrefix(name, p) {
				return newCachedCounter(codecCounter{e.codec()})
			}
		}
	}
	return ByteEstimate{}
}

// encodings map model name prefixes to their tiktoken encoding, as
// tiktoken does for chat models. Only these two vocabularies are linked
// into the binary (about 5 MB each); older completion models count by
// bytes.
var encodings = []struct {
	prefixes []string
	codec    func() tokenizer.Codec
}{
	{[]string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4"}, func() tokenizer.Codec { return codec.NewO200kBase() }},
	{[]string{"gpt-4", "gpt-3.5", "gpt-35", "text-embedding-"}, func() tokenizer.Codec { return codec.NewCl100kBase() }},
}

// ByteEstimate counts a token per three bytes, rounded up: logs, JSON and
// command output tokenize denser than prose (about four bytes per token),
// and an estimate for a budget should not come out low.
type ByteEstimate struct{}

// Count implements TokenCounter.
func (ByteEstimate) Count(text string) int { return (len(text) + 2) / 3 }

// Exact implements TokenCounter.
func (ByteEstimate) Exact() bool { return false }

type codecCounter struct{ c tokenizer.Codec }

func (c codecCounter) Count(text string) int {
	n, err := c.c.Count(text)
	if err != nil {
		return ByteEstimate{}.Count(text)
	}
	return n
}

func (codecCounter) Exact() bool { return true }

// cachedCounter remembers the counts of texts it saw: a prompt is mostly
// the previous prompt again, so each model call tokenizes only what is new.
// The cache is bounded; when full it starts over.
type cachedCounter struct {
	inner codecCounter
	seed  maphash.Seed
	mu    sync.Mutex
	seen  map[uint64]int
}

// counterCacheSize bounds the texts remembered (a hash and a count each).
const counterCacheSize = 8192

// cacheMinLen is the shortest text worth remembering.
const cacheMinLen = 64

func newCachedCounter(c codecCounter) *cachedCounter {
	return &cachedCounter{inner: c, seed: maphash.MakeSeed(), seen: map[uint64]int{}}
}

func (c *cachedCounter) Count(text string) int {
	if len(text) < cacheMinLen {
		return c.inner.Count(text)
	}
	h := maphash.String(c.seed, text)
	c.mu.Lock()
	n, ok := c.seen[h]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = c.inner.Count(text)
	c.mu.Lock()
	if len(c.seen) >= counterCacheSize {
		clear(c.seen)
	}
	c.seen[h] = n
	c.mu.Unlock()
	return n
}

func (c *cachedCounter) Exact() bool { return true }

// messageTokens is what one message adds to a request.
func messageTokens(tc TokenCounter, m Message) int {
	n := messageOverhead + tc.Count(m.Content)
	for _, c := range m.ToolCalls {
		n += tc.Count(c.Name) + tc.Count(c.Arguments) + messageOverhead
	}
	if m.Name != "" {
		n++
	}
	return n
}

// RequestTokens is the prompt size of a request as the budget sees it: its
// messages and the tool schemas offered with them.
func RequestTokens(tc TokenCounter, req ModelRequest) int {
	n := replyPriming + toolsTokens(tc, req.Tools)
	for _, m := range req.Messages {
		n += messageTokens(tc, m)
	}
	return n
}

// toolsTokens is what offering specs costs: their JSON, as the API sends it.
func toolsTokens(tc TokenCounter, specs []tools.Spec) int {
	if len(specs) == 0 {
		return 0
	}
	raw, err := json.Marshal(specs)
	if err != nil {
		return 0
	}
	return tc.Count(string(raw))
}
