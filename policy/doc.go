// Package policy holds every allow/deny decision vigil makes about a proposed
// action: the gate every tool call passes (Gate.Authorize), the session
// state machine, strict resolution and routing, control levels, approvals
// and roles.
//
// Decisions are pure functions over typed inputs. The package does no I/O of
// its own beyond the stores it is handed, and it knows nothing of chat
// platforms or models.
//
// Its rooms: policy/command is the shell-command classifier the gate
// consults for every command (one entry point, per-tool grammars as data);
// policy/audit is the hash-chained record of decisions; policy/redact is the
// secret filter applied to everything posted, logged or audited. Audit and
// redaction record and filter; they decide nothing, so they live beside the
// decisions rather than among them.
package policy
