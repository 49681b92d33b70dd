package confkey

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorsNameTheFullKey(t *testing.T) {
	es := NewErrors("slack")
	es.Add("app_token", "is required")
	es.AddValue("max_answer_chars", 10, "must be at least %d", 1000)
	es.AddValue("mode", "rtm", "must be socket or http")
	list := List(fmt.Errorf("wrapped: %w", es.Err()))
	if len(list) != 1 {
		// A wrapped join is one error: List unwraps joins, not wrappers.
		t.Fatalf("List of a wrapped join = %d errors", len(list))
	}
	list = List(es.Err())
	want := []string{
		"slack.app_token is required",
		"slack.max_answer_chars 10 must be at least 1000",
		`slack.mode "rtm" must be socket or http`,
	}
	if len(list) != len(want) {
		t.Fatalf("List = %v", list)
	}
	for i, e := range list {
		if e.Error() != want[i] {
			t.Errorf("error %d = %q, want %q", i, e, want[i])
		}
	}
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Section: "plugins[0]", Key: "env[1]"}, "plugins[0].env[1]"},
		{Error{Section: "matrix", Key: "[0]"}, "matrix[0]"},
		{Error{Key: "name"}, "name"},
		{Error{Section: "store.redis"}, "store.redis"},
	} {
		if got := tc.e.FullKey(); got != tc.want {
			t.Errorf("FullKey(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
	if NewErrors("x").Err() != nil {
		t.Error("an empty collection is an error")
	}
	if l := List(errors.New("plain")); len(l) != 1 || l[0].Problem != "plain" {
		t.Errorf("List(plain) = %+v", l)
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	s := Secret("xoxb-secret")
	text, _ := s.MarshalText()
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s %#v", s, s, s), string(text), s.LogValue().String()} {
		if out == "" || contains(out, "xoxb-secret") {
			t.Errorf("printed %q", out)
		}
	}
	if s.Reveal() != "xoxb-secret" || Secret("").String() != "" {
		t.Error("Reveal or the empty secret is wrong")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
