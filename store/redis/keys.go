package redis

import (
	"fmt"
	"strings"
	"time"
)

// Every Redis key vigil uses is built here and nowhere else (STYLE 7).
//
// Layout, after the configurable prefix (default "vigil:"):
//
//	session:{<session key>}:meta      hash   session fields but history;
//	                                         history length and digest
//	session:{<session key>}:history   list   one JSON message per entry
//	                                         TTL: SessionTTL, refreshed on save
//	lock:{<lock key>}                 string holder's random token
//	                                         TTL: the lock's ttl (PX)
//	dedup:<key>                       string "1"
//	                                         TTL: the caller's ttl (PX)
//	{approvals}:approval:<id>         string approval JSON
//	                                         TTL: until ExpiresAt, plus ApprovalRetention
//	{approvals}:pending               zset   pending IDs scored by ExpiresAt (ms)
//	                                         no TTL: an index of live records;
//	                                         entries leave on decision and stale
//	                                         ones are pruned by ListPending
//	{approvals}:executing             set    IDs of approvals claimed for
//	                                         execution; entries leave when the
//	                                         status moves on, stale ones are
//	                                         pruned by ListExecuting
//	{audit}:log                       list   audit record JSON, oldest first
//	{audit}:head                      hash   seq and hash of the newest record
//	                                         no TTL: an audit trail must not
//	                                         vanish; the log is capped at
//	                                         AuditLimit records, the head never is
//	{memory}:items                    hash   long-term memory JSON by memory key
//	{memory}:recent                   zset   memory keys scored by time (ms)
//	                                         no TTL: long-term by definition;
//	                                         capped at MemoryLimit, oldest go
//	plugin:{<plugin>}:kv              hash   a plugin's own key-value namespace
//	                                         no TTL: plugin state is durable;
//	                                         capped per plugin (entries and sizes)
//	rate:{<key>}                      string the sliding window's next arrival
//	                                         time (GCRA, µs); TTL: at most the window
//	budget:tokens:<YYYY-MM-DD>        string tokens spent that UTC day
//	                                         TTL: 48h
//	alertgroup:<group key>            string alert group JSON (bot.AlertGroup)
//	                                         TTL: the caller's, refreshed on save
//	{alertgroups}:due                 zset   keys of groups whose investigation is
//	                                         pending, scored by DueAt (ms); no TTL:
//	                                         an index of live records, entries leave
//	                                         when the group is saved not pending, and
//	                                         stale ones are pruned by DueAlertGroups.
//	                                         It is not in its groups' hash slots:
//	                                         the record is written first, then the
//	                                         index, in separate commands
//	alertopen:{<route>}               zset   keys of a route's open alert groups,
//	                                         scored by when each stops counting (ms);
//	                                         TTL: the latest of those, so an idle
//	                                         route's set goes
//	alertevent:<event id>             string "1": an alert source's event seen
//	                                         TTL: the caller's (the freshness window)
//	runs:active                       hash   thread key -> thread ref JSON of
//	                                         runs in progress; no TTL: an
//	                                         index of live runs, entries leave
//	                                         when the run ends
//
// Keys that one script or transaction touches together share a hash tag
// ({...}), so the layout also works on Redis Cluster: a session's two keys
// share {<session key>} (the thread key), approvals and their pending index
// share {approvals}, the audit log and head share {audit}, memories share
// {memory}.

// keys builds keys under one prefix.
type keys struct {
	prefix string
}

// validPrefix rejects prefixes that would break hash tags or read badly.
func validPrefix(p string) error {
	if strings.ContainsAny(p, "{} \t\r\n") {
		return fmt.Errorf("key prefix %q must not contain braces or whitespace", p)
	}
	return nil
}

func (k keys) sessionMeta(key string) string    { return k.prefix + "session:{" + key + "}:meta" }
func (k keys) sessionHistory(key string) string { return k.prefix + "session:{" + key + "}:history" }

func (k keys) lock(key string) string  { return k.prefix + "lock:{" + key + "}" }
func (k keys) dedup(key string) string { return k.prefix + "dedup:" + key }

func (k keys) alertGroup(key string) string { return k.prefix + "alertgroup:" + key }

func (k keys) approval(id string) string  { return k.prefix + "{approvals}:approval:" + id }
func (k keys) approvalsPending() string   { return k.prefix + "{approvals}:pending" }
func (k keys) approvalsExecuting() string { return k.prefix + "{approvals}:executing" }

func (k keys) auditLog() string  { return k.prefix + "{audit}:log" }
func (k keys) auditHead() string { return k.prefix + "{audit}:head" }

func (k keys) memoryItems() string  { return k.prefix + "{memory}:items" }
func (k keys) memoryRecent() string { return k.prefix + "{memory}:recent" }

func (k keys) runsActive() string { return k.prefix + "runs:active" }

func (k keys) pluginKV(plugin string) string { return k.prefix + "plugin:{" + plugin + "}:kv" }

// rate holds key's sliding-window rate limit state.
func (k keys) rate(key string) string { return k.prefix + "rate:{" + key + "}" }

// budget is the token counter of day's UTC date.
func (k keys) budget(day time.Time) string {
	return k.prefix + "budget:tokens:" + day.UTC().Format(time.DateOnly)
}

// all matches every key under the prefix (tests' cleanup, SCAN).
func (k keys) all() string { return escapeGlob(k.prefix) + "*" }

// escapeGlob quotes the glob metacharacters of s for SCAN MATCH.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (k keys) alertDue() string { return k.prefix + "{alertgroups}:due" }

func (k keys) alertOpen(route string) string { return k.prefix + "alertopen:{" + route + "}" }
func (k keys) alertEvent(id string) string   { return k.prefix + "alertevent:" + id }
