package matrix

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

// identity is how the bot is named in a room.
type identity struct {
	ID          id.UserID
	DisplayName string
}

func (me identity) isName(s string) bool {
	for _, n := range me.names() {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

// names are the words people use for the bot: its display name and its
// localpart.
func (me identity) names() []string {
	var out []string
	if me.DisplayName != "" {
		out = append(out, me.DisplayName)
	}
	if lp := me.ID.Localpart(); lp != "" && !strings.EqualFold(lp, me.DisplayName) {
		out = append(out, lp)
	}
	return out
}

// addressesBot reports whether a message speaks to the bot: an intentional
// mention (m.mentions.user_ids), a pill linking to its user ID, its user ID
// in the text, "@<display name>" anywhere or "<display name>:" at the start.
// Server-side highlight counts are not used.
func addressesBot(me identity, c *event.MessageEventContent) bool {
	if c == nil {
		return false
	}
	if c.Mentions != nil {
		for _, u := range c.Mentions.UserIDs {
			if u == me.ID {
				return true
			}
		}
	}
	if strings.Contains(c.Body, string(me.ID)) {
		return true
	}
	if c.Format == event.FormatHTML && pillsUser(c.FormattedBody, me.ID) {
		return true
	}
	for _, n := range me.names() {
		if mentionsName(c.Body, n) {
			return true
		}
	}
	return false
}

// pillsUser reports whether HTML links to the user with a matrix.to pill
// (the link may percent-encode the ID).
func pillsUser(html string, user id.UserID) bool {
	const prefix = "matrix.to/#/"
	for rest := html; ; {
		i := strings.Index(rest, prefix)
		if i < 0 {
			return false
		}
		rest = rest[i+len(prefix):]
		end := strings.IndexAny(rest, "\"'<> ?")
		if end < 0 {
			end = len(rest)
		}
		target, err := url.PathUnescape(rest[:end])
		if err == nil && target == string(user) {
			return true
		}
	}
}

// mentionsName finds "@name" as a word anywhere or "name:"/"name," at the
// start, case-insensitively.
func mentionsName(text, name string) bool {
	if name == "" {
		return false
	}
	if _, ok := leadingName(text, name); ok {
		return true
	}
	return len(findAtName(text, name)) > 0
}

// leadingName matches "name:" or "name," at the start of text and returns
// the rest.
func leadingName(text, name string) (string, bool) {
	t := strings.TrimLeft(text, " \t")
	if len(t) <= len(name) || !strings.EqualFold(t[:len(name)], name) {
		return "", false
	}
	switch t[len(name)] {
	case ':', ',':
		return t[len(name)+1:], true
	}
	return "", false
}

// findAtName returns the byte ranges of "@name" occurrences that stand as a
// word (not part of an e-mail address, a user ID or a longer name).
func findAtName(text, name string) [][2]int {
	var out [][2]int
	lower := strings.ToLower(text)
	needle := "@" + strings.ToLower(name)
	for from := 0; from < len(lower); {
		i := strings.Index(lower[from:], needle)
		if i < 0 {
			break
		}
		start, end := from+i, from+i+len(needle)
		from = end
		if start > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:start])
			if isNameRune(r) {
				continue
			}
		}
		if end < len(text) {
			r, _ := utf8.DecodeRuneInString(text[end:])
			if isNameRune(r) || r == ':' && end+1 < len(text) && text[end+1] != ' ' {
				continue
			}
		}
		out = append(out, [2]int{start, end})
	}
	return out
}

// stripBot removes the bot's mentions from text: its user ID, "@name"
// words and a leading "name:" or "name,".
func stripBot(me identity, text string) string {
	if me.ID != "" {
		text = strings.ReplaceAll(text, string(me.ID), " ")
	}
	for _, n := range me.names() {
		if rest, ok := leadingName(text, n); ok {
			text = rest
		}
		ranges := findAtName(text, n)
		for i := len(ranges) - 1; i >= 0; i-- {
			text = text[:ranges[i][0]] + " " + text[ranges[i][1]:]
		}
	}
	// Tidy what the removal left: doubled spaces and leading punctuation
	// such as the ":" of "@vigil: check @web".
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	text = strings.TrimSpace(strings.Join(lines, "\n"))
	text = strings.TrimLeft(text, ":, ")
	return strings.TrimSpace(text)
}

// resourceMentions extracts infrastructure mentions: "@name" words that are
// not Matrix user IDs (@user:server), not e-mail addresses and not the bot.
// Trailing sentence punctuation is dropped; duplicates are removed in order.
func resourceMentions(me identity, text string) []bot.Mention {
	var out []bot.Mention
	seen := map[string]bool{}
	for i := 0; i < len(text); i++ {
		if text[i] != '@' {
			continue
		}
		if i > 0 {
			r, _ := utf8.DecodeLastRuneInString(text[:i])
			if isNameRune(r) || r == '@' || r == '/' {
				continue // e-mail address, "@@", URL path
			}
		}
		j := i + 1
		for j < len(text) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if !isNameRune(r) {
				break
			}
			j += size
		}
		name := strings.TrimRight(text[i+1:j], ".-_")
		i = j - 1
		if name == "" {
			continue
		}
		if j < len(text) && text[j] == ':' && j+1 < len(text) && isServerStart(text[j+1]) {
			i = skipUserID(text, j)
			continue // a Matrix user ID, not a resource
		}
		if me.isName(name) {
			continue // the bot itself
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, bot.Mention{Name: name})
		}
	}
	return out
}

// isNameRune is what a resource name is made of.
func isNameRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.'
}

func isServerStart(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '['
}

// skipUserID returns the index of the last byte of the server part that
// starts after text[colon].
func skipUserID(text string, colon int) int {
	k := colon + 1
	for k < len(text) {
		c := text[k]
		if c == ' ' || c == '\t' || c == '\n' || c == ',' || c == ')' || c == '>' {
			break
		}
		k++
	}
	return k - 1
}
