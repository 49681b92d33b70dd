package policy

// ClassifyCommand decides whether a shell command is provably read-only and
// whether it terminates by itself (SPEC P1, P2). It is safe for concurrent use.
//
// This is a conservative placeholder: every command is write-or-unknown until
// the full classifier lands.
func ClassifyCommand(cmd string) Verdict {
	return Verdict{
		Command: cmd,
		Intent:  IntentWriteOrUnknown,
		Risk:    RiskMedium,
		Reasons: []string{"classifier: not yet implemented"},
		Bounded: true,
	}
}
