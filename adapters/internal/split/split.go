// Package split is the one rule both chat renderers use to deliver long
// Markdown: cut it on line boundaries into pieces that each fit the
// platform's limit as the platform measures it after escaping, close every
// code fence a cut leaves open and reopen it in the next piece, and never
// cut an entity or a link in half.
//
// The package knows nothing of Slack or Matrix: each renderer passes its
// own Measure (Slack: characters of converted, escaped mrkdwn; Matrix:
// JSON-encoded bytes of the body plus the HTML) and its own limit.
package split

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// LineKind says how a renderer will show a line, so Measure can size it
// the way the renderer escapes it.
type LineKind int

const (
	// Text is a line of Markdown outside any code block.
	Text LineKind = iota
	// Code is a line inside a fenced code block.
	Code
	// FenceLine is a fence line: an opening ("```go") or a closing
	// ("```").
	FenceLine
)

// Measure is the size of one line after the platform's conversion and
// escaping, without its line break. Every character measures at least
// one.
type Measure func(line string, kind LineKind) int

// Options parameterise Split for one platform.
type Options struct {
	// Limit is the most one piece may measure: the sum of its lines'
	// measures plus one per line break, fences Split adds included.
	Limit int
	// Measure sizes a line; nil counts runes.
	Measure Measure
}

// Piece is one part of the text. Body is a verbatim slice of the input;
// Open and Close are fence lines Split added so that the piece's code
// blocks are balanced on their own ("" when none was needed).
type Piece struct {
	// Sep is what separated this piece from the previous one in the input:
	// "\n" after a cut between lines, "" after a cut inside a line (and for
	// the first piece).
	Sep   string
	Open  string
	Body  string
	Close string
}

// Text is what a renderer shows for the piece: the body with the fences
// Split added.
func (p Piece) Text() string {
	s := p.Body
	if p.Open != "" {
		s = p.Open + "\n" + s
	}
	if p.Close != "" {
		s += "\n" + p.Close
	}
	return s
}

// Join puts pieces back together: the inverse of Split.
func Join(ps []Piece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Sep)
		b.WriteString(p.Body)
	}
	return b.String()
}

// Fence is an open fenced code block.
type Fence struct {
	open  string // the opening line as written
	char  byte   // '`' or '~'
	width int    // length of the marker run
}

// closing is the line that closes f.
func (f Fence) closing() string { return strings.Repeat(string(f.char), f.width) }

// OpeningFence reports whether line opens a fenced code block
// (CommonMark: up to three spaces, then three or more backticks or
// tildes; a backtick fence's info string has no backtick).
func OpeningFence(line string) (Fence, bool) { return openingFence(line) }

// Closes reports whether line closes the code block f opened.
func (f Fence) Closes(line string) bool { return f.closes(line) }

func openingFence(line string) (Fence, bool) {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return Fence{}, false
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 || (s[0] == '`' && strings.ContainsRune(s[n:], '`')) {
		return Fence{}, false
	}
	return Fence{open: line, char: s[0], width: n}, true
}

// closes reports whether line closes f: the same character, at least as
// many, nothing else but spaces.
func (f Fence) closes(line string) bool {
	s := strings.TrimLeft(line, " ")
	if len(line)-len(s) > 3 {
		return false
	}
	s = strings.TrimRight(s, " \t")
	if len(s) < f.width {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != f.char {
			return false
		}
	}
	return true
}

// Split cuts text into pieces that each measure at most o.Limit. Cuts fall
// between lines where they can; a line longer than a piece is cut at a
// space, else between characters, never inside a link, a URL or an HTML
// entity (unless one alone is longer than a piece). A piece that ends
// inside a code block gets the block's closing fence and the next piece
// reopens it with the same opening line. Join(Split(text)) == text.
func Split(text string, o Options) []Piece {
	if o.Measure == nil {
		o.Measure = func(s string, _ LineKind) int { return utf8.RuneCountInString(s) }
	}
	s := &splitter{o: o}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		sep := "\n"
		if i == 0 {
			sep = ""
		}
		s.line(sep, line)
	}
	s.flush(true)
	if len(s.out) == 0 {
		return []Piece{{}}
	}
	return s.out
}

type splitter struct {
	o   Options
	out []Piece

	// The piece being built.
	sep   string // separator before it
	open  string // reopened fence line, if any
	body  strings.Builder
	empty bool // nothing added to the body yet
	size  int
	begun bool

	cur *Fence // the code block the text is in, if any
}

func (s *splitter) measure(line string, kind LineKind) int { return s.o.Measure(line, kind) }

// closeCost is what closing the current fence at the end of the piece
// would add.
func (s *splitter) closeCost() int {
	if s.cur == nil {
		return 0
	}
	return 1 + s.measure(s.cur.closing(), FenceLine)
}

// start begins a new piece, reopening the current fence.
func (s *splitter) start(sep string) {
	s.begun, s.empty, s.sep, s.open, s.size = true, true, sep, "", 0
	s.body.Reset()
	if s.cur != nil {
		s.open = s.cur.open
		s.size = s.measure(s.open, FenceLine) + 1
	}
}

// flush ends the current piece, closing its fence unless final.
func (s *splitter) flush(final bool) {
	if !s.begun {
		return
	}
	p := Piece{Sep: s.sep, Open: s.open, Body: s.body.String()}
	if s.cur != nil {
		p.Close = s.cur.closing()
	}
	if final && s.empty && p.Sep == "" && len(s.out) > 0 {
		return
	}
	s.out = append(s.out, p)
	s.begun = false
}

// add appends a part of a line to the current piece; joined says it
// continues the piece's last line rather than starting a new one.
func (s *splitter) add(part string, joined bool, cost int) {
	if !s.empty && !joined {
		s.body.WriteByte('\n')
		s.size++
	}
	s.body.WriteString(part)
	s.size += cost
	s.empty = false
}

// line takes one input line, preceded in the input by sep.
func (s *splitter) line(sep, line string) {
	kind, next := Text, s.cur
	switch {
	case s.cur != nil && s.cur.closes(line):
		kind, next = FenceLine, nil
	case s.cur != nil:
		kind = Code
	default:
		if f, ok := openingFence(line); ok {
			kind, next = FenceLine, &f
		}
	}
	if !s.begun {
		s.start(sep)
		sep = ""
	}
	cost := s.measure(line, kind)
	nl := 0
	if !s.empty {
		nl = 1
	}
	// The fence after this line decides what closing costs.
	reserve := 0
	if next != nil {
		reserve = 1 + s.measure(next.closing(), FenceLine)
	}
	if s.size+nl+cost+reserve <= s.o.Limit {
		s.add(line, false, cost)
		s.cur = next
		return
	}
	if !s.empty {
		s.flush(false)
		s.start("\n")
		if s.size+cost+reserve <= s.o.Limit {
			s.add(line, false, cost)
			s.cur = next
			return
		}
	}
	// The line alone does not fit a piece: cut it. A fence line never gets
	// here in practice (it is short); if it does it is cut like text.
	s.cutLine(line, kind)
	s.cur = next
}

// cutLine adds a line too long for one piece, across as many pieces as
// needed. The current piece is empty (apart from a reopened fence).
func (s *splitter) cutLine(line string, kind LineKind) {
	joined := false
	for {
		room := s.o.Limit - s.size - s.closeCost()
		if !s.empty {
			room-- // the line break before it
		}
		if c := s.measure(line, kind); c <= room {
			s.add(line, joined, c)
			return
		}
		cut := s.cutPoint(line, kind, room)
		part := line[:cut]
		s.add(part, joined, s.measure(part, kind))
		line = line[cut:]
		s.flush(false)
		s.start("")
		joined = true
	}
}

// cutPoint is where to cut line so that its first part measures at most
// room: the last space that fits, else the last character boundary that
// fits, outside protected spans (links, URLs, entities). It always
// advances by at least one character.
func (s *splitter) cutPoint(line string, kind LineKind, room int) int {
	// Every character measures at least one, so the cut falls within the
	// first room characters: look no further than that (and a margin for
	// a protected span that starts before the cut and ends after it).
	if w := room*utf8.UTFMax + 4096; w < len(line) {
		for w > 0 && !utf8.RuneStart(line[w]) {
			w--
		}
		line = line[:w]
	}
	spans := protected(line)
	inside := func(i int) bool {
		for _, sp := range spans {
			if sp[0] < i && i < sp[1] {
				return true
			}
		}
		return false
	}
	// The longest prefix that fits, by binary search over the character
	// boundaries.
	bounds := make([]int, 0, len(line)+1)
	for i := range line {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(line))
	lo, hi := 0, len(bounds)-1 // bounds[lo] always fits (it is 0 at first)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s.measure(line[:bounds[mid]], kind) <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	lo = bounds[lo]
	best := lo
	// Prefer a cut just after a space, outside protected spans.
	for i := best; i > 0; i-- {
		if (line[i-1] == ' ' || line[i-1] == '\t') && !inside(i) {
			if i >= best/2 { // not absurdly early
				return i
			}
			break
		}
	}
	for i := best; i > 0; i-- {
		if (i == len(line) || utf8.RuneStart(line[i])) && !inside(i) {
			return i
		}
	}
	// A protected span alone is longer than a piece, or nothing fits: cut
	// at the longest fitting character boundary, at least one character.
	if best == 0 {
		_, n := utf8.DecodeRuneInString(line)
		return n
	}
	return best
}

// Spans that must not be cut: Markdown links and images with their
// targets, autolinks, bare URLs, Slack-style <url|text> links and HTML
// entities.
var reProtected = regexp.MustCompile(`!?\[[^\]\n]*\]\([^)\n]*\)|<[a-zA-Z][a-zA-Z0-9+.-]*:[^<>\s]*>|<[^<>\n|]+\|[^<>\n]*>|[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>()\[\]]+|&#?[a-zA-Z0-9]{1,32};`)

func protected(line string) [][]int { return reProtected.FindAllStringIndex(line, -1) }

// Balanced reports whether every code fence opened in text is closed.
func Balanced(text string) bool {
	var cur *Fence
	for _, line := range strings.Split(text, "\n") {
		switch {
		case cur != nil && cur.closes(line):
			cur = nil
		case cur == nil:
			if f, ok := openingFence(line); ok {
				cur = &f
			}
		}
	}
	return cur == nil
}
