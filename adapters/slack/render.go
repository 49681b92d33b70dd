package slack

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

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
	maxCommandShown  = 2500
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
	return slack.NewSectionBlock(mrkdwn(truncateRunes(s, maxSectionText)), nil, nil)
}

func contextLine(s string) *slack.ContextBlock {
	return slack.NewContextBlock("", mrkdwn(truncateRunes(s, maxContextText)))
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
		m := renderAnswer(r.Text)
		if r.RunID != "" {
			m = withFeedback(m, r.RunID)
		}
		return m
	case bot.ReplyError:
		return renderError(r.Text, r.ErrorID)
	default:
		if len(r.Links) > 0 {
			return renderWithLinks(r.Text, r.Links)
		}
		return renderNotice(r.Text)
	}
}

// maxLinkButtons is how many link buttons one message carries (Slack
// allows 25 elements in an actions block; five is what people read).
const maxLinkButtons = 5

// renderWithLinks is a message with link buttons under it: an alert's
// state with its source, runbook and dashboards.
func renderWithLinks(text string, links []bot.Link) message {
	esc := escapeMrkdwn(text)
	m := message{
		Text:   truncateRunes(esc, maxFallbackText),
		Blocks: []slack.Block{section(esc)},
	}
	var buttons []slack.BlockElement
	for i, l := range links {
		if i == maxLinkButtons {
			break
		}
		btn := slack.NewButtonBlockElement(fmt.Sprintf("vigil_link_%d", i), "", plain(truncateRunes(l.Text, 75)))
		btn.URL = l.URL
		buttons = append(buttons, btn)
	}
	if len(buttons) > 0 {
		m.Blocks = append(m.Blocks, slack.NewActionBlock("vigil_links", buttons...))
	}
	return m
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
		blocks = append(blocks, section(codeBlock(truncateRunes(t.Command, maxCommandShown))))
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
		blocks = append(blocks, section(codeBlock(truncateRunes(t.Output, maxSectionText-50))))
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
	return message{Text: truncateRunes(escapeMrkdwn(text), maxFallbackText), Blocks: blocks}
}

// renderAnswer renders the model's final answer, converted to mrkdwn and
// split into sections Slack accepts.
func renderAnswer(markdown string) message {
	text := markdownToMrkdwn(markdown)
	if text == "" {
		text = "_(empty answer)_"
	}
	var blocks []slack.Block
	chunks := splitMrkdwn(text, maxSectionText)
	for i, c := range chunks {
		if len(blocks) == maxBlocks-1 && i < len(chunks)-1 {
			blocks = append(blocks, contextLine(":scissors: The answer was too long for one Slack message and was cut here."))
			break
		}
		blocks = append(blocks, section(c))
	}
	return message{Text: fallbackText(text), Blocks: blocks}
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
	return truncateRunes(s, maxFallbackText)
}

func renderNotice(text string) message {
	esc := escapeMrkdwn(text)
	return message{
		Text:   truncateRunes(esc, maxFallbackText),
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
		Text:   truncateRunes(esc, maxFallbackText),
		Blocks: []slack.Block{contextLine(line)},
	}
}

// renderEphemeral is a message only one user sees.
func renderEphemeral(text string) message {
	esc := escapeMrkdwn(text)
	return message{
		Text:   truncateRunes(esc, maxFallbackText),
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

// renderApproval renders an approval card. Pending cards carry Approve
// (with a confirm dialog) and Deny buttons; decided cards show the outcome
// and no buttons.
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
	if label == "Approval needed" {
		fallback += " (requested by " + userRef(c.Requester) + ")"
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
	if c.Command != "" {
		blocks = append(blocks, section("*Command*\n"+codeBlock(truncateRunes(c.Command, maxCommandShown))))
	}
	if len(c.Details) > 0 {
		blocks = append(blocks, section(detailsText(c.Details)))
	}
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
	return message{Text: truncateRunes(fallback, maxFallbackText), Blocks: blocks}, nil
}

// detailsText lists a change line by line. A value that inline code
// would alter (a backtick, a line break) is shown as a code block instead,
// so the approver reads the exact value.
func detailsText(ds []bot.CardDetail) string {
	var b strings.Builder
	b.WriteString("*Change*")
	for _, d := range ds {
		b.WriteString("\n• *" + escapeMrkdwn(d.Label) + ":* ")
		v := truncateRunes(d.Value, maxCommandShown)
		if strings.ContainsAny(v, "`\n") || strings.Join(strings.Fields(v), " ") != v {
			b.WriteString("\n" + codeBlock(v))
		} else {
			b.WriteString(inlineCode(v))
		}
	}
	return b.String()
}

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
