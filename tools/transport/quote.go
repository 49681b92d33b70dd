package transport

import (
	"strings"
)

// shellQuote returns s as one POSIX shell word that expands to exactly s.
// Strings made only of characters no shell treats specially are returned as
// they are, for readable commands; everything else is single-quoted, with
// embedded single quotes written as '\”. Inside single quotes a POSIX shell
// interprets nothing, so no value can escape its word.
//
// A NUL byte cannot be part of a command-line argument; callers reject such
// values before building a command (see checkText), and shellQuote panics if
// one slips through, because quoting it would silently change the value.
func ShellQuote(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		panic("tools: shellQuote: string contains NUL")
	}
	if s == "" {
		return "''"
	}
	if isShellSafe(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isShellSafe reports whether s needs no quoting: it holds only letters,
// digits and @%+=:,./_- (no globbing, expansion, whitespace or operators).
// '=' only matters in a command's first word, which quoted values never are.
// Quoting never protects a value that starts with '-' from being read as an
// option; callers that take paths require them to be absolute.
func isShellSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("@%+=:,./_-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// shellJoin quotes each word and joins them with spaces.
func ShellJoin(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}
