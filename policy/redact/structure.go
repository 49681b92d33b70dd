package redact

import (
	"fmt"
	"strings"
)

// Structure-aware redaction (SPEC R3). A line rule sees "value: hunter2"
// and cannot know that the line before it was "- name: DB_PASSWORD", that
// the mapping it sits in is a Kubernetes Secret's data, or that the array
// it belongs to is the value of "api_keys". The structural pass reads the
// text as the document it is and masks by key path:
//
//   - under a key that names a secret ("password", "api_keys",
//     "client_secret"), every value however deeply nested: scalars, list
//     items, block scalars, flow collections. Keys that only describe the
//     secret (name, path, type, ...: metaKeys) keep a value that does not
//     look like a credential, so a pod's "secret: {secretName: tls}" volume
//     stays readable;
//   - in a Kubernetes Secret (kind: Secret), every value under data and
//     stringData;
//   - in a mapping whose name, key or label names a secret (an env entry
//     "name: DB_PASSWORD", a label_values result for the label
//     "password", an SSM parameter "/prod/db/password"), its value or
//     values; and the Value of an SSM SecureString.
//
// JSON documents (a whole text, or one per line) are parsed (json.go) and
// their strings decoded, so JSON inside a JSON string is walked too.
// YAML-like text is read by indentation (outline below), only when a cue
// rule found one of the shapes above; everything else is left to the line
// rules.

// nameKeys name the entry of a name/value pair, normalised (lower case,
// no '_' or '-').
var nameKeys = wordSet("name", "key", "label", "labelname", "variable", "var", "varname", "parameterkey",
	"parametername", "param", "paramname", "field", "fieldname", "setting", "property", "option", "env", "envvar",
	"attribute", "secretname")

// valueKeys hold the value of a name/value pair, normalised.
var valueKeys = wordSet("value", "values", "val", "parametervalue", "paramvalue", "secretvalue", "secretstring",
	"stringvalue", "plaintext", "content", "data", "default", "defaultvalue", "text")

// metaKeys (their last word, lower case) describe a secret without being
// it: inside a masked value their values are left to the line rules.
var metaKeys = wordSet("name", "names", "ref", "id", "kind", "type", "path", "file", "mode", "defaultmode",
	"optional", "namespace", "items", "key", "version", "created", "updated", "expires", "expiry", "expiration",
	"ttl", "length", "algorithm", "alg", "format", "issuer", "scope", "scopes", "description", "url", "uri",
	"hint", "labels", "annotations", "uid", "provider", "usage", "role", "enabled", "count", "secretname",
	"mount", "mountpath", "readonly", "resourceversion", "generation", "creationtimestamp", "immutable")

// normBytes appends key lower-cased without '_' and '-' to buf; ok is false
// for a key longer than any table's (32 bytes).
func normBytes(buf []byte, key string) ([]byte, bool) {
	if len(key) > 32 {
		return buf, false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c != '_' && c != '-' {
			buf = append(buf, lowerTable[c])
		}
	}
	return buf, true
}

// normIn reports whether key, normalised (normBytes), is in set.
func normIn(key string, set map[string]bool) bool {
	var buf [32]byte
	b, ok := normBytes(buf[:0], key)
	return ok && set[string(b)]
}

// normIs reports whether key, normalised (normBytes), is want.
func normIs(key, want string) bool {
	var buf [32]byte
	b, ok := normBytes(buf[:0], key)
	return ok && string(b) == want
}

// containerStrong reports whether every value under key is a secret: the
// key names one ("password", "client_secret"), or names several
// ("api_keys", "tokens", "passwords").
func containerStrong(key string) bool {
	if classifyKey(key) == keyStrong {
		return true
	}
	var buf [8]string
	ws := keyWordsOf(buf[:0], key)
	if len(ws) == 0 {
		return false
	}
	last := ws[len(ws)-1]
	if len(last) < 4 || !strings.HasSuffix(last, "s") {
		return false
	}
	ws[len(ws)-1] = strings.TrimSuffix(last, "s")
	return classifyKey(strings.Join(ws, "_")) == keyStrong
}

// pluralKey reports a key that names several secrets ("tokens"): numbers
// under it are counts more often than secrets.
func pluralKey(key string) bool { return classifyKey(key) != keyStrong }

// metaKey reports a key that describes a secret rather than holding it.
func metaKey(key string) bool {
	var buf [8]string
	ws := keyWordsOf(buf[:0], key)
	return len(ws) > 0 && (metaKeys[ws[len(ws)-1]] || normIn(key, metaKeys))
}

// secretNameKind returns the kind of secret a name names ("DB_PASSWORD",
// "/prod/db/password", "password"), or "".
func secretNameKind(name string) string {
	name = strings.Trim(strings.TrimSpace(name), `"'`)
	if k := strings.LastIndexAny(name, "/"); k >= 0 {
		name = name[k+1:]
	}
	if name == "" || len(name) > 128 || classifyKey(name) != keyStrong {
		return ""
	}
	return keyKind(name)
}

// jsonTail returns where a JSON document that ends line starts (a JSON
// log line, or one after a time stamp: "2024-03-01T12:00:00Z {…}"), or -1.
func jsonTail(line string) int {
	t := strings.TrimRight(line, " \t\r\n")
	switch {
	case strings.HasSuffix(t, "}"):
		return strings.IndexByte(t, '{')
	case strings.HasSuffix(t, "]") && looksJSONDoc(t):
		return len(t) - len(strings.TrimLeft(t, " \t"))
	}
	return -1
}

// looksJSONDoc reports whether s, blanks aside, starts and ends like a
// JSON object or array.
func looksJSONDoc(s string) bool {
	i, j := 0, len(s)
	for i < j && isBlank(s[i]) {
		i++
	}
	for j > i && isBlank(s[j-1]) {
		j--
	}
	return j-i >= 2 && (s[i] == '{' && s[j-1] == '}' || s[i] == '[' && s[j-1] == ']')
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// edit replaces s[start:end].
type edit struct {
	start, end int
	repl       string
}

// applyEdits applies edits, which are in order and do not overlap.
func applyEdits(s string, edits []edit) string {
	if len(edits) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 32*len(edits))
	last := 0
	for _, e := range edits {
		if e.start < last {
			continue
		}
		b.WriteString(s[last:e.start])
		b.WriteString(e.repl)
		last = e.end
	}
	b.WriteString(s[last:])
	return b.String()
}

func marker(kind string) string { return fmt.Sprintf(redactedFmt, kind) }

// ---- JSON ----

// redactJSONDoc redacts a JSON document by key path. ok is false when s is
// not a JSON document; the result is valid JSON whenever s was.
func (r *Redactor) redactJSONDoc(s string, depth int) (string, bool) {
	root, ok := parseJSON(s)
	if !ok {
		return s, false
	}
	w := jsonWalker{r: r, s: s, depth: depth}
	w.walk(root, jsonCtx{})
	return applyEdits(s, w.edits), true
}

type jsonCtx struct {
	key    string // the nearest object key above the value
	mask   string // non-empty: mask every value, as this kind
	plural bool   // the mask comes from a plural key: numbers are kept
	// whole: the mask covers meta keys too (a Secret's data, a name/value
	// pair's value: every value there is the secret).
	whole bool
}

type jsonWalker struct {
	r     *Redactor
	s     string
	depth int
	edits []edit
}

func (w *jsonWalker) walk(n *jsonNode, c jsonCtx) {
	switch n.kind {
	case '{':
		secretDoc, nvKind := false, ""
		for _, m := range n.kids {
			if m.kind != '"' {
				continue
			}
			switch {
			case normIs(m.key, "kind"):
				secretDoc = secretDoc || w.str(m) == "Secret"
			case normIs(m.key, "type"):
				if strings.EqualFold(w.str(m), "SecureString") {
					nvKind = "secret"
				}
			case nvKind == "" && normIn(m.key, nameKeys):
				nvKind = secretNameKind(w.str(m))
			}
		}
		for _, m := range n.kids {
			w.key(m)
			cc := jsonCtx{key: m.key, mask: c.mask, plural: c.plural, whole: c.whole}
			if c.mask == "" {
				switch {
				case secretDoc && (normIs(m.key, "data") || normIs(m.key, "stringdata")):
					cc.mask, cc.whole = "k8s-secret", true
				case nvKind != "" && normIn(m.key, valueKeys):
					cc.mask, cc.whole = nvKind, true
				case (m.kind == '{' || m.kind == '[') && w.r.Suspect(m.key) && containerStrong(m.key):
					cc.mask, cc.plural = keyKind(m.key), pluralKey(m.key)
				}
			}
			w.walkValue(m, cc)
		}
	case '[':
		for _, e := range n.kids {
			w.walkValue(e, c)
		}
	default:
		w.walkValue(n, c)
	}
}

// walkValue walks n as a value: containers by walk, scalars here.
func (w *jsonWalker) walkValue(n *jsonNode, c jsonCtx) {
	switch n.kind {
	case '{', '[':
		w.walk(n, c)
	case '"':
		w.leaf(n, c)
	case '0':
		num := w.s[n.start:n.end]
		switch {
		case c.mask != "" && !c.plural && (c.whole || !metaKey(c.key)):
			w.edits = append(w.edits, edit{n.start, n.end, `"` + marker(c.mask) + `"`})
		case c.mask == "" && c.key != "" && len(num) >= 4 && classifyKey(c.key) == keyStrong && !keepKeyed(c.key, num, false):
			w.edits = append(w.edits, edit{n.start, n.end, `"` + marker(keyKind(c.key)) + `"`})
		}
	}
}

// str returns a string node's value.
func (w *jsonWalker) str(n *jsonNode) string { return jsonUnquote(w.s[n.start:n.end]) }

// key redacts an object key that is itself a secret (a map keyed by token).
func (w *jsonWalker) key(m *jsonNode) {
	raw := w.s[m.keyStart:m.keyEnd]
	if !w.r.Suspect(raw) {
		return
	}
	if out := w.r.redact(m.key, w.depth+1); out != m.key {
		w.edits = append(w.edits, edit{m.keyStart, m.keyEnd, jsonQuote(out)})
	}
}

func (w *jsonWalker) leaf(n *jsonNode, c jsonCtx) {
	raw := w.s[n.start:n.end]
	if c.mask != "" && (c.whole || !metaKey(c.key)) {
		if v := w.str(n); !redactPlaceholder(v) && !strings.HasPrefix(v, redactedMarker) {
			w.edits = append(w.edits, edit{n.start, n.end, `"` + marker(c.mask) + `"`})
		}
		return
	}
	if !w.r.Suspect(raw) && (c.key == "" || !w.r.Suspect(c.key)) {
		return
	}
	v := w.str(n)
	if out := w.r.redactKeyed(c.key, v, w.depth+1); out != v {
		w.edits = append(w.edits, edit{n.start, n.end, jsonQuote(out)})
	}
}

// redactKeyed redacts v read as the value of key. A key that names a
// secret decides for the whole value (keys.go: keepKeyed), so
// {"DB_PASSWORD": "x"} loses its value though "x" alone looks like
// nothing, and a value with quotes or lines in it goes whole. Other keys
// are read with their value ("Authorization: Bearer x", "Cookie: a=b").
// Then v itself goes through every rule: it may be a document of its own.
func (r *Redactor) redactKeyed(key, v string, depth int) string {
	if strings.HasPrefix(v, redactedMarker) {
		return v
	}
	out := v
	if key != "" && r.Suspect(key) {
		if classifyKey(key) != keyNone {
			if !keepKeyed(key, v, false) {
				return marker(keyKind(key))
			}
		} else if !strings.Contains(v, "\n") {
			prefix := key + ": "
			if o := r.redact(prefix+v, depth); o != prefix+v {
				if rest, ok := strings.CutPrefix(o, prefix); ok {
					out = rest
				}
			}
		}
	}
	return r.redact(out, depth)
}

// ---- YAML-like outline ----

// ynode is one line's entry of an indented document: a key (with its
// inline value) or a list item.
type ynode struct {
	// col orders nesting: twice the column of a key, twice the column of
	// a list item's dash plus one (a list may sit at its key's column).
	col  int
	key  string
	item bool
	// vs, ve is the inline value (quotes excluded); vs == ve when none.
	vs, ve int
	// flow marks an inline flow collection ([a, b] or {a: b}).
	flow bool
	// content are the spans of a block scalar's lines (| or >).
	content  [][2]int
	children []*ynode
}

// redactOutline masks values of an indented (YAML-like) text by key path.
func (r *Redactor) redactOutline(s string) (string, bool) {
	docs := parseOutline(s)
	var edits []edit
	for _, d := range docs {
		outlineVisit(s, d, "", false, &edits)
	}
	if len(edits) == 0 {
		return s, false
	}
	sortEdits(edits)
	return applyEdits(s, edits), true
}

func sortEdits(e []edit) {
	// insertion sort: edits come nearly in order
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j].start < e[j-1].start; j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

// outlineVisit decides the children of p; mask is the kind every value
// under p is masked as, or "", and whole says it covers meta keys too.
func outlineVisit(s string, p *ynode, mask string, whole bool, edits *[]edit) {
	secretDoc, nvKind := false, ""
	for _, c := range p.children {
		if c.key == "" || c.vs == c.ve {
			continue
		}
		v := s[c.vs:c.ve]
		switch {
		case normIs(c.key, "kind"):
			secretDoc = secretDoc || v == "Secret"
		case normIs(c.key, "type"):
			if strings.EqualFold(v, "SecureString") {
				nvKind = "secret"
			}
		case nvKind == "" && normIn(c.key, nameKeys):
			nvKind = secretNameKind(v)
		}
	}
	for _, c := range p.children {
		own, ownWhole := mask, whole
		if own == "" {
			switch {
			case c.key == "":
			case secretDoc && (normIs(c.key, "data") || normIs(c.key, "stringdata")):
				own, ownWhole = "k8s-secret", true
			case nvKind != "" && normIn(c.key, valueKeys):
				own, ownWhole = nvKind, true
			case (c.vs == c.ve && len(c.children) > 0 || c.content != nil || c.flow) && containerStrong(c.key):
				own = keyKind(c.key)
			}
		}
		if own != "" {
			maskOutlineValue(s, c, own, mask != "" && !whole, edits)
		}
		outlineVisit(s, c, own, ownWhole, edits)
	}
}

// maskOutlineValue masks n's inline value and block scalar lines.
// spareMeta is set when the mask comes from a secret's key above n, where
// a meta key's value is left to the line rules.
func maskOutlineValue(s string, n *ynode, kind string, spareMeta bool, edits *[]edit) {
	m := marker(kind)
	if n.vs < n.ve {
		v := s[n.vs:n.ve]
		keep := redactPlaceholder(v) && !n.flow || n.flow && strings.HasPrefix(v, "{{")
		if spareMeta && n.key != "" && metaKey(n.key) {
			keep = true // the line rules still read it
		}
		if !keep && !strings.HasPrefix(v, redactedMarker) {
			*edits = append(*edits, edit{n.vs, n.ve, m})
		}
	}
	for _, sp := range n.content {
		if line := s[sp[0]:sp[1]]; line != "" && !strings.HasPrefix(line, redactedMarker) {
			*edits = append(*edits, edit{sp[0], sp[1], m})
		}
	}
}

// parseOutline reads s as indented documents separated by "---" lines.
// It is forgiving: a line it cannot read as a key or a list item adds
// nothing, so text that only looks a little like YAML yields little.
func parseOutline(s string) []*ynode {
	root := &ynode{col: -1}
	docs := []*ynode{root}
	stack := []*ynode{root}
	attach := func(n *ynode) {
		for len(stack) > 1 && stack[len(stack)-1].col >= n.col {
			stack = stack[:len(stack)-1]
		}
		p := stack[len(stack)-1]
		p.children = append(p.children, n)
		stack = append(stack, n)
	}
	for pos := 0; pos < len(s); {
		ls, le, next := lineAt(s, pos)
		pos = next
		indent := 0
		for ls+indent < le && s[ls+indent] == ' ' {
			indent++
		}
		body := s[ls+indent : le]
		if body == "" || body[0] == '#' {
			continue
		}
		if body == "---" || strings.HasPrefix(body, "--- ") || body == "..." {
			root = &ynode{col: -1}
			docs = append(docs, root)
			stack = []*ynode{root}
			continue
		}
		at := ls + indent
		var last *ynode
		for at < le && s[at] == '-' && (at+1 == le || s[at+1] == ' ') {
			item := &ynode{col: 2*(at-ls) + 1, item: true}
			attach(item)
			last = item
			at++
			for at < le && s[at] == ' ' {
				at++
			}
		}
		if at >= le {
			continue
		}
		key, vs, ok := splitKey(s, at, le)
		if !ok {
			if last != nil {
				last.vs, last.ve, last.flow = valueSpan(s, at, le)
			}
			continue
		}
		n := &ynode{col: 2 * (at - ls), key: key}
		n.vs, n.ve, n.flow = valueSpan(s, vs, le)
		attach(n)
		if v := s[n.vs:n.ve]; n.vs < n.ve && (v[0] == '|' || v[0] == '>') && strings.Trim(v[1:], "+-0123456789") == "" {
			// A block scalar: the lines indented deeper than the key
			// (and blank lines between them) are its content.
			n.ve = n.vs
			n.content = [][2]int{}
			for pos < len(s) {
				cs, ce, cnext := lineAt(s, pos)
				ci := 0
				for cs+ci < ce && s[cs+ci] == ' ' {
					ci++
				}
				if cs+ci == ce {
					pos = cnext
					continue
				}
				if ci <= at-ls {
					break
				}
				n.content = append(n.content, [2]int{cs + ci, trimCR(s, cs+ci, ce)})
				pos = cnext
			}
		}
	}
	return docs
}

// lineAt returns the line starting at pos: its start, end (before the
// newline) and the start of the next line.
func lineAt(s string, pos int) (start, end, next int) {
	if k := strings.IndexByte(s[pos:], '\n'); k >= 0 {
		return pos, trimCR(s, pos, pos+k), pos + k + 1
	}
	return pos, trimCR(s, pos, len(s)), len(s)
}

func trimCR(s string, start, end int) int {
	for end > start && (s[end-1] == '\r' || s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return end
}

// splitKey reads "key: value" at s[at:le]: the key (unquoted) and where
// its value starts.
func splitKey(s string, at, le int) (key string, vs int, ok bool) {
	i := at
	switch c := s[i]; c {
	case '"', '\'':
		j := closingQuote(s, i, le)
		if j >= le {
			return "", 0, false
		}
		key, i = s[i+1:j], j+1
		for i < le && s[i] == ' ' {
			i++
		}
		if i >= le || s[i] != ':' {
			return "", 0, false
		}
	case '{', '[', '&', '*', '!', '|', '>', '%', '@', '`', '?':
		return "", 0, false
	default:
		for ; i < le; i++ {
			if s[i] == ':' && (i+1 == le || s[i+1] == ' ' || s[i+1] == '\t') {
				break
			}
			if s[i] == '#' && i > at && s[i-1] == ' ' {
				return "", 0, false
			}
		}
		if i >= le {
			return "", 0, false
		}
		key = strings.TrimRight(s[at:i], " \t")
		if key == "" {
			return "", 0, false
		}
	}
	return key, i + 1, true
}

// closingQuote returns where the quoted scalar opening at s[i] closes,
// before le (le when it does not): a backslash escapes in double quotes
// only, as in YAML.
func closingQuote(s string, i, le int) int {
	q := s[i]
	j := i + 1
	for j < le && s[j] != q {
		if s[j] == '\\' && q == '"' {
			j++
		}
		j++
	}
	return min(j, le)
}

// valueSpan returns the inline value at s[vs:le]: blanks, a tag or anchor
// and a trailing comment dropped, quotes excluded. flow is set for a flow
// collection.
func valueSpan(s string, vs, le int) (start, end int, flow bool) {
	for vs < le && (s[vs] == ' ' || s[vs] == '\t') {
		vs++
	}
	// A tag (!!binary) or an anchor (&a) before the value.
	for vs < le && (s[vs] == '!' || s[vs] == '&') {
		for vs < le && s[vs] != ' ' {
			vs++
		}
		for vs < le && s[vs] == ' ' {
			vs++
		}
	}
	if vs >= le || s[vs] == '#' {
		return vs, vs, false
	}
	switch c := s[vs]; c {
	case '"', '\'':
		j := closingQuote(s, vs, le)
		if j >= le {
			return vs + 1, le, false // runs on to the next lines
		}
		return vs + 1, j, false
	case '[', '{':
		flow = !strings.HasPrefix(s[vs:le], redactedMarker)
	}
	stop := le
	if k := strings.Index(s[vs:le], " #"); k >= 0 {
		stop = vs + k
	}
	return vs, trimCR(s, vs, stop), flow
}

// ---- cues ----

// lineKeyStart reports whether the key starting at s[i] begins its line's
// content: only blanks, list dashes or an opening quote before it.
func lineKeyStart(s string, i int) bool {
	if i > 0 && (s[i-1] == '"' || s[i-1] == '\'') {
		i--
	}
	for k := i - 1; k >= 0; k-- {
		switch s[k] {
		case ' ', '\t', '-':
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

// blockWorth: the trigger is in a key that names a secret and starts its
// line, and nothing but a block indicator, a flow collection or a comment
// follows its colon: the secret is in the lines below (or the collection).
func blockWorth(s string, i, j int) bool {
	start, end := keyAround(s, i, j)
	if start > 0 && s[start-1] == '"' && jsonContainerAfter(s, end) {
		// "api_keys": [ … anywhere on a line (a JSON log line).
		return containerStrong(s[start:end])
	}
	if !lineKeyStart(s, start) {
		return false
	}
	off, ok := afterColon(s, end, false)
	if !ok {
		return false
	}
	if off < len(s) {
		switch s[off] {
		case '\n', '\r', '#':
		case '|', '>':
			off++
			for off < len(s) && strings.IndexByte("+-0123456789", s[off]) >= 0 {
				off++
			}
			for off < len(s) && (s[off] == ' ' || s[off] == '\t' || s[off] == '\r') {
				off++
			}
			if off < len(s) && s[off] != '\n' && s[off] != '#' {
				return false
			}
		case '[', '{':
			if off+1 < len(s) && s[off+1] == '{' || strings.HasPrefix(s[off:], redactedMarker) {
				return false // a template, or a value already redacted
			}
		case '&', '!':
		default:
			return false
		}
	}
	return containerStrong(s[start:end])
}

// jsonContainerAfter reports whether a JSON key's closing quote (escaped
// or not) at s[end:], a colon and an array or object follow.
func jsonContainerAfter(s string, end int) bool {
	if end >= len(s) || s[end] != '"' && s[end] != '\\' {
		return false
	}
	off, ok := afterColon(s, end, true)
	return ok && off < len(s) && (s[off] == '[' || s[off] == '{')
}

// afterColon skips a key's closing quote (optional; escaped too when
// escaped is set), blanks and the colon that must follow, and blanks after
// it; ok is false when no colon follows.
func afterColon(s string, off int, escaped bool) (int, bool) {
	if escaped && off < len(s) && s[off] == '\\' {
		off++
	}
	if off < len(s) && (s[off] == '"' || s[off] == '\'') {
		off++
	}
	for off < len(s) && (s[off] == ' ' || s[off] == '\t') {
		off++
	}
	if off >= len(s) || s[off] != ':' {
		return off, false
	}
	off++
	for off < len(s) && (s[off] == ' ' || s[off] == '\t') {
		off++
	}
	return off, true
}

// secretKindWorth: the trigger is the value of a kind key, exactly
// "Secret": a Kubernetes Secret, in YAML or JSON.
func secretKindWorth(s string, i, j int) bool {
	if s[i:j] != "Secret" || j < len(s) && keyChar(s[j]) || i > 0 && keyChar(s[i-1]) {
		return false
	}
	k := i - 1
	if k >= 0 && (s[k] == '"' || s[k] == '\'') {
		k--
	}
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	if k < 0 || s[k] != ':' {
		return false
	}
	k--
	if k >= 0 && (s[k] == '"' || s[k] == '\'') {
		k--
	}
	return k >= 3 && s[k-3:k+1] == "kind" && (k == 3 || !keyChar(s[k-4]))
}

// nameValueWorth: the trigger is in the value of a name-like key ("name:
// DB_PASSWORD", "label": "password") and that value names a secret: the
// value beside it (value:, values:) is the secret.
func nameValueWorth(s string, i, j int) bool {
	start, end := keyAround(s, i, j)
	for start > 0 && s[start-1] == '/' { // a path: /prod/db/password
		start--
		for start > 0 && (keyChar(s[start-1])) {
			start--
		}
	}
	k := start - 1
	if k >= 0 && (s[k] == '"' || s[k] == '\'') {
		k--
	}
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	if k < 0 || s[k] != ':' && s[k] != '=' {
		return false
	}
	k--
	if k >= 0 && (s[k] == '"' || s[k] == '\'') {
		k--
	}
	ke := k + 1
	for k >= 0 && keyChar(s[k]) {
		k--
	}
	if !normIn(s[k+1:ke], nameKeys) {
		return false
	}
	return secretNameKind(s[start:end]) != ""
}
