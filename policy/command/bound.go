package command

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Exit-boundedness (SPEC P2): the read tool only runs commands that end by
// themselves. Checkers report follow modes, pagers, tty flags and bare REPLs
// through classifier.unbounded; this file builds the suggested rewrites,
// which drop the follow flag and bound the output.

// rewriteLines is how much output a rewrite asks for.
const rewriteLines = "200"

// edit describes a rewrite of one call: arguments to drop or replace, and
// text to insert after a given argument or append at the end.
type edit struct {
	// replace maps an argument index to its new text; "" drops it.
	replace map[int]string
	// insertAfter is the index of the argument after which insert goes;
	// -1 puts it right after the command word.
	insertAfter int
	insert      string
	appendText  string
}

// rebuild returns the top-level command with call k rewritten by e, or ""
// when the call is not in the top-level source (inside sh -c, ...).
func (c *classifier) rebuild(k *call, e edit) string {
	word := c.raw(k.word, k.ctx)
	if word == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(word)
	for _, a := range k.lead {
		b.WriteByte(' ')
		b.WriteString(c.raw(a, k.ctx))
	}
	if e.insertAfter < 0 && e.insert != "" {
		b.WriteByte(' ')
		b.WriteString(e.insert)
	}
	for i, a := range k.args {
		if a.w == nil {
			continue // a synthetic word, not in the source
		}
		text := c.raw(a, k.ctx)
		if r, ok := e.replace[i]; ok {
			text = r
		}
		if text != "" {
			b.WriteByte(' ')
			b.WriteString(text)
		}
		if i == e.insertAfter && e.insert != "" {
			b.WriteByte(' ')
			b.WriteString(e.insert)
		}
	}
	if e.appendText != "" {
		b.WriteByte(' ')
		b.WriteString(e.appendText)
	}
	return c.splice(k, b.String())
}

// splice returns the top-level command with the span of call k, from its
// command word to its last argument, replaced by body.
func (c *classifier) splice(k *call, body string) string {
	if body == "" || k.ctx.nest != 0 || k.word.w == nil {
		return ""
	}
	start, end := k.word.w.Pos().Offset(), k.word.w.End().Offset()
	if last := lastSourceWord(k.lead); last != nil {
		end = last.End().Offset()
	}
	if last := lastSourceWord(k.args); last != nil {
		end = last.End().Offset()
	}
	if end > uint(len(c.src)) || start > end {
		return ""
	}
	return c.src[:start] + body + c.src[end:]
}

// lastSourceWord returns the last word of args that is in the source.
func lastSourceWord(args []arg) *syntax.Word {
	for i := len(args) - 1; i >= 0; i-- {
		if args[i].w != nil {
			return args[i].w
		}
	}
	return nil
}

// follow collects where a command's follow (or other unbounded) flags sit,
// so a rewrite can drop them.
type follow struct {
	found    bool
	replace  map[int]string
	editable bool
}

func newFollow() follow { return follow{editable: true} }

// report marks the call unbounded when a follow flag was found. When the
// flags could be removed, it offers the call rebuilt without them, with
// extra's insert or appended text (a line count, --no-pager) added.
func (f *follow) report(c *classifier, k *call, extra edit) {
	if !f.found {
		return
	}
	rewrite := ""
	if f.editable {
		extra.replace = f.replace
		extra.insertAfter = -1
		rewrite = c.rebuild(k, extra)
	}
	c.unbounded(k.ctx, BoundUnboundedStream, rewrite)
}

// dropKeys marks the options with the given keys for removal: a word
// holding only such options is dropped, a cluster is rebuilt without them
// (-fn5 becomes -n5). Options before a verb, and quoted or escaped words,
// cannot be edited safely.
func (f *follow) dropKeys(c *classifier, k *call, keys ...string) {
	uses := k.p.uses
	for n := 0; n < len(uses); n++ {
		u := &uses[n]
		if !slices.Contains(keys, u.key) {
			continue
		}
		f.found = true
		if u.lead {
			f.editable = false
			continue
		}
		if f.replace == nil {
			f.replace = make(map[int]string, 2)
		}
		if !u.cluster {
			f.replace[u.i] = ""
			continue
		}
		a := k.args[u.i]
		if raw := c.raw(a, k.ctx); !a.static || raw != a.s {
			f.editable = false
			continue
		}
		var b strings.Builder
		b.WriteByte('-')
		for m := range uses {
			v := &uses[m]
			if v.i != u.i || v.lead || slices.Contains(keys, v.key) {
				continue
			}
			b.WriteString(v.as[1:])
			if v.hasVal && v.attached {
				b.WriteString(v.val.s)
			}
		}
		text := b.String()
		if text == "-" {
			text = ""
		}
		f.replace[u.i] = text
	}
}
