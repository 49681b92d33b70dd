package policy

import "testing"

func TestActionKinds(t *testing.T) {
	every := ActionKinds{Every: KindResolve}
	perAction := ActionKinds{Actions: map[string]Kind{"read": KindRead, "write": KindWrite, "find": KindResolve}}
	tests := []struct {
		name   string
		d      ActionKinds
		action string
		want   Kind
	}{
		{"every covers any action", every, "search", KindResolve},
		{"every covers no action", every, "", KindResolve},
		{"declared read", perAction, "read", KindRead},
		{"declared resolve", perAction, "find", KindResolve},
		{"declared write", perAction, "write", KindWrite},
		{"undeclared action is a write", perAction, "delete", KindWrite},
		{"no action is a write", perAction, "", KindWrite},
		{"matching is exact", perAction, "Read", KindWrite},
		{"matching is exact (space)", perAction, " read", KindWrite},
		{"empty declaration is a write", ActionKinds{}, "read", KindWrite},
		{"unknown kind is a write", ActionKinds{Every: "observe"}, "", KindWrite},
		{"unknown per-action kind is a write", ActionKinds{Actions: map[string]Kind{"look": "peek"}}, "look", KindWrite},
	}
	for _, tt := range tests {
		if got := tt.d.KindOf(tt.action); got != tt.want {
			t.Errorf("%s: KindOf(%q) = %q, want %q", tt.name, tt.action, got, tt.want)
		}
	}
}

func TestActionKindsValid(t *testing.T) {
	tests := []struct {
		d    ActionKinds
		want bool
	}{
		{ActionKinds{Every: KindRead}, true},
		{ActionKinds{Actions: map[string]Kind{"a": KindWrite}}, true},
		{ActionKinds{}, false},
		{ActionKinds{Every: KindRead, Actions: map[string]Kind{"a": KindWrite}}, false},
		{ActionKinds{Every: "observe"}, false},
		{ActionKinds{Actions: map[string]Kind{"a": "peek"}}, false},
	}
	for _, tt := range tests {
		if got := tt.d.Valid(); got != tt.want {
			t.Errorf("%+v.Valid() = %v, want %v", tt.d, got, tt.want)
		}
	}
	d := ActionKinds{Actions: map[string]Kind{"a": KindRead}}
	if !d.Declares("a") || d.Declares("b") || !(ActionKinds{Every: KindWrite}).Declares("z") {
		t.Error("Declares disagrees with the declaration")
	}
}
