package slack

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/vigilops/vigil/adapters/internal/split"
	"github.com/vigilops/vigil/bot"
)

// message is exactly what vigil sends as one Slack message: the
// notification text (also the fallback where blocks can't be shown) and the
// Block Kit blocks. Golden files are this struct marshalled.
type message struct {
	Text   string        `json:"text"`
	Blocks []slack.Block `json:"blocks"`
}

func (m message) options() []slack.MsgOption {
	return []slack.MsgOption{
		slack.MsgOptionText(m.Text, false),
		slack.MsgOptionBlocks(m.Blocks...),
	}
}

// Block Kit limits (https://api.slack.com/reference/block-kit/blocks).
const (
	maxBlocks        = 50
	maxSectionText   = 3000
	maxContextText   = 2000
	maxHeaderText    = 150
	maxFallbackText  = 300
	maxConfirmText   = 300
	maxBatchTraces   = 10
	maxBatchChars    = 12000
	actionApprove    = "vigil_approve"
	actionDeny       = "vigil_deny"
	actionGood       = "vigil_feedback_good"
	actionBad        = "vigil_feedback_bad"
	denyCallbackID   = "vigil_deny"
	denyReasonBlock  = "reason"
	denyReasonAction = "reason"
	maxReasonLength  = 500
)

func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, false)
}

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
}

func section(s string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwn(clampMrkdwn(s, maxSectionText)), nil, nil)
}

func contextLine(s string) *slack.ContextBlock {
	return slack.NewContextBlock("", mrkdwn(clampMrkdwn(s, maxContextText)))
}

// clampMrkdwn is the last guard on a text object's length. Renderers split
// long content before it gets here (split.Split); should something still
// be too long, the cut never leaves half an entity or a half link, and a
// code block it cuts is closed.
func clampMrkdwn(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := truncateRunes(s, n-4)
	cut = strings.TrimSuffix(cut, "…")
	if loc := rePartialEntity.FindStringIndex(cut); loc != nil {
		cut = cut[:loc[0]]
	}
	if lt := strings.LastIndexByte(cut, '<'); lt >= 0 && !strings.Contains(cut[lt:], ">") {
		cut = cut[:lt]
	}
	if strings.Count(cut, "```")%2 == 1 {
		return cut + "…```"
	}
	return cut + "…"
}

// rePartialEntity is an entity cut at the end of a text ("&am").
var rePartialEntity = regexp.MustCompile(`&[a-zA-Z0-9#]{0,7}$`)

// codeSections shows s verbatim in code blocks, as many sections as it
// takes (split on line boundaries after escaping); label, mrkdwn, heads
// the first.
func codeSections(label, s string) []slack.Block {
	s = strings.TrimRight(s, " \t\r\n")
	budget := maxSectionText - 8 // two fences and a line break
	if label != "" {
		budget -= utf8.RuneCountInString(label) + 1
	}
	var blocks []slack.Block
	for i, p := range split.Split(s, split.Options{Limit: budget, Measure: measureCode}) {
		// Each piece shown exactly: a space at a cut is kept.
		text := "```" + escapeMrkdwn(strings.ReplaceAll(orText(p.Body, " "), "```", "``\u200b`")) + "```"
		if i == 0 && label != "" {
			text = label + "\n" + text
		}
		blocks = append(blocks, section(text))
	}
	return blocks
}

// renderReply renders every reply kind but traces, which go through
// renderTraces so queued ones can share a message.
func renderReply(r bot.Reply) message {
	switch r.Kind {
	case bot.ReplyTrace:
		if r.Trace != nil {
			return renderTraces([]bot.Trace{*r.Trace})
		}
		return renderNotice(r.Text)
	case bot.ReplyAnswer:
		// Post sends every message of a long answer (renderAnswer); this
		// is its first.
		return renderAnswer(r.Text, r.RunID, 0).msgs[0]
	case bot.ReplyError:
		return renderError(r.Text, r.ErrorID)
	default:
		if r.Alert != nil {
			return renderAlertCard(*r.Alert)
		}
		if len(r.Links) > 0 {
			return renderWithLinks(r.Text, r.Links)
		}
		return renderNotice(r.Text)
	}
}

// maxFieldText bounds a section field (Slack allows 2,000 characters).
const maxFieldText = 2000

// renderAlertCard is an alert group's state: its headline, a row of
// fields (severity, source, start), its labels as a context line, the
// lead alert's summary and description, and link buttons.
func renderAlertCard(c bot.AlertCard) message {
	m := message{Text: fallbackOf(escapeMrkdwn(c.Text()))}
	m.Blocks = append(m.Blocks, section(fmt.Sprintf("*%s: %s*  (firing %d / resolved %d)",
		c.Status(), escapeMrkdwn(c.Name), c.Firing, c.Resolved)))
	if u := c.UntrackedText(); u != "" {
		m.Blocks = append(m.Blocks, contextLine(escapeMrkdwn(u)))
	}
	field := func(name, value string) *slack.TextBlockObject {
		return mrkdwn(clampMrkdwn("*"+name+"*\n"+escapeMrkdwn(value), maxFieldText))
	}
	m.Blocks = append(m.Blocks, slack.NewSectionBlock(nil, []*slack.TextBlockObject{
		field("Severity", c.Severity), field("Source", c.Source), field("Started", c.StartedText()),
	}, nil))
	if len(c.Labels) > 0 {
		m.Blocks = append(m.Blocks, contextLine("Labels: "+escapeMrkdwn(strings.Join(c.Labels, ", "))))
	}
	for _, a := range []struct{ name, text string }{{"Summary", c.Summary}, {"Description", c.Description}} {
		if a.text != "" {
			m.Blocks = append(m.Blocks, section("*"+a.name+":* "+escapeMrkdwn(a.text)))
		}
	}
	m.Blocks = append(m.Blocks, linkBlocks(c.Links)...)
	if len(m.Blocks) > maxBlocks {
		m.Blocks = m.Blocks[:maxBlocks]
	}
	return m
}

// maxLinkButtons is how many link buttons one message carries (Slack
// allows 25 elements in an actions block; five is what people read).
// A button's URL may be 3,000 characters and its text 75.
const (
	maxLinkButtons = 5
	maxButtonURL   = 3000
	maxButtonText  = 75
)

// renderWithLinks is a message with link buttons under it: an alert's
// state with its source, runbook and dashboards. Links Slack would refuse
// (not http(s), a URL over 3,000 characters) become a line saying so
// instead of a button, so the message itself is never refused.
func renderWithLinks(text string, links []bot.Link) message {
	esc := escapeMrkdwn(text)
	m := message{Text: fallbackOf(esc)}
	for _, p := range split.Split(text, split.Options{Limit: maxSectionText - 10, Measure: measureEscaped}) {
		if strings.TrimSpace(p.Body) != "" {
			m.Blocks = append(m.Blocks, section(escapeMrkdwn(p.Body)))
		}
	}
	m.Blocks = append(m.Blocks, linkBlocks(links)...)
	if len(m.Blocks) > maxBlocks {
		m.Blocks = m.Blocks[:maxBlocks]
	}
	return m
}

// linkBlocks are link buttons for links: Links Slack would refuse (not
// http(s), a URL over 3,000 characters) become a line saying so instead of
// a button, so the message itself is never refused.
func linkBlocks(links []bot.Link) []slack.Block {
	var blocks []slack.Block
	var buttons []slack.BlockElement
	var unusable []string
	extra := 0
	for _, l := range links {
		if !buttonURL(l.URL) {
			unusable = append(unusable, fmt.Sprintf("%s (%d characters)", truncateRunes(l.Text, maxButtonText), utf8.RuneCountInString(l.URL)))
			continue
		}
		if len(buttons) == maxLinkButtons {
			extra++
			continue
		}
		btn := slack.NewButtonBlockElement(fmt.Sprintf("vigil_link_%d", len(buttons)), "", plain(truncateRunes(orText(l.Text, "link"), maxButtonText)))
		btn.URL = l.URL
		buttons = append(buttons, btn)
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("vigil_links", buttons...))
	}
	if len(unusable) > 0 {
		blocks = append(blocks, contextLine(":link: Not shown, the link is too long for Slack or not http(s): "+escapeMrkdwn(strings.Join(unusable, "; "))))
	}
	if extra > 0 {
		blocks = append(blocks, contextLine(fmt.Sprintf(":link: %d more link(s) not shown.", extra)))
	}
	return blocks
}

// buttonURL reports whether Slack accepts u as a link button's URL.
func buttonURL(u string) bool {
	l := strings.ToLower(u)
	return utf8.RuneCountInString(u) <= maxButtonURL && (strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://"))
}

func orText(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// measureEscaped sizes plain text once escaped for mrkdwn.
func measureEscaped(line string, _ split.LineKind) int {
	return utf8.RuneCountInString(escapeMrkdwn(line))
}

type outcomeStyle struct{ emoji, label string }

func styleOf(o bot.Outcome) outcomeStyle {
	switch o {
	case bot.OutcomeOK:
		return outcomeStyle{":white_check_mark:", "ok"}
	case bot.OutcomeFailed:
		return outcomeStyle{":x:", "failed"}
	case bot.OutcomeBlocked:
		return outcomeStyle{":no_entry:", "blocked"}
	case bot.OutcomeApproval:
		return outcomeStyle{":hourglass_flowing_sand:", "needs approval"}
	default:
		return outcomeStyle{":grey_question:", string(o)}
	}
}

// formatDuration prints a tool duration the way people read it.
func formatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

func traceTitle(t bot.Trace) string {
	name := t.Tool
	if t.Action != "" {
		name += "." + t.Action
	}
	return name
}

// traceBlocks renders one tool call: a title line with the outcome, the
// command, the error, the output and a truncation note.
func traceBlocks(t bot.Trace) []slack.Block {
	st := styleOf(t.Outcome)
	title := st.emoji + " *" + escapeMrkdwn(traceTitle(t)) + "*"
	if t.Target != "" {
		title += " on " + inlineCode(t.Target)
	}
	title += " · " + st.label
	if d := formatDuration(t.Duration); d != "" {
		title += " · " + d
	}
	blocks := []slack.Block{section(title)}
	if t.Command != "" {
		blocks = append(blocks, codeSections("", t.Command)...)
	}
	if t.Sandbox != "" {
		blocks = append(blocks, contextLine(":lock: sandbox: "+escapeMrkdwn(t.Sandbox)))
	}
	if t.Outcome != bot.OutcomeOK && (t.Code != "" || t.Message != "") {
		var line []string
		if t.Code != "" {
			line = append(line, inlineCode(t.Code))
		}
		if t.Message != "" {
			line = append(line, escapeMrkdwn(t.Message))
		}
		blocks = append(blocks, section(strings.Join(line, " ")))
	}
	if strings.TrimSpace(t.Output) != "" {
		blocks = append(blocks, codeSections("", t.Output)...)
	}
	if t.Truncated {
		note := fmt.Sprintf(":scissors: Output truncated to %d characters", utf8.RuneCountInString(t.Output))
		if t.FullOutput != "" {
			note += fmt.Sprintf(" of %d; the full output is attached in this thread.", utf8.RuneCountInString(t.FullOutput))
		} else {
			note += "."
		}
		blocks = append(blocks, contextLine(note))
	}
	return blocks
}

// traceCost is a trace's share of a message: blocks and characters.
func traceCost(t bot.Trace) (blocks, chars int) {
	return len(traceBlocks(t)), len(t.Command) + len(t.Output) + len(t.Message) + 200
}

// renderTraces renders one or more traces of the same thread as a single
// message, separated by dividers.
func renderTraces(traces []bot.Trace) message {
	var blocks []slack.Block
	var parts []string
	for i, t := range traces {
		if i > 0 {
			blocks = append(blocks, slack.NewDividerBlock())
		}
		blocks = append(blocks, traceBlocks(t)...)
		part := traceTitle(t)
		if t.Target != "" {
			part += " on " + t.Target
		}
		parts = append(parts, part+": "+styleOf(t.Outcome).label)
	}
	text := strings.Join(parts, "; ")
	if len(traces) > 1 {
		text = fmt.Sprintf("%d tool calls: %s", len(traces), text)
	}
	return message{Text: fallbackOf(escapeMrkdwn(text)), Blocks: blocks}
}

// Long answers (README "How long content is delivered"): an answer is
// split into sections of at most maxSectionText characters after
// conversion and escaping, and the sections into as many messages as it
// takes. Past the total cap the last message says what was cut, and the
// whole answer follows as a file.
const (
	// DefaultMaxAnswerChars is the total cap on the characters of an
	// answer posted as messages (Config.MaxAnswerChars).
	DefaultMaxAnswerChars = 100_000
	// maxAnswerSections leaves room under the sections of a message for
	// a cut note and the feedback buttons.
	maxAnswerSections = maxBlocks - 3
	// maxMessageChars bounds the text of one message's blocks.
	maxMessageChars = 36_000
)

// answer is a rendered answer: its messages, in order, and the whole
// Markdown to attach when the cap cut it.
type answer struct {
	msgs   []message
	attach string
}

// renderAnswer renders the model's final answer, converted to mrkdwn and
// split into sections and messages Slack accepts. maxChars caps what is
// posted as messages (0: DefaultMaxAnswerChars); runID adds feedback
// buttons to the last message.
func renderAnswer(markdown, runID string, maxChars int) answer {
	if maxChars <= 0 {
		maxChars = DefaultMaxAnswerChars
	}
	md := normaliseMarkdown(markdown)
	pieces := split.Split(md, split.Options{Limit: maxSectionText - 10, Measure: measureLine})
	var sections []string
	shown, cut := 0, false
	for _, p := range pieces {
		n := utf8.RuneCountInString(p.Body) + len(p.Sep)
		if shown > 0 && shown+n > maxChars {
			cut = true
			break
		}
		shown += n
		if text := markdownToMrkdwn(p.Text()); text != "" {
			sections = append(sections, text)
		}
	}
	if len(sections) == 0 {
		sections = []string{"_(empty answer)_"}
	}
	var a answer
	var cur message
	chars := 0
	for _, sec := range sections {
		n := utf8.RuneCountInString(sec)
		if len(cur.Blocks) == maxAnswerSections || (len(cur.Blocks) > 0 && chars+n > maxMessageChars) {
			a.msgs = append(a.msgs, cur)
			cur, chars = message{}, 0
		}
		if len(cur.Blocks) == 0 {
			cur.Text = fallbackText(sec)
		}
		cur.Blocks = append(cur.Blocks, section(sec))
		chars += n
	}
	a.msgs = append(a.msgs, cur)
	if len(a.msgs) > 1 {
		for i := range a.msgs {
			a.msgs[i].Text = fallbackOf(fmt.Sprintf("(%d/%d) %s", i+1, len(a.msgs), a.msgs[i].Text))
		}
	}
	last := &a.msgs[len(a.msgs)-1]
	if cut {
		total := utf8.RuneCountInString(md)
		last.Blocks = append(last.Blocks, contextLine(fmt.Sprintf(
			":scissors: The answer is %d characters; the first %d are shown above. The whole answer is attached below as a file.", total, shown)))
		a.attach = markdown
	}
	if runID != "" {
		*last = withFeedback(*last, runID)
	}
	return a
}

// feedbackValue is what a feedback button carries back: the run whose
// answer it rates.
type feedbackValue struct {
	Run string `json:"run"`
}

// withFeedback adds 👍/👎 buttons under an answer, for the run it ends.
func withFeedback(m message, runID string) message {
	value, err := json.Marshal(feedbackValue{Run: runID})
	if err != nil {
		return m
	}
	if len(m.Blocks) >= maxBlocks {
		m.Blocks = m.Blocks[:maxBlocks-1]
	}
	good := slack.NewButtonBlockElement(actionGood, string(value), plain(":+1: Helpful"))
	bad := slack.NewButtonBlockElement(actionBad, string(value), plain(":-1: Not helpful"))
	m.Blocks = append(m.Blocks, slack.NewActionBlock("vigil_feedback", good, bad))
	return m
}

// fallbackText is the first line-ish of mrkdwn for notifications.
func fallbackText(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "```", "")), " ")
	return fallbackOf(s)
}

func renderNotice(text string) message {
	esc := escapeMrkdwn(text)
	return message{
		Text:   fallbackOf(esc),
		Blocks: []slack.Block{contextLine(":information_source: " + esc)},
	}
}

func renderError(text, errorID string) message {
	esc := escapeMrkdwn(text)
	line := ":warning: " + esc
	if errorID != "" {
		line += " · error ID " + inlineCode(errorID)
	}
	return message{
		Text:   fallbackOf(esc),
		Blocks: []slack.Block{contextLine(line)},
	}
}

// renderEphemeral is a message only one user sees.
func renderEphemeral(text string) message {
	esc := escapeMrkdwn(text)
	return message{
		Text:   fallbackOf(esc),
		Blocks: []slack.Block{contextLine(":lock: " + esc)},
	}
}

var reSlackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)

// userRef renders a user: a Slack mention for Slack IDs, plain text
// otherwise.
func userRef(id string) string {
	if reSlackUserID.MatchString(id) {
		return "<@" + id + ">"
	}
	if id == "" {
		return "someone"
	}
	return escapeMrkdwn(id)
}

// slackDate renders a time in each reader's own time zone, with a UTC
// fallback for clients that can't.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

func riskLabel(risk string) string {
	switch strings.ToLower(risk) {
	case "high":
		return ":red_circle: high"
	case "medium":
		return ":large_orange_circle: medium"
	case "low":
		return ":large_yellow_circle: low"
	case "":
		return "unknown"
	default:
		return escapeMrkdwn(risk)
	}
}

// buttonValue is what an approval button carries back. The token is a
// secret: it lives only here, never in text.
type buttonValue struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// Cards show the whole change: the command in as many sections as it
// takes, its parts, and each detail. A change that needs more than
// maxChangeBlocks sections is attached to the thread as a file instead
// (cardAttachment), and the card shows its beginning, its size and the
// SHA-256 the approval binds.
const maxChangeBlocks = 24

// changeBlocks renders the change of a card; attached reports that it was
// too long and the card shows only its beginning and where the rest is.
func changeBlocks(c bot.ApprovalCard) (blocks []slack.Block, attached bool) {
	if c.Command != "" {
		blocks = append(blocks, codeSections("*Command*", c.Command)...)
	}
	if len(c.Parts) > 0 {
		blocks = append(blocks, codeSections("*What it runs, part by part*", strings.Join(c.Parts, "\n"))...)
	}
	// Short one-line details share a section; a long or multi-line value
	// gets code blocks of its own.
	var line strings.Builder
	flush := func() {
		if line.Len() > 0 {
			blocks = append(blocks, section(line.String()))
			line.Reset()
		}
	}
	for i, d := range c.Details {
		head := "• *" + escapeMrkdwn(d.Label) + ":*"
		if i == 0 && c.Command == "" {
			line.WriteString("*Change*")
		}
		v := d.Value
		if v != "" && !strings.ContainsAny(v, "`\n") && strings.Join(strings.Fields(v), " ") == v && utf8.RuneCountInString(v) < 500 {
			item := head + " " + inlineCode(v)
			if utf8.RuneCountInString(line.String())+utf8.RuneCountInString(item) > maxSectionText-100 {
				flush()
			}
			if line.Len() > 0 {
				line.WriteString("\n")
			}
			line.WriteString(item)
			continue
		}
		if line.Len() > 0 {
			head = line.String() + "\n" + head
			line.Reset()
		}
		blocks = append(blocks, codeSections(head, v)...)
	}
	flush()
	if len(blocks) <= maxChangeBlocks {
		return blocks, false
	}
	full := c.FullChange()
	head := codeSections("*Change (beginning)*", split.FirstLines(full, 40))
	if len(head) > 2 {
		head = head[:2]
	}
	note := fmt.Sprintf(":paperclip: The whole change is %d characters, too long for a card: it is attached in this thread as %s. "+
		"Approving approves exactly that text: SHA-256 %s.", utf8.RuneCountInString(full), inlineCode(cardFileName(c)), inlineCode(c.ChangeHash))
	return append(head, section(note)), true
}

// cardFileName names the file a long change is attached as.
func cardFileName(c bot.ApprovalCard) string { return "approval-" + c.ID + "-change.txt" }

// cardAttachment is the file a card too long to show in full comes with:
// the whole change, whose SHA-256 the card prints. nil when the card
// shows everything.
func cardAttachment(c bot.ApprovalCard) *attachment {
	if _, attached := changeBlocks(c); !attached {
		return nil
	}
	return &attachment{
		name:    cardFileName(c),
		title:   "Full change for approval " + c.ID + " (SHA-256 " + c.ChangeHash + ")",
		content: c.FullChange(),
		what:    "the full change of approval " + c.ID,
	}
}

// mentionOf renders an approver entry as a Slack mention: <@U…> for a
// user, <!subteam^S…> for a user group; "" for anything else.
func mentionOf(entry string) string {
	if g, ok := strings.CutPrefix(entry, "usergroup:"); ok && reSlackGroupID.MatchString(g) {
		return "<!subteam^" + g + ">"
	}
	if reSlackUserID.MatchString(entry) {
		return "<@" + entry + ">"
	}
	return ""
}

var reSlackGroupID = regexp.MustCompile(`^S[A-Z0-9]{2,}$`)

// approverMentions mentions the card's approvers, so a pending card
// notifies them; "" when none is known.
func approverMentions(c bot.ApprovalCard) string {
	var ms []string
	for _, a := range c.Approvers {
		if m := mentionOf(a); m != "" && !slices.Contains(ms, m) {
			ms = append(ms, m)
		}
	}
	return strings.Join(ms, " ")
}

// renderApproval renders an approval card. Pending cards carry Approve
// (with a confirm dialog) and Deny buttons and mention the approvers;
// decided cards show the outcome and no buttons.
func renderApproval(c bot.ApprovalCard) (message, error) {
	emoji, label := ":lock:", "Approval needed"
	switch c.Status {
	case bot.ApprovalApproved:
		emoji, label = ":white_check_mark:", "Approved"
	case bot.ApprovalDenied:
		emoji, label = ":x:", "Denied"
	case bot.ApprovalExpired:
		emoji, label = ":hourglass:", "Expired"
	}
	head := emoji + " " + label
	what := c.Tool
	if c.Target != "" {
		what += " on " + c.Target
	}
	fallback := label + ": " + escapeMrkdwn(what)
	mentions := ""
	if label == "Approval needed" {
		fallback += " (requested by " + userRef(c.Requester) + ")"
		if mentions = approverMentions(c); mentions != "" {
			fallback = mentions + " " + fallback
		}
	}

	blocks := []slack.Block{slack.NewHeaderBlock(plain(truncateRunes(headerText(head, c), maxHeaderText)))}
	if c.Summary != "" {
		blocks = append(blocks, section(escapeMrkdwn(c.Summary)))
	}
	fields := []*slack.TextBlockObject{
		mrkdwn("*Tool*\n" + inlineCode(c.Tool)),
		mrkdwn("*Target*\n" + orDash(inlineCode(c.Target))),
		mrkdwn("*Risk*\n" + riskLabel(c.Risk)),
		mrkdwn("*Requested by*\n" + userRef(c.Requester)),
	}
	blocks = append(blocks, slack.NewSectionBlock(nil, fields, nil))
	change, _ := changeBlocks(c)
	blocks = append(blocks, change...)
	if len(c.Reasons) > 0 {
		var b strings.Builder
		b.WriteString("*Why it needs approval*")
		for _, r := range c.Reasons {
			b.WriteString("\n• " + escapeMrkdwn(r))
		}
		blocks = append(blocks, section(b.String()))
	}

	switch c.Status {
	case bot.ApprovalApproved:
		line := ":white_check_mark: Approved by " + userRef(c.DecidedBy)
		if !c.DecidedAt.IsZero() {
			line += " " + slackDate(c.DecidedAt)
		}
		blocks = append(blocks, contextLine(line+" · ID "+inlineCode(c.ID)))
	case bot.ApprovalDenied:
		line := ":x: Denied by " + userRef(c.DecidedBy)
		if !c.DecidedAt.IsZero() {
			line += " " + slackDate(c.DecidedAt)
		}
		if c.Reason != "" {
			line += ": _" + escapeMrkdwn(strings.Join(strings.Fields(c.Reason), " ")) + "_"
		}
		blocks = append(blocks, contextLine(line+" · nothing was run · ID "+inlineCode(c.ID)))
	case bot.ApprovalExpired:
		line := ":hourglass: Expired"
		if !c.ExpiresAt.IsZero() {
			line += " " + slackDate(c.ExpiresAt)
		}
		blocks = append(blocks, contextLine(line+" · nothing was run · ID "+inlineCode(c.ID)))
	default:
		line := "ID " + inlineCode(c.ID)
		if !c.ExpiresAt.IsZero() {
			line = "Expires " + slackDate(c.ExpiresAt) + " · " + line
		}
		blocks = append(blocks, contextLine(line))
		if mentions != "" {
			blocks = append(blocks, section("*Approvers:* "+mentions))
		}
		value, err := json.Marshal(buttonValue{ID: c.ID, Token: c.Token})
		if err != nil {
			return message{}, fmt.Errorf("encode button value: %w", err)
		}
		confirmText := "vigil will run " + c.Tool
		if c.Target != "" {
			confirmText += " on " + c.Target
		}
		if c.Command != "" {
			confirmText += ": " + strings.Join(strings.Fields(c.Command), " ")
		} else if c.Summary != "" {
			confirmText += ": " + strings.Join(strings.Fields(c.Summary), " ")
		}
		confirm := slack.NewConfirmationBlockObject(
			plain("Approve and run?"),
			plain(truncateRunes(confirmText, maxConfirmText)),
			plain("Approve and run"),
			plain("Cancel"),
		)
		approve := slack.NewButtonBlockElement(actionApprove, string(value), plain("Approve")).
			WithStyle(slack.StylePrimary).WithConfirm(confirm)
		deny := slack.NewButtonBlockElement(actionDeny, string(value), plain("Deny")).WithStyle(slack.StyleDanger)
		blocks = append(blocks, slack.NewActionBlock("vigil_approval", approve, deny))
	}
	if len(blocks) > maxBlocks { // cannot happen with maxChangeBlocks; kept as a guard
		blocks = append(blocks[:maxBlocks-1], blocks[len(blocks)-1])
	}
	return message{Text: fallbackOf(fallback), Blocks: blocks}, nil
}

// fallbackOf bounds a notification text without cutting a mention or an
// entity.
func fallbackOf(s string) string { return clampMrkdwn(s, maxFallbackText) }

func headerText(head string, c bot.ApprovalCard) string {
	if c.Tool == "" {
		return head
	}
	return head + ": " + c.Tool
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// denyMetadata travels in the deny modal's private_metadata, which only
// vigil sees; it is never shown.
type denyMetadata struct {
	ID      string `json:"id"`
	Token   string `json:"token"`
	Channel string `json:"channel"`
	Thread  string `json:"thread"`
}

// renderDenyModal is the dialog that asks a person why they deny.
func renderDenyModal(approvalID, metadata string) slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(plain("e.g. not during business hours; restart the replica first"), denyReasonAction)
	input.Multiline = true
	input.MaxLength = maxReasonLength
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      denyCallbackID,
		Title:           plain("Deny request"),
		Submit:          plain("Deny"),
		Close:           plain("Cancel"),
		PrivateMetadata: metadata,
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section("You are denying approval " + inlineCode(approvalID) + ". Nothing will run; the thread will see your reason."),
			slack.NewInputBlock(denyReasonBlock, plain("Reason"), nil, input),
		}},
	}
}
