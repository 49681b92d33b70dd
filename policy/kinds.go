package policy

// toolKinds is how one built-in tool's calls classify. A tool whose calls all
// share one kind sets every; an action-dependent tool lists its actions, and
// any action missing from the list is a write.
type toolKinds struct {
	every   Kind
	actions map[string]Kind
}

// builtinKinds is the classification table for the built-in tools of SPEC T2.
// It is data rather than code so that reviewing a change to what a tool may do
// in which FSM state means reading one table. Never mutated after init.
var builtinKinds = map[string]toolKinds{
	"query":    {every: KindResolve},
	"discover": {every: KindResolve},
	"metrics":  {every: KindRead},
	"control":  {every: KindWrite},
	"read": {actions: map[string]Kind{
		"exec": KindRead, "file": KindRead, "find": KindRead, "tail": KindRead, "logs": KindRead,
	}},
	"file_edit": {actions: map[string]Kind{
		"read": KindRead, "write": KindWrite, "append": KindWrite,
	}},
	"alerts": {actions: map[string]Kind{
		"list": KindRead, "get": KindRead,
		"silence": KindWrite, "resolve": KindWrite, "dismiss": KindWrite,
	}},
	"knowledge": {actions: map[string]Kind{
		"recall": KindRead, "search": KindRead,
		"remember": KindWrite, "note": KindWrite, "save": KindWrite,
	}},
}

// KindOf classifies a built-in tool call for the session state machine
// (SPEC A4, T2). It is the single answer to "does this call count as a read":
// the FSM must classify by tool and action, never by the command a call
// carries, or a grep sent through control would look like a read.
//
// Matching is exact: the tool contract spells names and actions in lower
// case, so "Read" or "EXEC" is not something policy recognises, and whatever
// policy does not recognise is a write. That covers unknown tools, unknown
// actions of known tools, and plugin tools (`<plugin>_<tool>`), whose kind
// comes from their MCP annotations and is decided by the plugin layer.
func KindOf(tool, action string) Kind {
	tk, ok := builtinKinds[tool]
	if !ok {
		return KindWrite
	}
	if tk.every != "" {
		return tk.every
	}
	if k, ok := tk.actions[action]; ok {
		return k
	}
	return KindWrite
}
