package jsontree

import (
	"regexp"
	"strings"
	"time"
)

// Ranks of a leaf: the short form of a structured result keeps the values
// an investigation reasons about, so leaves are ranked and the least
// useful go first until a result fits.
const (
	Noise    = iota // notes, orderings, long prose
	Time            // timestamps and windows
	Text            // other strings
	Identity        // what a value is about: names, series, targets
	Value           // numbers
	State           // states, flags and errors: read first
)

// LongText is the length over which a string with no telling key is prose:
// too long to be kept as evidence, so ranked as Noise.
const LongText = 320

var (
	identityKeys = setOf("name", "series", "alertname", "id", "instance", "pod", "namespace", "service", "target",
		"resource", "node", "host", "container", "job", "unit", "metric", "query", "labels", "path", "deployment")
	stateKeys = setOf("status", "state", "phase", "health", "ready", "direction", "result", "severity", "reason",
		"error", "message", "exit_code", "code", "condition", "conditions", "type", "trend", "steady", "kind")
	noiseKeys = setOf("note", "ordered_by", "description", "hint", "help", "shown", "omitted_note", "generator_url",
		"runbook_url", "url", "html_url", "summary_note")
)

// Rank ranks a scalar leaf under key.
func Rank(key string, n *Node) int {
	k := strings.ToLower(key)
	switch {
	case n.Kind == Scalar:
		switch {
		case isTimeKey(k):
			return Time
		case n.Raw == "true" || n.Raw == "false":
			return State
		}
		return Value
	case stateKeys[k] || strings.Contains(k, "error") || strings.Contains(k, "status"):
		return State
	case noiseKeys[k]:
		return Noise
	case isTimeKey(k) || looksLikeTime(n.Str):
		return Time
	case identityKeys[k]:
		return Identity
	case MentionsError(n.Str):
		return State
	case len(n.Str) > LongText:
		return Noise
	}
	return Text
}

func isTimeKey(k string) bool {
	return k == "at" || k == "start" || k == "end" || k == "step" || k == "time" || k == "timestamp" ||
		strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_time") || strings.HasSuffix(k, "_ts")
}

func looksLikeTime(s string) bool {
	if len(s) < 10 || len(s) > 40 {
		return false
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC3339, time.DateTime} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

var reErrWord = regexp.MustCompile(`(?i)\b(error|errors|fatal|panic|failed|failure|exception|refused|denied|timed out|timeout|oom|out of memory|killed|unreachable|cannot|segfault|traceback|critical|emerg)\b`)

// errorStems are the lower-case stems of reErrWord's words: a line with
// none of them cannot match it.
var errorStems = []string{"err", "fatal", "panic", "fail", "exception", "refused", "denied", "time", "oom",
	"out of memory", "killed", "unreachable", "cannot", "segfault", "traceback", "critical", "emerg"}

// MentionsError reports whether s reads as reporting an error ("connect()
// failed", "Out of memory"): such a string is a state, whatever its key,
// and such a line of output is an error line. A cheap test for the stems
// runs first, since most lines of most outputs have none.
func MentionsError(s string) bool {
	l := strings.ToLower(s)
	for _, stem := range errorStems {
		if strings.Contains(l, stem) {
			return reErrWord.MatchString(s)
		}
	}
	return false
}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
