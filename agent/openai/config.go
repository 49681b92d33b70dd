package openai

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vigilops/vigil/confkey"
)

// Config configures a Model. Start from DefaultConfig, which turns
// streaming on; a zero Config does not stream. The fields with
// mapstructure keys are also the llm section of vigil's configuration
// file, so their rules live here once: Validate. Fields tagged "-" are
// set by code.
type Config struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1",
	// "http://localhost:11434/v1" (Ollama), or the Azure resource endpoint
	// "https://NAME.openai.azure.com" with APIType "azure".
	BaseURL string `mapstructure:"base_url"`
	// APIKey is sent as a bearer token (api-key header for Azure). It never
	// appears in errors or logs.
	APIKey confkey.Secret `mapstructure:"api_key"`
	// Model is the model name (the deployment name for Azure).
	Model string `mapstructure:"model"`
	// Temperature 0 means the server's default (the SDK omits zero).
	Temperature float32 `mapstructure:"temperature"`
	// MaxTokens bounds each answer; 0 means the server's default. Sent as
	// max_completion_tokens to models that require it (o-series, gpt-5).
	MaxTokens int `mapstructure:"max_tokens"`
	// Timeout bounds each attempt of a model call, streaming included.
	// Default DefaultModelTimeout.
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRetries is the number of retries after the first attempt on 429,
	// 5xx, timeouts and connection errors. 0 means DefaultModelRetries;
	// negative means no retries.
	MaxRetries int `mapstructure:"max_retries"`
	// Stream asks for server-sent events and hands text to onDelta as it
	// arrives.
	Stream bool `mapstructure:"-"`
	// APIType is "openai" (default: OpenAI and compatible servers such as
	// Ollama, vLLM, LiteLLM) or "azure" (Azure OpenAI deployment URLs).
	APIType string `mapstructure:"api_type"`
	// APIVersion is the Azure API version; default DefaultAzureVersion.
	APIVersion string `mapstructure:"api_version"`
	// Headers are sent with every request: what a gateway in front of the
	// model asks for (an organisation, a project, a LiteLLM or Helicone
	// tag). They cannot replace the authentication header the client
	// sets, and they are written in the file, so they are not for secrets.
	Headers map[string]string `mapstructure:"headers"`
	// BackoffBase is the first retry's backoff, doubled per retry up to
	// BackoffMax, with jitter. Defaults DefaultBackoffBase and
	// DefaultBackoffMax.
	BackoffBase time.Duration `mapstructure:"-"`
	BackoffMax  time.Duration `mapstructure:"-"`
	// MaxRetryAfter caps the wait a server asks for with Retry-After.
	// Default DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration `mapstructure:"-"`
	// HTTPClient is the client to use; nil means a new http.Client. Its
	// Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client `mapstructure:"-" json:"-"`
	// Logger receives retry warnings and per-call debug lines (never
	// prompts or keys); nil discards.
	Logger *slog.Logger `mapstructure:"-" json:"-"`
}

// DefaultConfig returns the defaults: streaming on, DefaultModelTimeout,
// DefaultModelRetries and the default backoff.
func DefaultConfig() Config {
	return Config{
		Timeout:       DefaultModelTimeout,
		MaxRetries:    DefaultModelRetries,
		Stream:        true,
		BackoffBase:   DefaultBackoffBase,
		BackoffMax:    DefaultBackoffMax,
		MaxRetryAfter: DefaultMaxRetryAfter,
	}
}

// Validate checks the keys of the llm section without I/O and reports
// every problem, as *confkey.Error values.
func (c Config) Validate() error {
	es := confkey.NewErrors("llm")
	if strings.TrimSpace(c.BaseURL) == "" {
		es.Add("base_url", "is empty")
	} else if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		es.AddValue("base_url", redactURL(c.BaseURL), "is not an http(s) URL; it must start with http:// or https://")
	}
	if strings.TrimSpace(c.Model) == "" {
		es.Add("model", "is empty; name the model to use at %s", redactURL(c.BaseURL))
	}
	if c.Temperature < 0 || c.Temperature > 2 {
		es.AddValue("temperature", c.Temperature, "is out of range [0, 2]")
	}
	if c.MaxTokens < 0 {
		es.AddValue("max_tokens", c.MaxTokens, "is negative")
	}
	if c.Timeout < 0 {
		es.AddValue("timeout", c.Timeout, "is negative")
	}
	switch strings.ToLower(c.APIType) {
	case "", openAIAPITypeOpenAI, openAIAPITypeAzure:
	default:
		es.AddValue("api_type", c.APIType, "is unknown; use openai or azure")
	}
	for k, v := range c.Headers {
		if err := checkHeader(k, v); err != nil {
			es.AddValue("headers", k, "%v", err)
		}
	}
	return es.Err()
}
