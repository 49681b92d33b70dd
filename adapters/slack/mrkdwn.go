package slack

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vigilops/vigil/adapters/internal/split"
)

// escapeMrkdwn escapes the three characters Slack's mrkdwn treats as
// control characters. Everything the bot shows goes through it, so model
// output can never form a mention (<!channel>, <@U…>) or a link by itself.
func escapeMrkdwn(s string) string {
	return mrkdwnEscaper.Replace(s)
}

var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// unescapeSlack reverses Slack's escaping of inbound message text.
func unescapeSlack(s string) string {
	return slackUnescaper.Replace(s)
}

var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// codeBlock renders s as a mrkdwn preformatted block. Backtick runs that
// would close the block early are broken with a zero-width space.
func codeBlock(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	s = strings.ReplaceAll(s, "```", "``\u200b`")
	if s == "" {
		s = " "
	}
	return "```" + escapeMrkdwn(s) + "```"
}

// inlineCode renders s as `code` on one line.
func inlineCode(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "'")), " ")
	if s == "" {
		return ""
	}
	return "`" + escapeMrkdwn(s) + "`"
}

// truncateRunes cuts s to at most n runes, marking the cut with "…".
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// markdownToMrkdwn converts the model's CommonMark-ish Markdown into Slack
// mrkdwn: **bold** and __bold__ → *bold* / _x_, *italic* → _italic_,
// ~~strike~~ → ~strike~, [text](url) → <url|text>, headings → bold lines,
// list bullets → •, code fences kept (language tags dropped), and &, <, >
// escaped everywhere.
func markdownToMrkdwn(md string) string {
	lines := strings.Split(withoutMarkers(md), "\n")
	out := make([]string, 0, len(lines))
	var fence *split.Fence
	inFence := false
	for _, line := range lines {
		if !inFence {
			if f, ok := split.OpeningFence(line); ok {
				inFence, fence = true, &f
				out = append(out, "```")
				continue
			}
		}
		if inFence {
			if fence.Closes(line) {
				inFence = false
				out = append(out, "```")
				continue
			}
			out = append(out, escapeMrkdwn(strings.ReplaceAll(line, "```", "``\u200b`")))
			continue
		}
		out = append(out, convertLine(line))
	}
	if inFence {
		out = append(out, "```")
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

var (
	reHeading  = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	reRule     = regexp.MustCompile(`^\s{0,3}([-*_])(\s*[-*_]){2,}\s*$`)
	reQuote    = regexp.MustCompile(`^\s{0,3}>\s?(.*)$`)
	reBullet   = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	reTask     = regexp.MustCompile(`^\[([ xX])\]\s+(.*)$`)
	reOrdered  = regexp.MustCompile(`^(\s*)(\d{1,9})[.)]\s+(.*)$`)
	reCode     = regexp.MustCompile("`+[^`\n]+?`+")
	reLink     = regexp.MustCompile(`!?\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"\n]*")?\s*\)`)
	reAutoLink = regexp.MustCompile(`<((?:https?://|mailto:)[^>\s]+)>`)
	reBold     = regexp.MustCompile(`\*\*(\S(?:.*?\S)?)\*\*`)
	reUBold    = regexp.MustCompile(`__(\S(?:.*?\S)?)__`)
	reItalic   = regexp.MustCompile(`(^|[^\w*])\*(\S(?:[^*\n]*?\S)?)\*($|[^\w*])`)
	reStrike   = regexp.MustCompile(`~~(\S(?:.*?\S)?)~~`)
	reHole     = regexp.MustCompile(string(markHole) + `(\d+)` + string(markHole))
)

// Private-use runes stand in for mrkdwn markers and protected spans while a
// line is converted; input containing them has them removed first.
const (
	markBold   = '\uE000'
	markItalic = '\uE001'
	markHole   = '\uE002'
)

func convertLine(line string) string {
	if m := reHeading.FindStringSubmatch(line); m != nil {
		text := strings.NewReplacer("**", "", "__", "").Replace(m[1])
		if text == "" {
			return ""
		}
		return "*" + convertInline(text) + "*"
	}
	if reRule.MatchString(line) {
		return "──────────"
	}
	if m := reQuote.FindStringSubmatch(line); m != nil {
		return "> " + convertInline(m[1])
	}
	if m := reBullet.FindStringSubmatch(line); m != nil {
		item := m[2]
		if t := reTask.FindStringSubmatch(item); t != nil {
			box := "☐"
			if t[1] != " " {
				box = "☑"
			}
			item = box + " " + t[2]
		}
		return m[1] + "• " + convertInline(item)
	}
	if m := reOrdered.FindStringSubmatch(line); m != nil {
		return m[1] + m[2] + ". " + convertInline(m[3])
	}
	return convertInline(line)
}

// convertInline converts emphasis, links and code spans in one line.
func convertInline(s string) string {
	var holes []string
	hole := func(v string) string {
		holes = append(holes, v)
		return string(markHole) + strconv.Itoa(len(holes)-1) + string(markHole)
	}
	s = reCode.ReplaceAllStringFunc(s, func(span string) string {
		inner := strings.Trim(span, "`")
		return hole("`" + escapeMrkdwn(inner) + "`")
	})
	s = reLink.ReplaceAllStringFunc(s, func(m string) string {
		sub := reLink.FindStringSubmatch(m)
		text, target := sub[1], sub[2]
		if !linkable(target) {
			if text == "" {
				return hole(escapeMrkdwn(target))
			}
			return hole(escapeMrkdwn(text + " (" + target + ")"))
		}
		if text == "" || text == target {
			return hole("<" + linkTarget(target) + ">")
		}
		// The visible text is the model's and may name another site: the
		// host the link really goes to is shown beside it.
		return hole("<" + linkTarget(target) + "|" + emphasis(escapeMrkdwn(text)) + "> (" + escapeMrkdwn(linkHost(target)) + ")")
	})
	s = reAutoLink.ReplaceAllStringFunc(s, func(m string) string {
		return hole("<" + linkTarget(m[1:len(m)-1]) + ">")
	})
	s = emphasis(escapeMrkdwn(s))
	for i := 0; i < 3 && reHole.MatchString(s); i++ {
		s = reHole.ReplaceAllStringFunc(s, func(m string) string {
			n, err := strconv.Atoi(strings.Trim(m, string(markHole)))
			if err != nil || n >= len(holes) {
				return ""
			}
			return holes[n]
		})
	}
	return s
}

// emphasis rewrites Markdown emphasis in already-escaped text.
func emphasis(s string) string {
	s = reBold.ReplaceAllString(s, string(markBold)+"$1"+string(markBold))
	s = reUBold.ReplaceAllString(s, string(markItalic)+"$1"+string(markItalic))
	// Adjacent italics share a boundary character, so one pass can miss
	// every other one.
	for i := 0; i < 3; i++ {
		next := reItalic.ReplaceAllString(s, "${1}"+string(markItalic)+"${2}"+string(markItalic)+"${3}")
		if next == s {
			break
		}
		s = next
	}
	s = reStrike.ReplaceAllString(s, "~$1~")
	return strings.NewReplacer(string(markBold), "*", string(markItalic), "_").Replace(s)
}

func linkable(target string) bool {
	l := strings.ToLower(target)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "mailto:")
}

// linkTarget makes a URL safe inside <url|text>.
func linkTarget(u string) string {
	return strings.NewReplacer("<", "%3C", ">", "%3E", "|", "%7C", " ", "%20").Replace(u)
}

// linkHost is what a person should read to know where a link goes: the
// URL's host (never its user info), or the address of a mailto: link.
func linkHost(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return "unreadable link"
	}
	if strings.EqualFold(u.Scheme, "mailto") {
		return "mail to " + u.Opaque
	}
	if u.Host == "" {
		return "no host"
	}
	return strings.ToLower(u.Host)
}

// measureLine is Slack's size of one Markdown line once converted and
// escaped (split.Measure): characters of mrkdwn.
func measureLine(line string, kind split.LineKind) int {
	switch kind {
	case split.FenceLine:
		return 3 // every fence becomes ```
	case split.Code:
		return utf8.RuneCountInString(escapeMrkdwn(strings.ReplaceAll(line, "```", "``\u200b`")))
	default:
		return utf8.RuneCountInString(convertLine(line))
	}
}

// measureCode sizes a line of text shown in a code block (codeBlock).
func measureCode(line string, _ split.LineKind) int {
	return utf8.RuneCountInString(escapeMrkdwn(strings.ReplaceAll(line, "```", "``\u200b`")))
}

// normaliseMarkdown is the Markdown an answer is split and converted
// from: Unix line ends, no private-use marker runes, tables as aligned
// code blocks.
func normaliseMarkdown(md string) string { return split.Tables(withoutMarkers(md)) }

// withoutMarkers is md with Unix line ends and without the private-use
// runes the converter uses as markers.
func withoutMarkers(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r == markBold || r == markItalic || r == markHole {
			return -1
		}
		return r
	}, md)
}
