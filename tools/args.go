package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vigilops/vigil/policy"
)

// maxArgsBytes bounds the raw arguments of one call. The largest legitimate
// argument is file content (see maxFileContent).
const maxArgsBytes = 2 << 20

// enumerated is implemented by string types whose values form a closed set
// (an action, an operation). The derived schema lists the values as an enum
// and DecodeArgs rejects anything else, so a tool's switch over the value
// never meets a surprise.
type enumerated interface {
	EnumValues() []string
}

// validator is implemented by argument structs with rules the types cannot
// express: ranges, fields required by one action only, formats. Validate runs
// after decoding succeeded and returns a *fieldError where a field is to blame.
type validator interface {
	Validate() error
}

// SchemaTuner lets an argument struct add constraints the struct tags cannot
// carry (minimum and maximum of a number, a pattern) to its derived schema.
type SchemaTuner interface {
	TuneSchema(s *jsonschema.Schema)
}

// argField describes one JSON property of an argument struct.
type argField struct {
	name     string
	index    int
	typ      reflect.Type
	required bool
}

// argFields lists the JSON properties of struct type t, in field order,
// following encoding/json's tag rules: a field is required unless its tag says
// omitempty or omitzero (the same rule jsonschema-go applies, so the schema and
// the decoder agree).
func argFields(t reflect.Type) []argField {
	var out []argField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				optional = true
			}
		}
		out = append(out, argField{name: name, index: i, typ: f.Type, required: !optional})
	}
	return out
}

// DecodeArgs decodes a model's tool arguments into T strictly: exactly one
// JSON object with nothing after it, every key a property of T spelled
// exactly (no case folding), no key twice, every required property present
// and not null or empty, every value of the property's JSON type, enum
// values from their set, and finally T's Validate method if it has one.
// Any failure is an INVALID_INPUT block naming the field, written for the
// model to correct its call.
//
// Empty input is read as {} (some APIs send nothing for a call without
// arguments); "null" is not an object and is rejected.
func DecodeArgs[T any](raw json.RawMessage) (T, *policy.Block) {
	var out T
	rv := reflect.ValueOf(&out).Elem()
	if rv.Kind() != reflect.Struct {
		return out, InvalidInput("", fmt.Sprintf("tools: DecodeArgs needs a struct type, not %s", rv.Type()))
	}
	fields := argFields(rv.Type())

	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if len(raw) > maxArgsBytes {
		return out, InvalidInput("", fmt.Sprintf("arguments are %d bytes; the limit is %d", len(raw), maxArgsBytes))
	}
	values, err := splitObject(raw)
	if err != nil {
		return out, InvalidInput("", err.Error())
	}

	known := make(map[string]argField, len(fields))
	names := make([]string, len(fields))
	for i, f := range fields {
		known[f.name] = f
		names[i] = f.name
	}
	for _, kv := range values {
		if _, ok := known[kv.key]; !ok {
			return out, InvalidInput(kv.key, fmt.Sprintf("field %q: unknown field; known fields: %s", kv.key, strings.Join(names, ", ")))
		}
	}
	given := make(map[string]json.RawMessage, len(values))
	for _, kv := range values {
		given[kv.key] = kv.value
	}

	for _, f := range fields {
		v, ok := given[f.name]
		if !ok || string(v) == "null" {
			if f.required {
				return out, InvalidInput(f.name, fmt.Sprintf("field %q: required", f.name))
			}
			continue
		}
		dst := rv.Field(f.index)
		if err := decodeValue(v, dst.Addr().Interface()); err != nil {
			return out, InvalidInput(f.name, fmt.Sprintf("field %q: want %s, got %s", f.name, jsonTypeName(f.typ), gotDescription(v, err)))
		}
		if f.required && dst.IsZero() && f.typ.Kind() == reflect.String {
			return out, InvalidInput(f.name, fmt.Sprintf("field %q: required, got an empty string", f.name))
		}
		if e, ok := dst.Interface().(enumerated); ok && dst.Kind() == reflect.String && !dst.IsZero() {
			allowed := e.EnumValues()
			if !slices.Contains(allowed, dst.String()) {
				return out, InvalidInput(f.name, fmt.Sprintf("field %q: want one of %s; got %q", f.name, strings.Join(allowed, "|"), dst.String()))
			}
		}
	}

	if v, ok := any(&out).(validator); ok {
		if err := v.Validate(); err != nil {
			field := ""
			var fe *fieldError
			if errors.As(err, &fe) {
				field = fe.Field
			}
			return out, InvalidInput(field, err.Error())
		}
	}
	return out, nil
}

type keyValue struct {
	key   string
	value json.RawMessage
}

// splitObject reads raw as exactly one JSON object and returns its members in
// order, refusing duplicate keys and anything after the closing brace.
func splitObject(raw []byte) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("arguments must be one JSON object, got %s", gotDescription(raw, nil))
	}
	var out []keyValue
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("arguments are not valid JSON: object key is not a string")
		}
		if seen[key] {
			return nil, fmt.Errorf("field %q: given twice", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: field %q: %v", key, err)
		}
		out = append(out, keyValue{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("arguments must be exactly one JSON object; found more data after it")
	}
	return out, nil
}

// decodeValue decodes one property value, strictly for nested objects.
func decodeValue(raw json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// jsonTypeName says what JSON a Go type accepts, in the words of the schema.
func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array of " + jsonTypeName(t.Elem()) + "s"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Pointer:
		return jsonTypeName(t.Elem())
	default:
		return t.String()
	}
}

// gotDescription names the JSON type of raw, with the inner culprit for an
// array or object whose element had the wrong type.
func gotDescription(raw []byte, err error) string {
	kind := "invalid JSON"
	if len(raw) > 0 {
		switch c := raw[0]; {
		case c == '"':
			kind = "string"
		case c == '{':
			kind = "object"
		case c == '[':
			kind = "array"
		case c == 't' || c == 'f':
			kind = "boolean"
		case c == 'n':
			kind = "null"
		case c == '-' || (c >= '0' && c <= '9'):
			kind = "number"
			if bytes.ContainsAny(raw, ".eE") {
				kind = "number " + string(raw)
			}
		}
	}
	var te *json.UnmarshalTypeError
	if (kind == "array" || kind == "object") && errors.As(err, &te) {
		inner := te.Value
		if inner == "bool" {
			inner = "boolean"
		}
		return kind + " containing a " + inner
	}
	return kind
}

func InvalidInput(field, msg string) *policy.Block {
	b := &policy.Block{
		Code:         policy.CodeInvalidInput,
		Message:      msg,
		RecoveryHint: "correct the arguments to match the tool's parameter schema and call again",
	}
	if field != "" {
		b.Details = map[string]any{"field": field}
	}
	return b
}

// SchemaFor derives the JSON Schema of argument struct T: properties in field
// order with their jsonschema tag as description, required unless tagged
// omitempty, additionalProperties false, enums for enumerated field types,
// and whatever T's TuneSchema adds.
func SchemaFor[T any]() (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema for %s: not a struct", t)
	}
	overrides := map[reflect.Type]*jsonschema.Schema{
		// A list argument is an array; the library's default also admits null.
		reflect.TypeFor[[]string](): {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}
	for _, f := range argFields(t) {
		if f.typ.Kind() != reflect.String {
			continue
		}
		if e, ok := reflect.Zero(f.typ).Interface().(enumerated); ok {
			enum := make([]any, 0, len(e.EnumValues()))
			for _, v := range e.EnumValues() {
				enum = append(enum, v)
			}
			overrides[f.typ] = &jsonschema.Schema{Type: "string", Enum: enum}
		}
	}
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: overrides})
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", t, err)
	}
	if tuner, ok := any(new(T)).(SchemaTuner); ok {
		tuner.TuneSchema(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", t, err)
	}
	return b, nil
}

// mustSchema is SchemaFor for the built-in tools, whose argument types are
// fixed at compile time: a failure is a programming error that every test
// run would catch, so it panics like regexp.MustCompile.
func MustSchema[T any]() json.RawMessage {
	s, err := SchemaFor[T]()
	if err != nil {
		panic(err)
	}
	return s
}

// checkText rejects values that cannot be passed safely to a command: NUL
// bytes (they cannot appear in an argument) and, when singleLine is set,
// line breaks (a path or name never has one; a model that sends one is
// confused or hostile).
func CheckText(field, v string, singleLine bool) error {
	if strings.IndexByte(v, 0) >= 0 {
		return FieldErrorf(field, "must not contain NUL bytes")
	}
	if singleLine && strings.ContainsAny(v, "\r\n") {
		return FieldErrorf(field, "must be a single line")
	}
	return nil
}

// fieldError is a validation failure the model can fix, naming the argument.
type fieldError struct {
	Field string
	Msg   string
}

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %s", e.Field, e.Msg) }

func FieldErrorf(field, format string, args ...any) error {
	return &fieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// notUsed rejects an argument the action would ignore, so the model does not
// believe it had an effect.
func NotUsed(field, action string, set bool) error {
	if set {
		return FieldErrorf(field, "not used by action %s; leave it out", action)
	}
	return nil
}
