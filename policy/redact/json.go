package redact

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// A small JSON parser that keeps where each value is in the text, so that
// redaction can replace a value in place: the document keeps its layout,
// and what is not a secret keeps its exact bytes. It accepts exactly the
// JSON that encoding/json accepts (FuzzParseJSON checks that).

// jsonNode is one value: its kind ('{', '[', '"', '0' for a number, 'l'
// for true, false or null), its span in the text and, for a member of an
// object, its decoded key and the key's span (quotes included).
type jsonNode struct {
	kind             byte
	start, end       int
	key              string
	keyStart, keyEnd int
	// kids are an object's members or an array's elements, in order.
	kids []*jsonNode
}

// maxJSONDepth bounds nesting; deeper documents are read as text.
const maxJSONDepth = 256

type jsonParser struct {
	s     string
	i     int
	depth int
	// arena hands out nodes in blocks, one allocation per block.
	arena []jsonNode
	// stack holds the children of the containers being read; each
	// container takes a copy of exactly its own.
	stack []*jsonNode
}

// node returns a new node.
func (p *jsonParser) node(kind byte, start int) *jsonNode {
	if len(p.arena) == cap(p.arena) {
		p.arena = make([]jsonNode, 0, 128)
	}
	p.arena = append(p.arena, jsonNode{kind: kind, start: start})
	return &p.arena[len(p.arena)-1]
}

// parseJSON parses one JSON document (blanks around it allowed).
func parseJSON(s string) (*jsonNode, bool) {
	p := jsonParser{s: s}
	p.blanks()
	n, ok := p.value()
	if !ok {
		return nil, false
	}
	p.blanks()
	return n, p.i == len(s)
}

func (p *jsonParser) blanks() {
	for p.i < len(p.s) && isBlank(p.s[p.i]) {
		p.i++
	}
}

func (p *jsonParser) value() (*jsonNode, bool) {
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		n := p.node('"', p.i)
		if !p.str() {
			return nil, false
		}
		n.end = p.i
		return n, true
	case c == '-' || '0' <= c && c <= '9':
		n := p.node('0', p.i)
		if !p.number() {
			return nil, false
		}
		n.end = p.i
		return n, true
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(p.s[p.i:], lit) {
				n := p.node('l', p.i)
				p.i += len(lit)
				n.end = p.i
				return n, true
			}
		}
	}
	return nil, false
}

// object reads {"key": value, ...}; each member is its value's node, with
// the key set.
func (p *jsonParser) object() (*jsonNode, bool) {
	return p.container('{', '}', func() (*jsonNode, bool) {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		ks := p.i
		if !p.str() {
			return nil, false
		}
		ke := p.i
		p.blanks()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.blanks()
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		v.key, v.keyStart, v.keyEnd = jsonUnquote(p.s[ks:ke]), ks, ke
		return v, true
	})
}

// array reads [value, ...].
func (p *jsonParser) array() (*jsonNode, bool) { return p.container('[', ']', p.value) }

// container reads an object or an array: open, items separated by commas
// (each read by item), close.
func (p *jsonParser) container(open, closer byte, item func() (*jsonNode, bool)) (*jsonNode, bool) {
	if p.depth++; p.depth > maxJSONDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	n := p.node(open, p.i)
	p.i++
	p.blanks()
	if p.i < len(p.s) && p.s[p.i] == closer {
		p.i++
		n.end = p.i
		return n, true
	}
	mark := len(p.stack)
	for {
		p.blanks()
		v, ok := item()
		if !ok {
			return nil, false
		}
		p.stack = append(p.stack, v)
		p.blanks()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case closer:
			p.i++
			n.end = p.i
			n.kids = slices.Clone(p.stack[mark:])
			p.stack = p.stack[:mark]
			return n, true
		default:
			return nil, false
		}
	}
}

// str reads a string literal, checking its escapes.
func (p *jsonParser) str() bool {
	p.i++ // the opening quote
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return false
			}
			switch p.s[p.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i += 2
			case 'u':
				if p.i+6 > len(p.s) {
					return false
				}
				for _, h := range []byte(p.s[p.i+2 : p.i+6]) {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return false
					}
				}
				p.i += 6
			default:
				return false
			}
		case c < utf8.RuneSelf:
			p.i++
		default:
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			p.i += size
		}
	}
	return false
}

// number reads a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *jsonParser) number() bool {
	s := p.s
	digits := func() bool {
		st := p.i
		for p.i < len(s) && '0' <= s[p.i] && s[p.i] <= '9' {
			p.i++
		}
		return p.i > st
	}
	if s[p.i] == '-' {
		p.i++
	}
	if p.i < len(s) && s[p.i] == '0' {
		p.i++
	} else if !digits() {
		return false
	}
	if p.i < len(s) && s[p.i] == '.' {
		p.i++
		if !digits() {
			return false
		}
	}
	if p.i < len(s) && (s[p.i] == 'e' || s[p.i] == 'E') {
		p.i++
		if p.i < len(s) && (s[p.i] == '+' || s[p.i] == '-') {
			p.i++
		}
		if !digits() {
			return false
		}
	}
	return true
}

// jsonUnquote decodes a string literal the parser accepted.
func jsonUnquote(raw string) string {
	if !strings.ContainsRune(raw, '\\') {
		return raw[1 : len(raw)-1]
	}
	var v string
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return raw[1 : len(raw)-1]
	}
	return v
}

// jsonQuote encodes v as a JSON string literal, escaping only what JSON
// requires (and U+2028/U+2029, which break JavaScript), so text reads as
// it was.
func jsonQuote(v string) string {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for _, r := range v {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == '\u2028' || r == '\u2029':
			const hex = "0123456789abcdef"
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
