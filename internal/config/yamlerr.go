package config

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlProblems turn the YAML parser's messages into words someone who
// has never read a YAML grammar can act on. Matched in order, on the
// message without its "yaml: line N:" prefix; an unknown message is
// passed through after the line.
var yamlProblems = []struct {
	re   *regexp.Regexp
	says string
}{
	{regexp.MustCompile(`mapping values are not allowed in this context`),
		`a second "key:" on one line, or a line indented deeper than the key above it; ` +
			`quote a value that contains ": " ('a: b'), and line up keys of one section under each other`},
	{regexp.MustCompile(`did not find expected key`),
		"the indentation does not line up with the keys around it; indent every key of a section by the same number of spaces"},
	{regexp.MustCompile(`did not find expected '-' indicator`),
		`a list mixes "- item" lines with "key: value" lines; make every entry of the list start with "- "`},
	{regexp.MustCompile(`did not find expected node content`),
		"a value is missing or a bracket is not closed; close every [ with ] and every { with } on the same entry"},
	{regexp.MustCompile(`did not find expected ',' or '([\]}])'`),
		"a list or section written inline is not closed or lacks a comma; close it with ] or } and separate items with commas"},
	{regexp.MustCompile(`found character that cannot start any token`),
		"a tab, or a value starting with @ or `; indent with spaces only, and quote values that start with @ or ` (\"@alice\")"},
	{regexp.MustCompile(`found a tab character`),
		"a tab in the indentation; indent with spaces only"},
	{regexp.MustCompile(`found unexpected end of stream`),
		`a quote is not closed; end every "…" or '…' value on the line it starts`},
	{regexp.MustCompile(`found unknown escape character`),
		`a backslash in a "double-quoted" value; use 'single quotes' for values with backslashes, or write \\`},
	{regexp.MustCompile(`could not find expected ':'`),
		`a key without a colon; write "key: value"`},
	{regexp.MustCompile(`mapping key "([^"]*)" already defined at line (\d+)`),
		"the key $1 is written twice (first at line $2); keep one and merge the two"},
	{regexp.MustCompile(`unknown anchor '([^']*)' referenced`),
		"*$1 refers to an anchor &$1 that is not defined above it; define it, or quote the value if it starts with *"},
	{regexp.MustCompile(`cannot unmarshal !!(seq|str|int|bool|float) into map`),
		"the file must be a set of sections (llm:, slack:, …), not a list or a single value; see configs/vigil.example.yaml"},
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// checkYAML parses data as YAML and, if it is not valid, returns one
// *Error for each problem the parser found, each at FILE:LINE.
func checkYAML(path string, data []byte) error {
	var m map[string]any
	err := yaml.Unmarshal(data, &m)
	if err == nil {
		return nil
	}
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var out []error
	for _, msg := range msgs {
		out = append(out, yamlError(path, msg))
	}
	return errors.Join(out...)
}

// yamlError words one parser message. The scanner leaves out the line
// when it is the first.
func yamlError(path, msg string) *Error {
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	e := &Error{File: path, Line: line, Problem: "not valid YAML: " + msg}
	for _, p := range yamlProblems {
		if loc := p.re.FindStringSubmatchIndex(msg); loc != nil {
			e.Problem = "not valid YAML: " + string(p.re.ExpandString(nil, p.says, msg, loc))
			break
		}
	}
	return e
}
