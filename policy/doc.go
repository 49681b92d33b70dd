// Package policy holds every allow/deny decision vigil makes about a proposed
// action: command intent and exit-boundedness, the session state machine,
// strict resolution and routing, control levels, approvals, roles, audit and
// redaction.
//
// Decisions are pure functions over typed inputs. The package does no I/O of
// its own beyond the stores it is handed, and it knows nothing of chat
// platforms or models.
package policy
