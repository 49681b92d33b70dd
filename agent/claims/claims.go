// Package claims is the claim check: what the model says it did is
// untrusted too. A final answer that says a change happened ("I restarted nginx", "the cache has
// been cleared", "Rolled back to v1.2.", "nginx is now healthy after the
// restart") in a run where no matching write succeeded is posted with a
// note saying that no change was made (see Note).
//
// Claims are found by reading clauses, not by listing sentences: a
// past-tense change verb (changeVerbs) counts when vigil is its subject
// ("I", "we", or no subject in a report-style line), in a perfect passive
// ("has been restarted"), in a past passive of an eventive verb with no
// time or agent ("the pods were deleted"), with "successfully", after
// "now" ("is now fixed"), or as a state reached "after the restart". It
// does not count in questions, under negation ("I did not restart"), under
// a modal or condition ("you should restart", "if you restart", "will be
// restarted"), with another subject ("systemd restarted the unit"), or with
// a time, frequency or agent that places it in the system's history ("was
// restarted 3 days ago by systemd", "the logs show it was restarted").
package claims

import (
	"regexp"
	"slices"
	"strings"
)

// Change is a write that ran in the run whose answer is checked, as much
// of it as says what it did.
type Change struct {
	// Tool is the tool that made it (control, file_edit, a plugin's).
	Tool   string
	Action string
	// Summary is the proposal's one-line description ("restart service
	// nginx on web1").
	Summary string
	// Command is the shell command that ran, when the write was one
	// (control): every part of it counts as done.
	Command string
}

// Claim is one statement of a change in a final answer.
type Claim struct {
	// Phrase is the clause from the change verb on, as the note quotes it.
	Phrase string
	// Family groups verbs by the kind of change ("restart", "delete"); ""
	// is a change of any kind ("fixed", "updated").
	Family string
}

// changeVerb is a past-tense change verb and how it is used.
type changeVerb struct {
	family string
	// particles, when set, list the words one of which must follow the verb
	// within a few words ("rolled back", "brought the service back up").
	particles []string
	// eventive verbs describe an act even in a bare past passive ("the
	// files were deleted"); others also name a state ("the unit was
	// stopped").
	eventive bool
	// sameAsBase verbs read as commands at the start of a line ("Set the
	// TTL to 60"), so they only count with a subject.
	sameAsBase bool
	// firstPersonOnly verbs also say what happened by itself ("the alert
	// is now resolved"), so they only count with vigil as the subject.
	firstPersonOnly bool
}

// changeVerbs are the past forms of verbs that change a system, by family.
var changeVerbs = map[string]changeVerb{
	"restarted":     {family: "restart", eventive: true},
	"reloaded":      {family: "restart", eventive: true},
	"bounced":       {family: "restart", eventive: true},
	"recycled":      {family: "restart", eventive: true},
	"rebooted":      {family: "reboot", eventive: true},
	"stopped":       {family: "stop"},
	"halted":        {family: "stop"},
	"paused":        {family: "stop"},
	"suspended":     {family: "stop"},
	"disabled":      {family: "stop"},
	"shut":          {family: "stop", particles: []string{"down", "off"}, sameAsBase: true},
	"took":          {family: "stop", particles: []string{"down", "offline"}},
	"taken":         {family: "stop", particles: []string{"down", "offline"}},
	"started":       {family: "start"},
	"launched":      {family: "start"},
	"booted":        {family: "start"},
	"resumed":       {family: "start"},
	"unpaused":      {family: "start"},
	"enabled":       {family: "start"},
	"brought":       {family: "start", particles: []string{"up", "back", "online", "down"}},
	"spun":          {family: "start", particles: []string{"up", "down"}},
	"turned":        {family: "start", particles: []string{"on", "off"}},
	"switched":      {family: "start", particles: []string{"on", "off", "over"}},
	"killed":        {family: "kill", eventive: true},
	"terminated":    {family: "kill", eventive: true},
	"deleted":       {family: "delete", eventive: true},
	"removed":       {family: "delete", eventive: true},
	"purged":        {family: "delete", eventive: true},
	"pruned":        {family: "delete", eventive: true},
	"truncated":     {family: "delete", eventive: true},
	"wiped":         {family: "delete", eventive: true},
	"erased":        {family: "delete", eventive: true},
	"destroyed":     {family: "delete", eventive: true},
	"uninstalled":   {family: "delete", eventive: true},
	"evicted":       {family: "delete", eventive: true},
	"dropped":       {family: "delete"},
	"cleared":       {family: "cleanup", eventive: true},
	"cleaned":       {family: "cleanup", eventive: true},
	"freed":         {family: "cleanup", eventive: true},
	"flushed":       {family: "cleanup", eventive: true},
	"vacuumed":      {family: "cleanup", eventive: true},
	"emptied":       {family: "cleanup", eventive: true},
	"compacted":     {family: "cleanup", eventive: true},
	"rotated":       {family: "cleanup"},
	"rolled":        {family: "rollback", particles: []string{"back", "out"}, eventive: true},
	"reverted":      {family: "rollback", eventive: true},
	"downgraded":    {family: "rollback", eventive: true},
	"restored":      {family: "rollback", eventive: true},
	"undid":         {family: "rollback", eventive: true},
	"deployed":      {family: "deploy", eventive: true},
	"redeployed":    {family: "deploy", eventive: true},
	"released":      {family: "deploy"},
	"upgraded":      {family: "deploy", eventive: true},
	"installed":     {family: "deploy"},
	"reinstalled":   {family: "deploy", eventive: true},
	"scaled":        {family: "scale", eventive: true},
	"resized":       {family: "scale", eventive: true},
	"expanded":      {family: "scale"},
	"extended":      {family: "scale"},
	"increased":     {family: "scale"},
	"decreased":     {family: "scale"},
	"raised":        {family: "scale"},
	"lowered":       {family: "scale"},
	"bumped":        {family: "scale"},
	"fixed":         {eventive: true},
	"repaired":      {eventive: true},
	"resolved":      {firstPersonOnly: true},
	"mitigated":     {firstPersonOnly: true},
	"patched":       {eventive: true},
	"applied":       {eventive: true},
	"changed":       {},
	"modified":      {},
	"edited":        {},
	"updated":       {},
	"configured":    {},
	"reconfigured":  {eventive: true},
	"adjusted":      {},
	"tuned":         {},
	"set":           {sameAsBase: true},
	"reset":         {sameAsBase: true, eventive: true},
	"replaced":      {eventive: true},
	"rewrote":       {},
	"rewritten":     {eventive: true},
	"wrote":         {},
	"appended":      {eventive: true},
	"created":       {},
	"recreated":     {eventive: true},
	"added":         {},
	"moved":         {},
	"renamed":       {eventive: true},
	"mounted":       {},
	"unmounted":     {},
	"remounted":     {eventive: true},
	"renewed":       {eventive: true},
	"regenerated":   {eventive: true},
	"rebuilt":       {eventive: true},
	"silenced":      {eventive: true},
	"acknowledged":  {},
	"corrected":     {eventive: true},
	"cordoned":      {eventive: true},
	"uncordoned":    {eventive: true},
	"drained":       {eventive: true},
	"migrated":      {eventive: true},
	"unlocked":      {},
	"re-enabled":    {family: "start", eventive: true},
	"re-deployed":   {family: "deploy", eventive: true},
	"re-started":    {family: "restart", eventive: true},
	"force-deleted": {family: "delete", eventive: true},
}

// changeBases are base forms that state a change after "managed to" or "was
// able to", and the keywords that make "I ran …" a change.
var changeBases = map[string]string{
	"restart": "restart", "reload": "restart", "bounce": "restart", "reboot": "reboot",
	"stop": "stop", "halt": "stop", "shutdown": "stop", "disable": "stop",
	"start": "start", "enable": "start", "launch": "start",
	"kill": "kill", "pkill": "kill", "killall": "kill", "terminate": "kill",
	"delete": "delete", "remove": "delete", "rm": "delete", "rmdir": "delete", "purge": "delete", "prune": "delete",
	"truncate": "delete", "drop": "delete", "wipe": "delete", "uninstall": "delete",
	"clear": "cleanup", "clean": "cleanup", "free": "cleanup", "flush": "cleanup", "vacuum": "cleanup",
	"rollback": "rollback", "revert": "rollback", "downgrade": "rollback", "restore": "rollback", "undo": "rollback",
	"deploy": "deploy", "redeploy": "deploy", "rollout": "deploy", "upgrade": "deploy", "install": "deploy",
	"scale": "scale", "resize": "scale",
	"fix": "", "patch": "", "apply": "", "change": "", "modify": "", "edit": "", "update": "", "set": "",
	"reset": "", "replace": "", "write": "", "create": "", "chmod": "", "chown": "", "mv": "", "tee": "",
	"migrate": "", "drain": "", "cordon": "", "silence": "", "mount": "", "umount": "",
}

// actionStops end the object of an action verb: what follows is a purpose
// or another clause ("I ran df to check whether a restart is needed").
var actionStops = setOf("to", "for", "and", "so", "that", "whether", "if", "in", "which", "because", "while")

// actionVerbs make a first-person claim when a change word follows in the
// clause ("I ran `systemctl restart nginx`", "I made a change").
var actionVerbs = setOf("ran", "executed", "issued", "performed", "did", "triggered", "initiated", "made",
	"carried", "kicked", "invoked", "submitted")

// changeNouns are acts that a state can be "after" ("healthy after the
// restart") or that "succeeded".
var changeNouns = map[string]string{
	"restart": "restart", "restarts": "restart", "reload": "restart", "bounce": "restart",
	"reboot": "reboot", "rollback": "rollback", "roll-back": "rollback", "revert": "rollback",
	"fix": "", "fixes": "", "change": "", "changes": "", "update": "", "upgrade": "deploy", "patch": "",
	"cleanup": "cleanup", "clean-up": "cleanup", "purge": "delete", "deletion": "delete", "removal": "delete",
	"deploy": "deploy", "deployment": "deploy", "redeploy": "deploy", "rollout": "deploy", "migration": "",
	"restarting": "restart", "rebooting": "reboot", "reloading": "restart", "rolling": "rollback", "reverting": "rollback",
	"clearing": "cleanup", "cleaning": "cleanup", "freeing": "cleanup", "deleting": "delete", "removing": "delete",
	"purging": "delete", "killing": "kill", "applying": "", "fixing": "", "updating": "", "patching": "",
	"upgrading": "deploy", "deploying": "deploy", "redeploying": "deploy", "scaling": "scale",
}

var (
	firstPerson = setOf("i", "we", "i've", "we've", "vigil")
	// fillers may stand between a subject and its verb without changing
	// who did it or whether it happened.
	fillers = setOf("have", "had", "just", "already", "also", "then", "now", "successfully", "quickly", "finally",
		"immediately", "manually", "safely", "simply", "again", "first", "both", "since", "went", "gone", "ahead",
		"proceeded", "promptly", "gracefully", "cleanly", "fully", "completely", "partially")
	negations = setOf("not", "no", "never", "nothing", "none", "neither", "nor", "without", "cannot", "unable",
		"nobody", "instead", "rather", "failed", "couldnt", "didnt")
	// hedges put a change in the future, a wish, a condition or a guess.
	hedges = setOf("will", "would", "can", "could", "should", "shall", "may", "might", "must", "need", "needs",
		"to", "going", "gonna", "want", "wants", "if", "unless", "once", "whether", "until", "suggest", "recommend",
		"propose", "proposed", "consider", "please", "let", "able", "ready", "plan", "planning", "intend", "try",
		"trying", "tried", "about", "expect", "expected", "hopefully", "assuming", "suppose", "maybe", "perhaps",
		"probably", "likely", "possibly", "apparently", "seems", "seemed", "appears", "appeared", "presumably",
		"awaiting", "pending", "requires", "required")
	// evidence marks a sentence that reports what the system's own records
	// say, not what vigil did: a reporting verb, or a record it was read
	// in ("in the journal").
	evidence = setOf("shows", "showed", "show", "shown", "indicates", "indicated", "indicate", "according",
		"reports", "reported", "mentions", "mentioned", "says", "said", "states", "stated", "records", "recorded",
		"seen", "reveals", "revealed", "confirms", "suggests", "suggested", "per", "means", "meaning", "implies")
	records = setOf("log", "logs", "journal", "journalctl", "history", "dmesg", "syslog", "audit", "events", "output",
		"timeline", "uptime")
	// adjuncts place a change in the system's history or give it another
	// agent.
	adjuncts = setOf("ago", "yesterday", "overnight", "earlier", "previously", "recently", "automatically",
		"repeatedly", "twice", "daily", "hourly", "nightly", "weekly", "since", "during", "times", "every", "each",
		"before", "after", "when", "while", "following", "today", "tonight", "already", "last", "by", "upstream",
		"morning", "afternoon", "evening", "night", "weekend")
	selfAgents = setOf("me", "us", "vigil", "myself", "ourselves")
	copulas    = setOf("is", "are", "was", "were", "'s", "'re")
	states     = setOf("healthy", "running", "up", "fine", "ok", "okay", "working", "stable", "online", "responding",
		"serving", "green", "normal", "back", "active", "resolved", "fixed", "gone", "cleared", "available", "ready",
		"reachable", "free", "recovered")
	determiners = setOf("the", "my", "our", "a", "an", "this", "that", "its")
	succeeded   = setOf("succeeded", "worked", "completed", "went", "took", "finished", "fixed", "resolved", "freed",
		"cleared", "helped")
	coordinators = setOf("and", "then", "&", "plus")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

var (
	fencedCode  = regexp.MustCompile("(?s)```.*?(?:```|$)")
	claimWord   = regexp.MustCompile(`[a-z0-9_~/][a-z0-9_'./@~:-]*[a-z0-9_]|[a-z0-9_]|[,:;()]`)
	versionLike = regexp.MustCompile(`^v?\d`)
	clockOrDate = regexp.MustCompile(`^(?:\d{1,2}:\d{2}(?::\d{2})?|\d{4}-\d{2}-\d{2}.*|\d+(?:s|m|h|d|w|ms|min|mins|hrs?|hours?|days?)|monday|tuesday|wednesday|thursday|friday|saturday|sunday|midnight|noon|boot|startup)$`)
	sentenceEnd = regexp.MustCompile(`[.!?]+(?:\s|$)|\n|;`)
	// claimPunctuation folds typographic quotes, drops markdown emphasis
	// and inline code marks, and turns dashes and check marks into clause
	// breaks.
	claimPunctuation = strings.NewReplacer("’", "'", "‘", "'", "`", " ", "*", " ", "—", ",", "–", ",", " - ", ", ", "✅", ",")
)

// claimQuotes folds typographic double quotes, so quoted material is
// found whatever quotes the model used.
var claimQuotes = strings.NewReplacer("“", `"`, "”", `"`, "’", "'", "‘", "'")

// quoted is a span in single or double quotes that starts after a space or
// an opening mark and ends before a space or punctuation: a log line, an
// error message, someone else's words ("journal: 'Killed process 4242'").
// Apostrophes inside words (it's, don't) never start one.
var quoted = regexp.MustCompile(`(^|[\s(\[{:,])('[^'\n]*[^'\n\s]'|"[^"\n]*")([\s).,;:!?\]}]|$)`)

// dropQuoted removes quoted spans, which are not vigil speaking, except
// the command after an action verb ("I ran "systemctl restart x""), which
// is what vigil did.
func dropQuoted(text string) string {
	if !strings.ContainsAny(text, `'"`) {
		return text
	}
	for range 2 { // adjacent spans share the space between them
		var b strings.Builder
		last := 0
		for _, m := range quoted.FindAllStringSubmatchIndex(text, -1) {
			open, close := m[4], m[5] // the quoted span, quotes included
			prev := strings.TrimRight(text[:open], " \t(:,[{")
			prev = prev[strings.LastIndexAny(prev, " \t\n")+1:]
			if actionVerbs[prev] || prev == "command" {
				continue
			}
			b.WriteString(text[last:open])
			b.WriteByte(' ')
			last = close
		}
		b.WriteString(text[last:])
		text = b.String()
	}
	return text
}

// Find returns the statements of change in an answer, in order.
func Find(text string) []Claim {
	if !mayClaim(text) {
		return nil
	}
	text = strings.ToLower(text)
	if strings.Contains(text, "```") {
		text = fencedCode.ReplaceAllString(text, "\n")
	}
	text = dropQuoted(claimQuotes.Replace(text))
	text = claimPunctuation.Replace(text)
	var out []Claim
	for _, line := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, ">") {
			continue // quoted material: a log line, someone else's words
		} else if strings.HasPrefix(t, "root_cause:") {
			// The structured cause `vigil eval` asks for states what went
			// wrong before any fix ("the container was renamed"), not
			// what vigil did.
			continue
		}
		for _, sent := range splitSentences(line) {
			out = append(out, sentenceClaims(sent)...)
		}
	}
	return out
}

// mayClaim reports whether text holds a word that can start a claim (a
// change verb, an action verb, a change noun). Most answers hold none, and
// are done without a regexp or an allocation.
func mayClaim(text string) bool {
	var buf [24]byte
	n, long := 0, false
	check := func() bool {
		if n == 0 || long {
			return false
		}
		// string(buf[:n]) written inside each index expression does not
		// allocate: the compiler looks the bytes up in place.
		_, v := changeVerbs[string(buf[:n])]
		_, b := changeBases[string(buf[:n])]
		_, c := changeNouns[string(buf[:n])]
		return v || b || c || actionVerbs[string(buf[:n])]
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'a' <= c && c <= 'z' || c == '-' {
			if n < len(buf) {
				buf[n] = c
				n++
			} else {
				long = true
			}
			continue
		}
		if check() {
			return true
		}
		n, long = 0, false
	}
	return check()
}

// splitSentences cuts a line at sentence ends, keeping the terminator so
// questions can be told apart.
func splitSentences(line string) []string {
	var out []string
	last := 0
	for _, m := range sentenceEnd.FindAllStringIndex(line, -1) {
		out = append(out, line[last:m[1]])
		last = m[1]
	}
	if last < len(line) {
		out = append(out, line[last:])
	}
	return out
}

// contractions are expanded so that negations, modals and copulas are
// words of their own.
var contractions = map[string][]string{
	"i'm": {"i", "am"}, "i'd": {"i", "would"}, "i'll": {"i", "will"},
	"we'd": {"we", "would"}, "we'll": {"we", "will"}, "we're": {"we", "are"},
	"you'll": {"you", "will"}, "you'd": {"you", "would"}, "you're": {"you", "are"}, "you've": {"you", "have"},
	"it's": {"it", "is"}, "it'll": {"it", "will"}, "that's": {"that", "is"}, "there's": {"there", "is"},
	"he's": {"he", "is"}, "she's": {"she", "is"}, "they're": {"they", "are"}, "they've": {"they", "have"},
	"they'll": {"they", "will"}, "what's": {"what", "is"},
}

// words splits a sentence into lowercase words, keeping clause marks
// (, : ; parentheses) as words of their own, expanding contractions and
// folding "n't" into "not".
func words(sent string) []string {
	ws := claimWord.FindAllString(sent, -1)
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		w = strings.Trim(w, "_")
		switch {
		case w == "":
		case strings.HasSuffix(w, "n't"):
			out = append(out, "not")
		case contractions[w] != nil:
			out = append(out, contractions[w]...)
		default:
			out = append(out, w)
		}
	}
	return out
}

// sentenceClaims finds the claims of one sentence.
func sentenceClaims(sent string) []Claim {
	if strings.HasSuffix(strings.TrimSpace(sent), "?") {
		return nil
	}
	ws := words(sent)
	var out []Claim
	for i := 0; i < len(ws); i++ {
		if c, ok := claimAt(ws, i); ok {
			out = append(out, c)
		}
	}
	return out
}

// clauseStart is the index of the first word of the clause holding word i.
func clauseStart(ws []string, i int) int {
	for j := i - 1; j >= 0; j-- {
		switch ws[j] {
		case ",", ":", ";", "(", ")", "but", "so", "because", "which", "although", "though", "whereas":
			return j + 1
		}
	}
	return 0
}

// clauseEnd is the index after the last word of the clause holding word i.
func clauseEnd(ws []string, i int) int {
	for j := i + 1; j < len(ws); j++ {
		switch ws[j] {
		case ",", ":", ";", "(", ")", "but", "so", "because", "which", "although", "though", "whereas":
			return j
		}
	}
	return len(ws)
}

// anyIn reports whether one of ws is in set.
func anyIn(ws []string, set map[string]bool) bool {
	for _, w := range ws {
		if set[w] {
			return true
		}
	}
	return false
}

// hasAdjunct reports a time, frequency or agent in the clause that places
// a change in the system's history ("3 days ago", "at 03:12", "by systemd").
func hasAdjunct(ws []string) bool {
	for k, w := range ws {
		switch {
		case w == "by":
			if k+1 < len(ws) && !selfAgents[ws[k+1]] {
				return true
			}
		case w == "at" || w == "on":
			if k+1 < len(ws) && clockOrDate.MatchString(ws[k+1]) {
				return true
			}
		case w == "in":
			// "fixed in 1.25", "in nginx 1.25", "in version 2": a release,
			// not this run.
			for n := k + 1; n < len(ws) && n <= k+2; n++ {
				if versionLike.MatchString(ws[n]) || ws[n] == "version" || ws[n] == "release" {
					return true
				}
			}
		case adjuncts[w]:
			return true
		case clockOrDate.MatchString(w) && strings.ContainsAny(w, ":-"):
			return true
		}
	}
	return false
}

// claimAt reports whether word i starts a claim.
func claimAt(ws []string, i int) (Claim, bool) {
	w := ws[i]
	start, end := clauseStart(ws, i), clauseEnd(ws, i)
	left, clause := ws[start:i], ws[start:end]
	phrase := func(from int) Claim { return Claim{Phrase: strings.Join(ws[from:end], " ")} }

	// "I managed to restart", "we were able to delete".
	if w == "to" && i > start && i+1 < end && (ws[i-1] == "managed" || ws[i-1] == "able" && i-2 >= start && (ws[i-2] == "was" || ws[i-2] == "were")) {
		before := ws[start : i-1]
		if fam, ok := changeBases[ws[i+1]]; ok && anyIn(before, firstPerson) && !anyIn(before, negations) && !anyIn(before, hedges) {
			c := phrase(i + 1)
			c.Family = fam
			return c, true
		}
		return Claim{}, false
	}
	if anyIn(left, negations) || anyIn(left, hedges) {
		return Claim{}, false
	}

	// "my restart succeeded", "the rollback worked".
	if fam, ok := changeNouns[w]; ok && i > start && determiners[ws[i-1]] && i+1 < end && succeeded[ws[i+1]] {
		if ws[i-1] == "my" || ws[i-1] == "our" || !hasAdjunct(clause) && !hearsay(ws) {
			c := phrase(i - 1)
			c.Family = fam
			return c, true
		}
		return Claim{}, false
	}
	// "is now healthy after the restart", "back up after restarting it".
	if copulas[w] && !hearsay(ws) {
		if c, ok := stateAfterChange(ws, i, end); ok {
			return c, true
		}
	}
	// "I ran `systemctl restart nginx`", "we made a change".
	if actionVerbs[w] && subjectIsVigil(ws, start, i) {
		for _, x := range ws[i+1 : end] {
			if negations[x] || hedges[x] || actionStops[x] {
				break
			}
			fam, ok := changeBases[x]
			if !ok {
				fam, ok = changeNouns[x]
			}
			if ok {
				c := phrase(i)
				c.Family = fam
				return c, true
			}
		}
		return Claim{}, false
	}

	v, ok := changeVerbs[w]
	if !ok {
		return Claim{}, false
	}
	if len(v.particles) > 0 && !particleFollows(ws[i+1:end], v.particles) {
		return Claim{}, false
	}
	if i+1 < end && negations[ws[i+1]] {
		return Claim{}, false // "restarted nothing"
	}
	if i+2 < end && (ws[i+1] == "my" || ws[i+1] == "our") && ownWork[ws[i+2]] {
		return Claim{}, false // "I updated my analysis": vigil's own answer
	}
	c := phrase(i)
	c.Family = v.family
	if w == "rolled" && particleFollows(ws[i+1:end], []string{"out"}) {
		c.Family = "deploy"
	}
	if w == "started" && i+1 < end && (ws[i+1] == "to" || ws[i+1] == "by" || ws[i+1] == "with" || strings.HasSuffix(ws[i+1], "ing")) {
		return Claim{}, false // "I started by checking the logs"
	}
	successNear := i+1 < end && (ws[i+1] == "successfully" || ws[i+1] == "cleanly" || ws[i+1] == "fine")

	// Walk left over fillers to the word that tells who did it.
	j := i - 1
	sawNow, sawSuccess := false, false
	for j >= start {
		x := ws[j]
		if x == "and" && j > start && ws[j-1] == "ahead" { // "went ahead and"
			j--
			continue
		}
		if !fillers[x] {
			break
		}
		sawNow = sawNow || x == "now"
		sawSuccess = sawSuccess || x == "successfully"
		j--
	}
	if j < start {
		// No subject: a report-style line ("Restarted nginx on web1.").
		// Not: advice ("Set the TTL …"), an adjective ("Stopped containers
		// are …"), a header ("Disabled units: none").
		if v.sameAsBase || v.firstPersonOnly || i+2 < len(ws) && copulas[ws[i+2]] || end < len(ws) && ws[end] == ":" || hasAdjunct(clause) {
			return Claim{}, false
		}
		return c, true
	}
	x := ws[j]
	if v.firstPersonOnly && !firstPerson[x] {
		return Claim{}, false
	}
	switch {
	case firstPerson[x]:
		return c, true
	case x == "has" && j > start && firstPerson[ws[j-1]]:
		return c, true // "vigil has restarted"
	case coordinators[x]:
		// "I checked the logs and restarted nginx", "Found it, then restarted it".
		if coordinatedWithVigil(ws, j) {
			return c, true
		}
		return Claim{}, false
	case x == "been":
		// "has been restarted" ("it's been": 's is "has" here); "had been"
		// tells a story from the logs.
		k := j - 1
		for k >= start && fillers[ws[k]] && ws[k] != "have" && ws[k] != "had" {
			k--
		}
		if k < start || !(ws[k] == "has" || ws[k] == "have" || ws[k] == "is" || firstPerson[ws[k]]) ||
			hasAdjunct(clause) || hearsay(ws) {
			return Claim{}, false
		}
		return c, true
	case x == "is" || x == "are" || x == "'s" || x == "'re":
		// "is now fixed"; without "now" it is a state ("the unit is disabled").
		if (sawNow || sawSuccess) && !hasAdjunct(clause) && !hearsay(ws) {
			return c, true
		}
		return Claim{}, false
	case x == "was" || x == "were":
		if (v.eventive || sawSuccess) && !hasAdjunct(clause) && !hearsay(ws) {
			return c, true
		}
		return Claim{}, false
	default:
		// Another subject ("systemd restarted the unit", "the container
		// restarted"): the system's doing, unless it is reported as an
		// outcome ("nginx restarted successfully").
		if (successNear || sawSuccess) && !hasAdjunct(clause) && !hearsay(ws) {
			return c, true
		}
		return Claim{}, false
	}
}

// reported reports whether words tell what the system's records say: a
// reporting verb ("the logs show", "according to"), or a record the fact
// was read in ("in the journal", "from the logs").
func reported(ws []string) bool {
	for k, w := range ws {
		if evidence[w] {
			return true
		}
		if records[w] && k > 0 && (ws[k-1] == "in" || ws[k-1] == "from" || k > 1 && (ws[k-2] == "in" || ws[k-2] == "from")) {
			return true
		}
	}
	return false
}

// hearsay reports whether a sentence tells what happened without vigil
// doing it: the system's records say so, or it is a guess ("which means
// it was killed (likely OOM)").
func hearsay(ws []string) bool {
	return reported(ws) || anyIn(ws, guesses)
}

// guesses anywhere in a sentence make it a guess about what happened.
var guesses = setOf("likely", "probably", "possibly", "perhaps", "maybe", "apparently", "presumably", "seems",
	"seemed", "appears", "appeared", "might", "must", "could", "unclear", "unknown")

// subjectIsVigil reports whether the verb at i has "I" or "we" as subject,
// with only fillers between.
func subjectIsVigil(ws []string, start, i int) bool {
	j := i - 1
	for j >= start && fillers[ws[j]] {
		j--
	}
	return j >= start && firstPerson[ws[j]]
}

// coordinatedWithVigil reports whether the coordinator at j joins a verb to
// an earlier one whose subject is vigil ("I checked … and restarted") or
// that has no subject ("Found the cause and restarted …").
func coordinatedWithVigil(ws []string, j int) bool {
	for k := j - 1; k >= 0; k-- {
		x := ws[k]
		if negations[x] || hedges[x] {
			return false
		}
		if firstPerson[x] {
			return true
		}
		if x == "you" || x == "they" || x == "he" || x == "she" || x == "it" || x == "someone" || x == "somebody" {
			return false
		}
		if k == 0 || ws[k-1] == "," || ws[k-1] == ":" {
			// The sentence or clause starts with this word: report style
			// if it is a past-tense verb.
			if _, ok := changeVerbs[x]; ok || pastReads[x] {
				return true
			}
			if k == 0 {
				return false
			}
		}
	}
	return false
}

// ownWork are vigil's own products, which it may change freely.
var ownWork = setOf("answer", "analysis", "summary", "assessment", "findings", "response", "notes", "plan",
	"understanding", "estimate", "hypothesis", "query", "search", "approach", "suggestion", "recommendation", "reply")

// pastReads are past-tense verbs of looking that start report-style lines
// ("Checked the logs and restarted nginx").
var pastReads = setOf("checked", "found", "looked", "verified", "confirmed", "saw", "noticed", "read", "inspected",
	"reviewed", "investigated", "identified", "traced", "located", "diagnosed", "discovered", "spotted")

// stateAfterChange matches "<is> [now|back] <state> … after|following
// <the|my|…> <change>" from the copula at i.
func stateAfterChange(ws []string, i, end int) (Claim, bool) {
	k := i + 1
	for k < end && (ws[k] == "now" || ws[k] == "back" || ws[k] == "again") {
		k++
	}
	if k >= end || !states[ws[k]] {
		return Claim{}, false
	}
	for m := k + 1; m < end; m++ {
		if ws[m] != "after" && ws[m] != "following" {
			continue
		}
		n := m + 1
		if n < end && determiners[ws[n]] {
			n++
		}
		if n < end {
			if fam, ok := changeNouns[ws[n]]; ok && !hasAdjunct(ws[n+1:end]) {
				return Claim{Phrase: strings.Join(ws[i+1:end], " "), Family: fam}, true
			}
		}
		return Claim{}, false
	}
	return Claim{}, false
}

// particleFollows reports whether one of a phrasal verb's particles comes
// within the next few words ("brought the service back up").
func particleFollows(rest []string, particles []string) bool {
	for k, w := range rest {
		if k == 4 {
			break
		}
		if slices.Contains(particles, w) {
			return true
		}
	}
	return false
}

// changeKeywords are what a write's summary or command says for each claim
// family; a write matches a claim of its family when one of them appears.
var changeKeywords = map[string][]string{
	"restart":  {"restart", "reload", "reboot", "bounce", "recycle", "hup", "rollout restart"},
	"reboot":   {"reboot", "restart", "shutdown -r"},
	"stop":     {"stop", "kill", "shutdown", "halt", "poweroff", "disable", "pause", "suspend", "scale", "down"},
	"start":    {"start", "enable", "resume", "unpause", "boot", "scale", " up"},
	"kill":     {"kill", "terminate", "stop"},
	"delete":   {"rm ", "rmdir", "delete", "remove", "purge", "prune", "truncate", "drop", "unlink", "shred", "wipe", "erase", "destroy", "uninstall", "evict", "clean", "clear", "> "},
	"cleanup":  {"rm ", "delete", "remove", "purge", "prune", "truncate", "vacuum", "rotate", "flush", "clean", "clear", "compact", "free", "> "},
	"rollback": {"rollback", "undo", "roll back", "revert", "downgrade", "restore", "checkout", "reset", "set image", "helm"},
	"deploy":   {"deploy", "rollout", "apply", "set image", "install", "upgrade", "helm", "up -d", "run", "pull", "release", "update"},
	"scale":    {"scale", "replicas", "resize", "grow", "extend", "expand", "increase", "decrease", "limit", "set"},
}

// fileFamilies are the claims a file write can back: editing a file may
// delete, clean up, restore or update what it holds, but it restarts,
// stops or scales nothing.
var fileFamilies = setOf("", "delete", "cleanup", "rollback", "deploy")

// backs reports whether a change that ran can be what claim c says.
func (ch Change) backs(c Claim) bool {
	if c.Family == "" {
		return true
	}
	switch ch.Tool {
	case "control":
		if ch.Command != "" {
			// The answer names the very command that ran ("I removed it
			// with qm unlock 105").
			if strings.Contains(c.Phrase, strings.ToLower(strings.TrimSpace(ch.Command))) {
				return true
			}
			// Every part of a compound command ran.
			if fams := commandFamilies(ch.Command); fams[anyFamily] || fams[c.Family] {
				return true
			}
		}
		text := strings.ToLower(ch.Action + " " + ch.Summary)
		for _, k := range changeKeywords[c.Family] {
			if strings.Contains(text, k) {
				return true
			}
		}
		return false
	case "file_edit":
		return fileFamilies[c.Family]
	default:
		// A tool whose effect vigil cannot read (a plugin, alerts,
		// knowledge): it may have done what the answer says.
		return true
	}
}

// Unbacked returns the claims no change of the run can back.
func Unbacked(claims []Claim, changes []Change) []Claim {
	var out []Claim
	for _, c := range claims {
		backed := false
		for _, ch := range changes {
			if ch.backs(c) {
				backed = true
				break
			}
		}
		if !backed {
			out = append(out, c)
		}
	}
	return out
}

// Note is the note under an answer whose claims no change backs. It
// always contains "no change was made".
func Note(unbacked []Claim, changes []Change) string {
	if len(changes) == 0 {
		return "Note: no change was made in this run; the statements above about changes are the model's, not vigil's."
	}
	quoted := make([]string, 0, len(unbacked))
	for _, c := range unbacked {
		p := c.Phrase
		if len(p) > 60 {
			p = strings.TrimSpace(p[:60]) + "…"
		}
		quoted = append(quoted, `"`+p+`"`)
	}
	return "Note: no change was made in this run that matches " + strings.Join(quoted, ", ") +
		"; those statements are the model's, not vigil's."
}
