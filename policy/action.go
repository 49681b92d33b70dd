package policy

import "github.com/vigilops/vigil/policy/command"

// Action is a proposed tool call as policy sees it: decoded, typed and
// stripped of everything that does not bear on the decision. Tools build it
// from the model's arguments (tools.Proposal embeds it); policy never parses
// model output itself.
type Action struct {
	// Tool is the tool name the model called, e.g. "read" or "control".
	Tool string `json:"tool"`
	// Name is the tool's action parameter ("exec", "restart", ...), or "".
	Name string `json:"action,omitempty"`
	// Kind is what the call does, from the tool's declaration for this action.
	Kind Kind `json:"kind"`
	// Target names the resource the call operates on, as the model gave it;
	// "" when the call has no target (inventory search, knowledge).
	Target string `json:"target,omitempty"`
	// Command is the exact shell command the call would run, or "". For a
	// file write (Path set) it describes the write instead; policy judges
	// such a write by its Path.
	Command string `json:"command,omitempty"`
	// Dialect is the shell that runs Command on the machine that executes
	// it (the target's inventory shell): the gate classifies the command
	// in that dialect, and it runs with that shell. "" means bash.
	Dialect command.Dialect `json:"dialect,omitempty"`
	// Path is the file the call reads or writes, for tools that name one
	// (file_edit), or "".
	Path string `json:"path,omitempty"`
	// Reaches are what the call touches besides Target, as a channel's
	// scope sees them (a datasource, a cluster and namespace, a plugin),
	// filled by the registry from the call's own arguments.
	Reaches []Reach `json:"-"`
}
