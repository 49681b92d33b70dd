// Package jsontree reads a tool result's JSON into an ordered tree and
// ranks its leaves by how much an investigation needs them.
//
// Tool results are JSON envelopes (SPEC T1). Two readers of the agent's
// history work on their data: compaction, which shortens an old result and
// must leave it valid JSON, and fact extraction, which turns a result into
// a few lines of knowledge. Both need the same tree (keys in their order,
// so a shortened result reads like the original with less in it) and the
// same judgement of which values matter; this package is that common
// ground, so neither has to import the other.
package jsontree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Kinds of a Node.
const (
	Object = 'o'
	Array  = 'a'
	String = 's'
	Scalar = 'r' // a number, a boolean or null, kept as its JSON text
)

// Node is one JSON value. It is plain data: compaction cuts and prunes it
// in place, then encodes it again.
type Node struct {
	Kind byte     // Object, Array, String or Scalar
	Keys []string // an object's keys, in their order; Kids holds the values
	Kids []*Node  // an object's values or an array's elements
	Str  string   // a String's value
	Raw  string   // a Scalar's JSON text
}

// Parse reads one JSON document; ok is false when s is not one.
func Parse(s string) (*Node, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // trailing data
	}
	return n, true
}

func readNode(dec *json.Decoder) (*Node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &Node{Kind: Object}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.Keys = append(n.Keys, k)
				n.Kids = append(n.Kids, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &Node{Kind: Array}
			for dec.More() {
				v, err := readNode(dec)
				if err != nil {
					return nil, err
				}
				n.Kids = append(n.Kids, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &Node{Kind: String, Str: t}, nil
	case json.Number:
		return &Node{Kind: Scalar, Raw: t.String()}, nil
	case bool:
		return &Node{Kind: Scalar, Raw: fmt.Sprint(t)}, nil
	case nil:
		return &Node{Kind: Scalar, Raw: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected token %T", tok)
}

// FromValue re-reads data decoded by encoding/json as a tree: map keys in
// sorted order, so the same data gives the same tree.
func FromValue(v any) *Node {
	switch x := v.(type) {
	case map[string]any:
		n := &Node{Kind: Object}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n.Keys = append(n.Keys, k)
			n.Kids = append(n.Kids, FromValue(x[k]))
		}
		return n
	case []any:
		n := &Node{Kind: Array}
		for _, e := range x {
			n.Kids = append(n.Kids, FromValue(e))
		}
		return n
	case string:
		return &Node{Kind: String, Str: x}
	case nil:
		return &Node{Kind: Scalar, Raw: "null"}
	case float64:
		return &Node{Kind: Scalar, Raw: strconv.FormatFloat(x, 'g', 6, 64)}
	}
	return &Node{Kind: Scalar, Raw: fmt.Sprint(v)}
}

// Encode writes the tree as compact JSON.
func (n *Node) Encode() string {
	var b bytes.Buffer
	n.write(&b)
	return b.String()
}

func writeString(b *bytes.Buffer, s string) {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a Go string always encodes
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
}

func (n *Node) write(b *bytes.Buffer) {
	switch n.Kind {
	case Object:
		b.WriteByte('{')
		for i, k := range n.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			n.Kids[i].write(b)
		}
		b.WriteByte('}')
	case Array:
		b.WriteByte('[')
		for i, k := range n.Kids {
			if i > 0 {
				b.WriteByte(',')
			}
			k.write(b)
		}
		b.WriteByte(']')
	case String:
		writeString(b, n.Str)
	default:
		b.WriteString(n.Raw)
	}
}

// Strings appends the tree's string values to out, for cutting.
func (n *Node) Strings(out []*Node) []*Node {
	switch n.Kind {
	case String:
		out = append(out, n)
	case Object, Array:
		for _, k := range n.Kids {
			out = k.Strings(out)
		}
	}
	return out
}

// LongestArray returns the array with the most elements, or nil.
func (n *Node) LongestArray() *Node {
	var best *Node
	var walk func(*Node)
	walk = func(x *Node) {
		if x.Kind == Array && (best == nil || len(x.Kids) > len(best.Kids)) {
			best = x
		}
		for _, k := range x.Kids {
			walk(k)
		}
	}
	walk(n)
	return best
}
