package eval

// JudgeScore is the optional judge model's opinion of a run, reported
// beside the deterministic grade, never instead of it.
type JudgeScore struct {
	RootCause   int    `json:"root_cause"`
	Evidence    int    `json:"evidence"`
	Explanation int    `json:"explanation"`
	Notes       string `json:"notes,omitempty"`
	Error       string `json:"error,omitempty"`
}
