package split

import (
	"regexp"
	"strings"
)

// Tables puts every GitHub-style Markdown table outside code blocks into a
// code block of its own, so chat clients that do not draw tables (Slack's
// mrkdwn, Element's sanitiser keeps cells but not their alignment) show
// it as aligned text. Cells are padded to their column's width.
func Tables(md string) string {
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	var cur *Fence
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if cur != nil {
			if cur.closes(line) {
				cur = nil
			}
			out = append(out, line)
			continue
		}
		if f, ok := openingFence(line); ok {
			cur = &f
			out = append(out, line)
			continue
		}
		if i+1 < len(lines) && tableRow(line) && reTableRule.MatchString(lines[i+1]) {
			j := i + 2
			for j < len(lines) && tableRow(lines[j]) {
				j++
			}
			out = append(out, "```")
			out = append(out, alignTable(lines[i:j])...)
			out = append(out, "```")
			i = j - 1
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

var reTableRule = regexp.MustCompile(`^\s{0,3}\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)

func tableRow(line string) bool {
	t := strings.TrimSpace(line)
	return strings.Contains(t, "|") && t != "" && !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~")
}

// cells splits a table row on unescaped pipes.
func cells(row string) []string {
	t := strings.TrimSpace(row)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var out []string
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			b.WriteByte('|')
			i++
		case t[i] == '|':
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(t[i])
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

// alignTable pads a table's cells to their column widths; the rule row
// becomes dashes.
func alignTable(rows []string) []string {
	grid := make([][]string, len(rows))
	var widths []int
	for r, row := range rows {
		grid[r] = cells(row)
		for c, cell := range grid[r] {
			if r == 1 {
				continue
			}
			for len(widths) <= c {
				widths = append(widths, 0)
			}
			widths[c] = max(widths[c], len([]rune(cell)))
		}
	}
	out := make([]string, len(rows))
	for r := range grid {
		parts := make([]string, len(widths))
		for c := range widths {
			cell := ""
			if c < len(grid[r]) {
				cell = grid[r][c]
			}
			if r == 1 {
				cell = strings.Repeat("-", widths[c])
			}
			parts[c] = cell + strings.Repeat(" ", widths[c]-len([]rune(cell)))
		}
		out[r] = strings.TrimRight(strings.Join(parts, " | "), " ")
	}
	return out
}

// reImage is a Markdown image.
var reImage = regexp.MustCompile(`!\[([^\]\n]*)\]\(`)

// ImagesAsLinks turns Markdown images outside code into links, so no chat
// client loads a remote picture because the model wrote one: the reader
// sees "image: alt" and decides whether to open it.
func ImagesAsLinks(md string) string {
	lines := strings.Split(md, "\n")
	var cur *Fence
	for i, line := range lines {
		if cur != nil {
			if cur.closes(line) {
				cur = nil
			}
			continue
		}
		if f, ok := openingFence(line); ok {
			cur = &f
			continue
		}
		if strings.Contains(line, "![") {
			lines[i] = reImage.ReplaceAllStringFunc(line, func(m string) string {
				alt := reImage.FindStringSubmatch(m)[1]
				if alt == "" {
					alt = "image"
				} else {
					alt = "image: " + alt
				}
				return "[" + alt + "]("
			})
		}
	}
	return strings.Join(lines, "\n")
}

// FirstLines is the first n lines of s.
func FirstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
