package agent

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/vigilops/vigil/policy/redact"
	"github.com/vigilops/vigil/tools"
)

// modelContent renders a tool result for the model's history: the
// envelope's JSON with every secret in it redacted (policy.redact_model_input),
// so that a model, often a hosted API, never receives a credential a tool
// printed. The history is also what the session store keeps, so secrets
// stay out of it too.
func (a *Agent) modelContent(env tools.Envelope) string {
	raw := env.JSON()
	if a.cfg.UnredactedModelInput {
		return raw
	}
	return redactJSON(raw)
}

// redactJSON redacts the strings of a JSON document, keeping it valid
// JSON: a secret is found in the decoded text (real newlines, unescaped
// quotes), never by rewriting escapes. A string under an object key is
// read together with its key, so {"DB_PASSWORD": "x"} loses its value
// even though "x" alone looks like nothing.
func redactJSON(raw string) string {
	if !redact.Suspect(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		// Not JSON (never the case for an envelope): redact it as text.
		return redact.String(raw)
	}
	v, changed := redactValue(v, "")
	if !changed {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return redact.String(raw)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// redactValue redacts the strings in v; key is the object key v is the
// value of, or "".
func redactValue(v any, key string) (any, bool) {
	switch t := v.(type) {
	case string:
		return redactKeyed(key, t)
	case []any:
		changed := false
		for i, e := range t {
			if r, c := redactValue(e, ""); c {
				t[i], changed = r, true
			}
		}
		return t, changed
	case map[string]any:
		changed := false
		for k, e := range t {
			r, c := redactValue(e, k)
			k2 := redact.String(k)
			if k2 != k {
				delete(t, k)
				c = true
			}
			if c {
				t[k2], changed = r, true
			}
		}
		return t, changed
	}
	return v, false
}

// redactKeyed redacts s, read as the value of key when there is one.
func redactKeyed(key, s string) (string, bool) {
	if key != "" {
		prefix := key + ": "
		if out := redact.String(prefix + s); out != prefix+s {
			if rest, ok := strings.CutPrefix(out, prefix); ok {
				return rest, true
			}
		}
	}
	out := redact.String(s)
	return out, out != s
}
