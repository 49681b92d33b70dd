package agent

import (
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

// redactJSON redacts a JSON document by key path (policy/redact's
// structural pass) and keeps it valid JSON: every string is judged decoded
// (real newlines, unescaped quotes) together with the keys above it, so a
// value under a key that names a secret is masked however deeply it is
// nested, arrays included ({"label":"password","values":[…]} loses its
// values); a name/value pair naming a secret loses its value; a Kubernetes
// Secret loses its data; and a string that is itself a JSON, YAML or
// base64 document is walked the same way. Text that is not JSON is
// redacted as text.
func redactJSON(raw string) string { return redact.JSON(raw) }
