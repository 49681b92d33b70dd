package bot

import "strings"

// ResourceMentions finds "@name" words in plain text: an @ at the start of a
// word followed by letters, digits, '.', '_' or '-'. Trailing punctuation is
// not part of the name. Platforms with their own user-mention syntax filter
// those out before or after calling this.
func ResourceMentions(text string) []Mention {
	var out []Mention
	seen := map[string]bool{}
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && !isMentionBoundary(text[i-1])) {
			continue
		}
		j := i + 1
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		name := strings.TrimRight(text[i+1:j], ".-_")
		if name != "" && !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			out = append(out, Mention{Name: name})
		}
		i = j - 1
	}
	return out
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

func isMentionBoundary(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '(' || c == '[' || c == ',' || c == ';' || c == '"' || c == '\''
}
