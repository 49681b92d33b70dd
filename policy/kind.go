package policy

// Kind is what a tool call does to the world, as far as the session state
// machine is concerned (SPEC A4, T2).
type Kind string

const (
	// KindResolve finds resources: inventory queries and discovery.
	KindResolve Kind = "resolve"
	// KindRead observes a resource without changing it.
	KindRead Kind = "read"
	// KindWrite may change something. Anything not known to be otherwise is
	// a write.
	KindWrite Kind = "write"
)
