package policy

// ChangeDetail is one line of what a write will change, as its approval
// card shows it: "matchers" → `alertname="HighLatency"`, "replicas" → "5".
// Tools describe the change; the card renders the lines as they are, so an
// approver sees the exact change whatever the platform.
type ChangeDetail struct {
	Label string `json:"label"`
	Value string `json:"value"`
}
