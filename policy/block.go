package policy

import "fmt"

// Code names why a tool call was refused or failed. The values are part of the
// tool protocol the model sees (SPEC T1) and must not change.
type Code string

const (
	CodeStrictResolution Code = "STRICT_RESOLUTION"
	CodeFSMBlocked       Code = "FSM_BLOCKED"
	CodeRoutingMismatch  Code = "ROUTING_MISMATCH"
	CodeApprovalRequired Code = "APPROVAL_REQUIRED"
	CodeNotFound         Code = "NOT_FOUND"
	CodeActionNotAllowed Code = "ACTION_NOT_ALLOWED"
	CodePolicyBlocked    Code = "POLICY_BLOCKED"
	CodeInvalidInput     Code = "INVALID_INPUT"
	CodeExecutionFailed  Code = "EXECUTION_FAILED"
	CodeLoopDetected     Code = "LOOP_DETECTED"
)

// Block is a refusal the model can learn from: it names the rule that fired,
// says how to recover, and, where policy knows a safe alternative, carries it
// as SuggestedRewrite so the agent may retry once on its own (SPEC A12).
type Block struct {
	Code            Code
	Message         string
	RecoveryHint    string
	AutoRecoverable bool
	// SuggestedRewrite is a replacement command (for exit-boundedness blocks)
	// or target (for routing mismatches); empty when none exists.
	SuggestedRewrite string
	// Details carries extra machine-readable facts (the classifier's reasons,
	// the child resource of a routing mismatch, ...). Keys are snake_case.
	Details map[string]any
}

func (b *Block) Error() string {
	if b.RecoveryHint == "" {
		return fmt.Sprintf("%s: %s", b.Code, b.Message)
	}
	return fmt.Sprintf("%s: %s (%s)", b.Code, b.Message, b.RecoveryHint)
}
