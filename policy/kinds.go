package policy

// ActionKinds is a tool's declaration of what its calls do, made next to its
// schema (SPEC A4, T2): either one kind for every call, or one kind per
// value of the tool's action parameter. Tools declare; policy decides what a
// declaration means through KindOf, the single answer to "does this call
// count as a read". The FSM must classify by tool and action, never by the
// command a call carries, or a grep sent through control would look like a
// read.
type ActionKinds struct {
	// Every is the kind of every call, for a tool whose calls all share
	// one kind (or that has no action parameter).
	Every Kind
	// Actions maps each action value to its kind. Matching is exact: the
	// tool contract spells actions in lower case, so "EXEC" is not "exec".
	Actions map[string]Kind
}

// KindOf is the kind of a call with the given action. Whatever the
// declaration does not state is a write: an undeclared action, an empty
// declaration, or a kind policy does not know.
func (d ActionKinds) KindOf(action string) Kind {
	k := d.Every
	if k == "" {
		k = d.Actions[action]
	}
	if !k.known() {
		return KindWrite
	}
	return k
}

// Declares reports whether action has a kind of its own in the declaration
// (Every covers every action).
func (d ActionKinds) Declares(action string) bool {
	if d.Every != "" {
		return d.Every.known()
	}
	k, ok := d.Actions[action]
	return ok && k.known()
}

// Valid reports whether the declaration states one known kind for every
// call or for each listed action, and not both.
func (d ActionKinds) Valid() bool {
	if d.Every != "" {
		return d.Actions == nil && d.Every.known()
	}
	if len(d.Actions) == 0 {
		return false
	}
	for _, k := range d.Actions {
		if !k.known() {
			return false
		}
	}
	return true
}

func (k Kind) known() bool {
	return k == KindResolve || k == KindRead || k == KindWrite
}
