package matrix

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"time"
	"unicode/utf8"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/adapters/internal/split"
	"github.com/vigilops/vigil/bot"
)

// Custom content fields on approval cards. The approval ID on the card is
// what makes reactions restart-proof: a ✅ on any card can be mapped back
// to its approval by fetching the reacted-to event.
const (
	fieldApprovalID     = "org.vigil.approval_id"
	fieldApprovalStatus = "org.vigil.approval_status"
	// fieldRunID on an answer names the run it ends, so a 👍/👎 on it can
	// be mapped back to the run the same way.
	fieldRunID = "org.vigil.run_id"
)

// feedbackHint ends an answer that can be rated.
const feedbackHint = "React 👍 or 👎 to rate this answer."

// maxInlineOutput bounds output shown in one event, well under Matrix's
// 64 KiB event limit even after HTML escaping.
const maxInlineOutput = 4000

// maxTraceCommand and maxTraceOutput bound, in bytes once escaped for
// HTML and encoded as JSON in both the body and the HTML, the command and
// the output a trace shows, so a trace event stays within the size limit
// whatever they hold.
const (
	maxTraceCommand = 12_000
	maxTraceOutput  = 16_000
)

// clipEncoded cuts s, on a character boundary, to the longest beginning
// whose encoded size (encodedSize) is at most n.
func clipEncoded(s string, n int) (string, bool) {
	if encodedSize(s) <= n {
		return s, false
	}
	lo, hi := 0, len(s)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		for mid > lo && !utf8.RuneStart(s[mid]) {
			mid--
		}
		if mid == lo {
			break
		}
		if encodedSize(s[:mid]) <= n {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	for lo > 0 && lo < len(s) && !utf8.RuneStart(s[lo]) {
		lo--
	}
	return s[:lo], true
}

// encodedSize is what s adds to an event shown both as plain text and as
// escaped HTML, JSON-encoded.
func encodedSize(s string) int { return jsonLen(s) + jsonLen(html.EscapeString(s)) }

// renderReply turns a neutral reply into Matrix message content: HTML
// (org.matrix.custom.html) with a plain-text body. Relations are added by
// the caller.
func renderReply(r bot.Reply) *event.MessageEventContent {
	switch r.Kind {
	case bot.ReplyTrace:
		if r.Trace != nil {
			return renderTrace(*r.Trace)
		}
		return notice(event.MsgNotice, r.Text)
	case bot.ReplyAnswer:
		// Post sends every event of a long answer (renderAnswer); this is
		// its first.
		return renderAnswer(r.Text, r.RunID, 0).events[0]
	case bot.ReplyError:
		return renderError(r.Text, r.ErrorID)
	default: // bot.ReplyNotice and anything new
		if r.Alert != nil {
			return renderAlertCard(*r.Alert)
		}
		if len(r.Links) > 0 {
			return renderWithLinks(r)
		}
		return notice(event.MsgNotice, r.Text)
	}
}

// maxLinkURL bounds a link's URL in an event; longer ones are named, not
// linked, so the event stays within the homeserver's size limit.
const maxLinkURL = 4096

// renderWithLinks is a notice followed by its links: an alert's state
// with its source, runbook and dashboards. A link that is not http(s) or
// whose URL is over maxLinkURL is named as left out, not linked.
func renderWithLinks(r bot.Reply) *event.MessageEventContent {
	text, _ := clip(r.Text, maxInlineOutput*4)
	c := notice(event.MsgNotice, text)
	addLinks(c, r.Links)
	return c
}

// renderAlertCard is an alert group's state: its headline in bold, a line
// of severity, source and start, its labels as code, the lead alert's
// summary and description, then its links. The plain body is the card's
// text.
func renderAlertCard(a bot.AlertCard) *event.MessageEventContent {
	text, _ := clip(a.Text(), maxInlineOutput*4)
	c := notice(event.MsgNotice, text)
	var htm strings.Builder
	fmt.Fprintf(&htm, "<p><strong>%s: %s</strong> (firing %d / resolved %d)</p>",
		html.EscapeString(a.Status()), html.EscapeString(a.Name), a.Firing, a.Resolved)
	if u := a.UntrackedText(); u != "" {
		fmt.Fprintf(&htm, "<p><em>%s</em></p>", html.EscapeString(u))
	}
	fmt.Fprintf(&htm, "<p>Severity: <strong>%s</strong> · Source: %s · Started: %s</p>",
		html.EscapeString(a.Severity), html.EscapeString(a.Source), html.EscapeString(a.StartedText()))
	if len(a.Labels) > 0 {
		labels := make([]string, len(a.Labels))
		for i, l := range a.Labels {
			labels[i] = "<code>" + html.EscapeString(l) + "</code>"
		}
		htm.WriteString("<p>Labels: " + strings.Join(labels, " ") + "</p>")
	}
	for _, f := range []struct{ name, text string }{{"Summary", a.Summary}, {"Description", a.Description}} {
		if f.text != "" {
			t, _ := clip(f.text, maxInlineOutput)
			htm.WriteString("<p><strong>" + f.name + ":</strong> " + escapeLines(t) + "</p>")
		}
	}
	c.FormattedBody = htm.String()
	addLinks(c, a.Links)
	return c
}

// addLinks appends links to c. A link that is not http(s) or whose URL is
// over maxLinkURL is named as left out, not linked.
func addLinks(c *event.MessageEventContent, links []bot.Link) {
	if len(links) == 0 {
		return
	}
	var body, htm, left []string
	for _, l := range links {
		low := strings.ToLower(l.URL)
		if len(l.URL) > maxLinkURL || !(strings.HasPrefix(low, "https://") || strings.HasPrefix(low, "http://")) {
			name, _ := clip(l.Text, 200)
			left = append(left, fmt.Sprintf("%s (%d characters)", name, len(l.URL)))
			continue
		}
		body = append(body, l.Text+": "+l.URL)
		htm = append(htm, `<a href="`+html.EscapeString(l.URL)+`">`+html.EscapeString(l.Text)+`</a>`)
	}
	if len(body) > 0 {
		c.Body += "\n" + strings.Join(body, "\n")
		c.FormattedBody += "<p>" + strings.Join(htm, " · ") + "</p>"
	}
	if len(left) > 0 {
		note := "Not linked, too long or not http(s): " + strings.Join(left, "; ")
		c.Body += "\n" + note
		c.FormattedBody += "<p><em>" + html.EscapeString(note) + "</em></p>"
	}
}

func notice(msgType event.MessageType, text string) *event.MessageEventContent {
	return &event.MessageEventContent{
		MsgType:       msgType,
		Body:          text,
		Format:        event.FormatHTML,
		FormattedBody: paragraphs(text),
		Mentions:      &event.Mentions{},
	}
}

func renderError(text, errorID string) *event.MessageEventContent {
	body := "⚠️ " + text
	htm := "<p>⚠️ " + escapeLines(text) + "</p>"
	if errorID != "" {
		body += "\n(error ID: " + errorID + ")"
		htm += "<p><em>error ID: <code>" + html.EscapeString(errorID) + "</code></em></p>"
	}
	return &event.MessageEventContent{
		MsgType:       event.MsgNotice,
		Body:          body,
		Format:        event.FormatHTML,
		FormattedBody: htm,
		Mentions:      &event.Mentions{},
	}
}

var outcomeIcon = map[bot.Outcome]string{
	bot.OutcomeOK:       "✅",
	bot.OutcomeBlocked:  "⛔",
	bot.OutcomeFailed:   "❌",
	bot.OutcomeApproval: "⏸️",
}

var outcomeWord = map[bot.Outcome]string{
	bot.OutcomeOK:       "ok",
	bot.OutcomeBlocked:  "blocked",
	bot.OutcomeFailed:   "failed",
	bot.OutcomeApproval: "approval required",
}

func renderTrace(t bot.Trace) *event.MessageEventContent {
	icon, ok := outcomeIcon[t.Outcome]
	if !ok {
		icon = "•"
	}
	word, ok := outcomeWord[t.Outcome]
	if !ok {
		word = string(t.Outcome)
	}
	name := t.Tool
	if t.Action != "" {
		name += " " + t.Action
	}

	var b, h strings.Builder
	// Headline: ✅ read exec on web-1 — ok (1.2s)
	b.WriteString(icon + " " + name)
	h.WriteString("<p>" + icon + " <strong>" + html.EscapeString(t.Tool) + "</strong>")
	if t.Action != "" {
		h.WriteString(" " + html.EscapeString(t.Action))
	}
	if t.Target != "" {
		b.WriteString(" on " + t.Target)
		h.WriteString(" on <code>" + html.EscapeString(t.Target) + "</code>")
	}
	b.WriteString(" — " + word)
	h.WriteString(" — " + html.EscapeString(word))
	if t.Duration > 0 {
		d := formatDuration(t.Duration)
		b.WriteString(" (" + d + ")")
		h.WriteString(" (" + d + ")")
	}
	h.WriteString("</p>")

	if t.Command != "" {
		// A trace names its command; the approval card, not the trace, is
		// where a long one is shown whole.
		cmd, cut := clipEncoded(t.Command, maxTraceCommand)
		b.WriteString("\n$ " + cmd)
		h.WriteString(`<pre><code class="language-shell">` + html.EscapeString(cmd) + "</code></pre>")
		if cut {
			note := fmt.Sprintf("Command shown up to %d of its %d bytes.", len(cmd), len(t.Command))
			b.WriteString("\n" + note)
			h.WriteString("<p><em>" + note + "</em></p>")
		}
	}
	if t.Sandbox != "" {
		b.WriteString("\nsandbox: " + t.Sandbox)
		h.WriteString("<p><em>sandbox: " + html.EscapeString(t.Sandbox) + "</em></p>")
	}
	if t.Outcome != bot.OutcomeOK && (t.Code != "" || t.Message != "") {
		line := t.Code
		if t.Code != "" && t.Message != "" {
			line += ": "
		}
		line += t.Message
		b.WriteString("\n" + line)
		h.WriteString("<p>")
		if t.Code != "" {
			h.WriteString("<strong>" + html.EscapeString(t.Code) + "</strong>")
			if t.Message != "" {
				h.WriteString(": ")
			}
		}
		h.WriteString(escapeLines(t.Message) + "</p>")
	}
	out, cut := clip(strings.TrimRight(t.Output, "\n"), maxInlineOutput)
	out, cutMore := clipEncoded(out, maxTraceOutput)
	cut = cut || cutMore
	if out != "" {
		b.WriteString("\n```\n" + out + "\n```")
		h.WriteString("<pre><code>" + html.EscapeString(out) + "</code></pre>")
	}
	if t.Truncated || cut {
		note := "Output truncated."
		if t.FullOutput != "" {
			note = "Output truncated; the full output is attached below."
		}
		b.WriteString("\n" + note)
		h.WriteString("<p><em>" + note + "</em></p>")
	}
	return &event.MessageEventContent{
		MsgType:       event.MsgNotice,
		Body:          b.String(),
		Format:        event.FormatHTML,
		FormattedBody: h.String(),
		Mentions:      &event.Mentions{},
	}
}

// Cards show the whole change. One whose event (and the m.replace edit
// that carries it twice) would pass maxCardContent is posted with the
// beginning of the change and a note, and the whole change follows as an
// m.file whose SHA-256 the card prints and the approval binds.
const maxCardContent = maxEventContent / 2

// cardFileName names the file a long change is attached as.
func cardFileName(c bot.ApprovalCard) string { return "approval-" + c.ID + "-change.txt" }

// cardAttached reports whether a card is too long to show its change and
// attaches it instead.
func cardAttached(c bot.ApprovalCard) bool {
	return contentSize(renderCardAs(c, nil, false)) > maxCardContent
}

// renderCard renders an approval card in its current status; approvers,
// on a pending card, are mentioned so they are notified.
func renderCard(c bot.ApprovalCard, approvers []id.UserID) *event.MessageEventContent {
	return renderCardAs(c, approvers, cardAttached(c))
}

func renderCardAs(c bot.ApprovalCard, approvers []id.UserID, attached bool) *event.MessageEventContent {
	var b, h strings.Builder
	status := c.Status
	if status == "" {
		status = bot.ApprovalPending
	}
	switch status {
	case bot.ApprovalPending:
		b.WriteString("🔐 Approval needed: " + c.ID)
		h.WriteString("<p>🔐 <strong>Approval needed</strong>: <code>" + html.EscapeString(c.ID) + "</code></p>")
	default:
		b.WriteString("🔐 Approval " + c.ID + ": " + string(status))
		h.WriteString("<p>🔐 <strong>Approval</strong> <code>" + html.EscapeString(c.ID) + "</code>: " + html.EscapeString(string(status)) + "</p>")
	}
	if c.Summary != "" {
		b.WriteString("\n" + c.Summary)
		h.WriteString("<p>" + escapeLines(c.Summary) + "</p>")
	}
	h.WriteString("<ul>")
	field := func(label, plain, htm string) {
		b.WriteString("\n" + label + ": " + plain)
		h.WriteString("<li>" + label + ": " + htm + "</li>")
	}
	if c.Tool != "" {
		field("Tool", c.Tool, "<code>"+html.EscapeString(c.Tool)+"</code>")
	}
	if c.Target != "" {
		field("Target", c.Target, "<code>"+html.EscapeString(c.Target)+"</code>")
	}
	if c.Risk != "" {
		field("Risk", c.Risk, "<strong>"+html.EscapeString(c.Risk)+"</strong>")
	}
	if c.Requester != "" {
		field("Requested by", c.Requester, userLink(c.Requester))
	}
	if !c.ExpiresAt.IsZero() && status == bot.ApprovalPending {
		field("Expires", formatTime(c.ExpiresAt), formatTime(c.ExpiresAt))
	}
	h.WriteString("</ul>")
	if attached {
		full := c.FullChange()
		head := split.FirstLines(full, 40)
		head, _ = clip(head, maxInlineOutput)
		b.WriteString("\nChange (beginning):\n" + head)
		h.WriteString(`<p>Change (beginning):</p><pre><code>` + html.EscapeString(head) + "</code></pre>")
		note := fmt.Sprintf("The whole change is %d characters, too long for a card: it is attached in this thread as %s. Approving approves exactly that text: SHA-256 %s.",
			utf8.RuneCountInString(full), cardFileName(c), c.ChangeHash)
		b.WriteString("\n📎 " + note)
		h.WriteString("<p>📎 " + html.EscapeString(note) + "</p>")
	} else {
		if c.Command != "" {
			b.WriteString("\nCommand:\n" + c.Command)
			h.WriteString(`<pre><code class="language-shell">` + html.EscapeString(c.Command) + "</code></pre>")
		}
		if len(c.Parts) > 0 {
			b.WriteString("\nWhat it runs, part by part:")
			h.WriteString("<p>What it runs, part by part:</p><ol>")
			for _, p := range c.Parts {
				b.WriteString("\n  " + p)
				h.WriteString("<li><code>" + html.EscapeString(p) + "</code></li>")
			}
			h.WriteString("</ol>")
		}
		if len(c.Details) > 0 {
			b.WriteString("\nChange:")
			h.WriteString("<p>Change:</p><ul>")
			for _, d := range c.Details {
				if strings.Contains(d.Value, "\n") {
					b.WriteString("\n- " + d.Label + ":\n" + d.Value)
					h.WriteString("<li>" + html.EscapeString(d.Label) + ":<pre><code>" + html.EscapeString(d.Value) + "</code></pre></li>")
					continue
				}
				b.WriteString("\n- " + d.Label + ": " + d.Value)
				h.WriteString("<li>" + html.EscapeString(d.Label) + ": <code>" + escapeLines(d.Value) + "</code></li>")
			}
			h.WriteString("</ul>")
		}
	}
	if len(c.Reasons) > 0 {
		b.WriteString("\nWhy approval is needed:")
		h.WriteString("<p>Why approval is needed:</p><ul>")
		for _, r := range c.Reasons {
			b.WriteString("\n- " + r)
			h.WriteString("<li>" + html.EscapeString(r) + "</li>")
		}
		h.WriteString("</ul>")
	}
	mentions := &event.Mentions{}
	if status == bot.ApprovalPending && len(approvers) > 0 {
		var names, pills []string
		for _, u := range approvers {
			names = append(names, string(u))
			pills = append(pills, userLink(string(u)))
		}
		b.WriteString("\nApprovers: " + strings.Join(names, ", "))
		h.WriteString("<p>Approvers: " + strings.Join(pills, ", ") + "</p>")
		mentions.UserIDs = approvers
	}
	switch status {
	case bot.ApprovalPending:
		b.WriteString(fmt.Sprintf("\nTo answer: react %s to approve or %s to deny, or type `!approve %s` or `!deny %s <reason>`.",
			reactApprove, reactDeny, c.ID, c.ID))
		h.WriteString(fmt.Sprintf("<p>To answer: react %s to approve or %s to deny, or type <code>!approve %s</code> or <code>!deny %s &lt;reason&gt;</code>.</p>",
			reactApprove, reactDeny, html.EscapeString(c.ID), html.EscapeString(c.ID)))
	case bot.ApprovalApproved:
		line := "✅ Approved" + by(c)
		b.WriteString("\n" + line)
		h.WriteString("<p>✅ <strong>Approved</strong>" + byHTML(c) + "</p>")
	case bot.ApprovalDenied:
		b.WriteString("\n❌ Denied" + by(c))
		h.WriteString("<p>❌ <strong>Denied</strong>" + byHTML(c))
		if c.Reason != "" {
			b.WriteString(": " + c.Reason)
			h.WriteString(": " + escapeLines(c.Reason))
		}
		h.WriteString("</p>")
	case bot.ApprovalExpired:
		line := "⌛ Expired"
		if !c.DecidedAt.IsZero() {
			line += " at " + formatTime(c.DecidedAt)
		} else if !c.ExpiresAt.IsZero() {
			line += " at " + formatTime(c.ExpiresAt)
		}
		b.WriteString("\n" + line + "; nothing was run.")
		h.WriteString("<p>" + html.EscapeString(line) + "; nothing was run.</p>")
	}
	return &event.MessageEventContent{
		MsgType:       event.MsgText,
		Body:          b.String(),
		Format:        event.FormatHTML,
		FormattedBody: h.String(),
		Mentions:      mentions,
	}
}

func by(c bot.ApprovalCard) string {
	s := ""
	if c.DecidedBy != "" {
		s += " by " + c.DecidedBy
	}
	if !c.DecidedAt.IsZero() {
		s += " at " + formatTime(c.DecidedAt)
	}
	return s
}

func byHTML(c bot.ApprovalCard) string {
	s := ""
	if c.DecidedBy != "" {
		s += " by " + userLink(c.DecidedBy)
	}
	if !c.DecidedAt.IsZero() {
		s += " at " + formatTime(c.DecidedAt)
	}
	return s
}

// cardContent is the event content of a new approval card in a thread.
func cardContent(c bot.ApprovalCard, approvers []id.UserID, rel *event.RelatesTo) (map[string]any, error) {
	mc := renderCard(c, approvers)
	mc.RelatesTo = rel
	return withFields(mc, cardFields(c))
}

// editContent replaces the card event target with the card's new status
// (m.replace with m.new_content; the top level is the "* " fallback for
// clients without edits).
func editContent(target id.EventID, c bot.ApprovalCard) (map[string]any, error) {
	newContent, err := withFields(renderCard(c, nil), cardFields(c))
	if err != nil {
		return nil, err
	}
	mc := renderCard(c, nil)
	mc.Body = "* " + mc.Body
	mc.FormattedBody = "* " + mc.FormattedBody
	mc.RelatesTo = &event.RelatesTo{Type: event.RelReplace, EventID: target}
	out, err := withFields(mc, cardFields(c))
	if err != nil {
		return nil, err
	}
	out["m.new_content"] = newContent
	return out, nil
}

// answerContent is the event of an answer that can be rated: its run ID
// rides along (on the last event of a long answer).
func answerContent(c *event.MessageEventContent, runID string) (map[string]any, error) {
	return withFields(c, map[string]any{fieldRunID: runID})
}

func cardFields(c bot.ApprovalCard) map[string]any {
	status := c.Status
	if status == "" {
		status = bot.ApprovalPending
	}
	return map[string]any{fieldApprovalID: c.ID, fieldApprovalStatus: string(status)}
}

// withFields marshals content and adds custom top-level fields.
func withFields(mc *event.MessageEventContent, fields map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(mc)
	if err != nil {
		return nil, fmt.Errorf("marshal content: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("unmarshal content: %w", err)
	}
	for k, v := range fields {
		out[k] = v
	}
	return out, nil
}

// fileContent is an m.file event for an uploaded attachment.
func fileContent(name string, uri id.ContentURIString, size int, mime string) *event.MessageEventContent {
	return &event.MessageEventContent{
		MsgType:  event.MsgFile,
		Body:     name,
		FileName: name,
		URL:      uri,
		Info:     &event.FileInfo{MimeType: mime, Size: size},
		Mentions: &event.Mentions{},
	}
}

// reasonPrompt asks a user who reacted ❌ for the reason of the denial.
// It is an m.text, not an m.notice: the default push rules silence
// notices before they look at mentions, and this one needs the person.
func reasonPrompt(user id.UserID, approvalID string) *event.MessageEventContent {
	return &event.MessageEventContent{
		MsgType: event.MsgText,
		Body: fmt.Sprintf("%s: why deny %s? Reply in this thread with the reason, or type `!deny %s <reason>`.",
			user, approvalID, approvalID),
		Format: event.FormatHTML,
		FormattedBody: fmt.Sprintf("%s: why deny <code>%s</code>? Reply in this thread with the reason, or type <code>!deny %s &lt;reason&gt;</code>.",
			userLink(string(user)), html.EscapeString(approvalID), html.EscapeString(approvalID)),
		Mentions: &event.Mentions{UserIDs: []id.UserID{user}},
	}
}

// usageNotice answers an approval command without an ID.
func usageNotice() *event.MessageEventContent {
	return notice(event.MsgNotice, "Usage: !approve <id> or !deny <id> <reason> (the ID is on the approval card).")
}

// threadRelation puts a reply in the thread rooted at root, with the reply
// fallback to replyTo (the latest message in the thread, else the root)
// for clients without threads.
func threadRelation(root, replyTo id.EventID) *event.RelatesTo {
	if root == "" {
		return nil
	}
	if replyTo == "" {
		replyTo = root
	}
	return (&event.RelatesTo{}).SetThread(root, replyTo)
}

// userLink renders a Matrix user ID as a pill; anything else as text.
func userLink(user string) string {
	if strings.HasPrefix(user, "@") && strings.Contains(user, ":") {
		u := html.EscapeString(user)
		return `<a href="https://matrix.to/#/` + u + `">` + u + "</a>"
	}
	return html.EscapeString(user)
}

func paragraphs(text string) string {
	return "<p>" + escapeLines(text) + "</p>"
}

func escapeLines(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "\n", "<br>")
}

func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], true
}
