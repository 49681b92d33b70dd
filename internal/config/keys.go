package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// Keys are named as in the file: dotted paths of mapstructure tags, with
// list items as name[i] ("plugins[0].timeout"). A key's pattern replaces
// every index with [] ("plugins[].timeout"), naming the key of every item.

var (
	durationType = reflect.TypeFor[time.Duration]()
	secretType   = reflect.TypeFor[Secret]()
)

// field is one leaf of the Config struct: a scalar or a list of scalars.
type field struct {
	// key is the pattern ("llm.timeout", "plugins[].timeout").
	key string
	typ reflect.Type
}

// fields lists every key of Config, in declaration order.
func fields() []field {
	var out []field
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("mapstructure")
			if !f.IsExported() || tag == "" || tag == "-" {
				continue
			}
			key := prefix + tag
			ft := f.Type
			switch {
			case tag == ",squash":
				walk(ft, prefix)
			case ft.Kind() == reflect.Struct:
				walk(ft, key+".")
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), key+"[].")
			default:
				out = append(out, field{key: key, typ: ft})
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return out
}

// pattern replaces every list index in key with [].
func pattern(key string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(key, '[')
		if i < 0 {
			b.WriteString(key)
			return b.String()
		}
		j := strings.IndexByte(key[i:], ']')
		if j < 0 {
			b.WriteString(key)
			return b.String()
		}
		b.WriteString(key[:i] + "[]")
		key = key[i+j+1:]
	}
}

// isSecret reports whether the key holds a Secret, whose value is never
// shown.
func isSecret(key string) bool {
	p := pattern(key)
	for _, f := range fields() {
		if f.key == p {
			return f.typ == secretType
		}
	}
	return false
}

// knownKeys lists every key pattern, sorted, including the lists
// themselves ("channels", "plugins"), for "did you mean" suggestions.
func knownKeys() []string {
	seen := map[string]bool{}
	var out []string
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	for _, f := range fields() {
		add(f.key)
		// The sections and lists that hold it: store, store.redis, plugins.
		for i, c := range f.key {
			if c == '.' || c == '[' {
				add(strings.TrimSuffix(f.key[:i], "[]"))
			}
		}
	}
	slices.Sort(out)
	return out
}

// durationValue is one duration in a loaded Config, by its key.
type durationValue struct {
	key string // with indices: "plugins[2].timeout"
	d   time.Duration
}

// durations returns every duration of c with its key.
func (c *Config) durations() []durationValue {
	var out []durationValue
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("mapstructure")
			if !f.IsExported() || tag == "" || tag == "-" {
				continue
			}
			key := prefix + tag
			fv := v.Field(i)
			switch {
			case tag == ",squash":
				walk(fv, prefix)
			case f.Type == durationType:
				out = append(out, durationValue{key: key, d: time.Duration(fv.Int())})
			case f.Type.Kind() == reflect.Struct:
				walk(fv, key+".")
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				for j := range fv.Len() {
					walk(fv.Index(j), key+"["+strconv.Itoa(j)+"].")
				}
			}
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return out
}

// rawValue returns the value of key as viper holds it (as written in the
// file or the environment, before decoding), following list indices.
func rawValue(v *viper.Viper, key string) (any, bool) {
	if !strings.Contains(key, "[") {
		if !v.IsSet(key) {
			return nil, false
		}
		return v.Get(key), true
	}
	var cur any
	for n, seg := range strings.Split(key, ".") {
		name, idx := seg, -1
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			k, err := strconv.Atoi(seg[i+1 : len(seg)-1])
			if err != nil {
				return nil, false
			}
			name, idx = seg[:i], k
		}
		if n == 0 {
			cur = v.Get(name)
		} else {
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			cur, ok = m[name]
			if !ok {
				return nil, false
			}
		}
		if idx >= 0 {
			l, ok := cur.([]any)
			if !ok || idx >= len(l) {
				return nil, false
			}
			cur = l[idx]
		}
	}
	return cur, true
}
