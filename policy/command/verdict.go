package command

// Intent is what the classifier can prove about a shell command (SPEC P1).
type Intent string

const (
	// IntentReadOnlyCertain: every part of the command is read-only by
	// construction.
	IntentReadOnlyCertain Intent = "read_only_certain"
	// IntentReadOnlyConditional: read-only after a content inspector looked
	// inside a dual-use tool's arguments (SQL clients, redis-cli).
	IntentReadOnlyConditional Intent = "read_only_conditional"
	// IntentWriteOrUnknown: may change something, or could not be proven not to.
	IntentWriteOrUnknown Intent = "write_or_unknown"
)

// Risk grades a command for people deciding on it.
type Risk string

const (
	RiskReadOnly Risk = "read_only"
	RiskLow      Risk = "low"
	RiskMedium   Risk = "medium"
	RiskHigh     Risk = "high"
)

// BoundCategory says why a command would not terminate by itself (SPEC P2).
type BoundCategory string

const (
	BoundOK              BoundCategory = ""
	BoundTTYFlag         BoundCategory = "tty_flag"
	BoundPager           BoundCategory = "pager"
	BoundUnboundedStream BoundCategory = "unbounded_stream"
	BoundInteractiveREPL BoundCategory = "interactive_repl"
)

// Dialect is the shell grammar a command is read in. A verdict holds only
// for the dialect it was reached in: the same text can mean different
// things to bash and to a POSIX sh such as dash, so the command must run
// with the shell the verdict names.
type Dialect string

const (
	// DialectBash is GNU bash, run as `bash -c`.
	DialectBash Dialect = "bash"
	// DialectPOSIX is a POSIX sh (dash, busybox ash), run as `sh -c`.
	DialectPOSIX Dialect = "sh"
)

// Verdict is the classifier's whole decision about one command. Its JSON form
// is what `vigil explain-command` prints; keep the field names stable.
type Verdict struct {
	Command string `json:"command"`
	// Dialect is the shell the command was read as and must be run with.
	Dialect Dialect `json:"dialect"`
	Intent  Intent  `json:"intent"`
	Risk    Risk    `json:"risk"`
	// Reasons has one entry per finding, each naming the word that decided it.
	Reasons []string `json:"reasons"`
	// Bounded reports whether the command terminates by itself.
	Bounded  bool          `json:"bounded"`
	Category BoundCategory `json:"category"`
	// SuggestedRewrite is a bounded equivalent when Bounded is false and one
	// exists; empty otherwise.
	SuggestedRewrite string `json:"suggested_rewrite"`
	// Network reports that the command, read-only as it is, talks over the
	// network (a DNS lookup, an HTTP GET, a port check): a sandbox running
	// it must let it connect out. False for write verdicts.
	Network bool `json:"network"`
	// Destinations are the endpoints a network read connects to, each
	// proven from static text in the command and known to vigil (SPEC R1).
	// A sandbox lets the command connect to these ports and no others.
	// Empty for write verdicts and for reads that use no network.
	Destinations []Destination `json:"destinations,omitempty"`
}

// Destination is one network endpoint a read connects to: a host name or
// address as the command spells it (after vigil resolved it through its
// own tables, never DNS) and a TCP or UDP port.
type Destination struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

// ReadOnly reports whether the command was proven not to change anything.
func (v Verdict) ReadOnly() bool {
	return v.Intent == IntentReadOnlyCertain || v.Intent == IntentReadOnlyConditional
}
