package matrix

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/format"

	"github.com/vigilops/vigil/adapters/internal/split"
)

// Long content (README "How long content is delivered"). A homeserver
// refuses an event over 65,536 bytes (M_TOO_LARGE, or M_BAD_JSON from
// Dendrite) and nothing at all reaches the thread. An answer is split with
// the same rule Slack uses, measured here in JSON-encoded bytes of the
// plain body and the HTML together, into events of at most
// maxEventContent bytes: a wide margin under the limit for the relation,
// custom fields and the homeserver's own envelope (sender, signatures,
// hashes). Past the total cap the last event says what was cut and the
// whole answer follows as an m.file.
const (
	maxEventContent = 40_000
	// DefaultMaxAnswerChars is the total cap on the characters of an
	// answer posted as events (Config.MaxAnswerChars).
	DefaultMaxAnswerChars = 100_000
	// maxResplit bounds how often an event measured too large after
	// rendering is split again.
	maxResplit = 6
)

// jsonLen is the length of s as a JSON string body the way Go's encoder
// writes it (HTML characters as \u003c, control characters escaped).
func jsonLen(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
			n += 6
		case r == utf8.RuneError:
			n += 6
		default:
			n += utf8.RuneLen(r)
		}
	}
	return n
}

// reMarkup are the characters Markdown may turn into tags.
var reMarkup = regexp.MustCompile("[*_~`\\[\\]()<>#|!-]")

// measureLine is Matrix's size of one Markdown line: the JSON bytes it
// adds to the plain body and, once rendered and escaped, to the HTML. Tags
// are estimated generously per markup character; renderAnswer checks the
// real size of each event and splits again where the estimate was short.
func measureLine(line string, kind split.LineKind) int {
	body := jsonLen(line) + 2
	esc := jsonLen(html.EscapeString(line))
	switch kind {
	case split.FenceLine:
		return body + 60 // <pre><code class="language-…">
	case split.Code:
		return body + esc + 2
	default:
		return body + esc + 40 + 14*len(reMarkup.FindAllStringIndex(line, -1))
	}
}

// answerEvents are the events of one answer, in order, and the whole
// Markdown to attach when the cap cut it.
type answerEvents struct {
	events []*event.MessageEventContent
	attach string
}

// renderAnswer renders an answer as one or more events, each within the
// event size limit; maxChars (0: DefaultMaxAnswerChars) caps what is posted
// as events. The feedback hint goes on the last event.
func renderAnswer(markdown, runID string, maxChars int) answerEvents {
	if maxChars <= 0 {
		maxChars = DefaultMaxAnswerChars
	}
	md := normaliseMarkdown(markdown)
	var out answerEvents
	shown, cut := 0, false
	for _, p := range split.Split(md, split.Options{Limit: maxEventContent, Measure: measureLine}) {
		n := utf8.RuneCountInString(p.Body) + len(p.Sep)
		if shown > 0 && shown+n > maxChars {
			cut = true
			break
		}
		shown += n
		out.events = append(out.events, fitEvents(p.Text(), maxEventContent, 0)...)
	}
	if len(out.events) == 0 {
		out.events = []*event.MessageEventContent{renderMarkdown("(empty answer)")}
	}
	last := out.events[len(out.events)-1]
	if cut {
		note := fmt.Sprintf("✂️ The answer is %d characters; the first %d are shown above. The whole answer is attached below as a file.",
			utf8.RuneCountInString(md), shown)
		appendNote(last, note)
		out.attach = markdown
	}
	if runID != "" {
		appendNote(last, feedbackHint)
	}
	return out
}

// appendNote ends an event with a small line of vigil's own.
func appendNote(c *event.MessageEventContent, note string) {
	c.Body += "\n\n" + note
	if c.Format == event.FormatHTML {
		c.FormattedBody += "\n<p><sub>" + html.EscapeString(note) + "</sub></p>"
	}
}

// fitEvents renders a piece of Markdown, splitting it again (with half the
// limit) while the rendered event is still too large.
func fitEvents(md string, limit, depth int) []*event.MessageEventContent {
	c := renderMarkdown(md)
	if contentSize(c) <= maxEventContent || depth >= maxResplit {
		return []*event.MessageEventContent{c}
	}
	var out []*event.MessageEventContent
	for _, p := range split.Split(md, split.Options{Limit: limit / 2, Measure: measureLine}) {
		out = append(out, fitEvents(p.Text(), limit/2, depth+1)...)
	}
	return out
}

// contentSize is an event content's JSON size.
func contentSize(c any) int {
	raw, err := json.Marshal(c)
	if err != nil {
		return maxEventContent + 1
	}
	return len(raw)
}

// normaliseMarkdown is the Markdown an answer is rendered from: Unix line
// ends, tables as aligned code blocks (Element keeps the cells but not
// their alignment), images as links (no client loads a remote picture
// because the model wrote one).
func normaliseMarkdown(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	return split.ImagesAsLinks(split.Tables(md))
}

// renderMarkdown renders Markdown as a message: the Markdown as the plain
// body, and HTML that raw HTML in the Markdown cannot reach (escaped) and
// that passes the sanitiser.
func renderMarkdown(text string) *event.MessageEventContent {
	c := format.RenderMarkdown(text, true, false)
	c.MsgType = event.MsgText
	c.Body = text
	c.Mentions = &event.Mentions{}
	if c.Format == event.FormatHTML {
		c.FormattedBody = strings.TrimSpace(sanitizeHTML(c.FormattedBody))
	}
	return &c
}

// htmlPolicy is the allowlist formatted bodies pass: the tags the Matrix
// spec lists for m.room.message HTML, minus images, with links only to
// http(s) and mailto, a language class on code, a start on lists, and no
// other attribute (no scripts, no styles, no event handlers, no
// javascript: or data: URLs, no remote images).
var htmlPolicy = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("del", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "p", "ul", "ol", "sup", "sub", "li",
		"b", "i", "u", "strong", "em", "s", "strike", "code", "hr", "br", "div", "table", "thead", "tbody", "tr",
		"th", "td", "caption", "pre", "span", "details", "summary")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("https", "http", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[A-Za-z0-9_+#.-]{1,32}$`)).OnElements("code")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^[0-9]{1,9}$`)).OnElements("ol")
	return p
}()

// sanitizeHTML keeps only allowlisted tags and attributes.
func sanitizeHTML(s string) string { return htmlPolicy.Sanitize(s) }
