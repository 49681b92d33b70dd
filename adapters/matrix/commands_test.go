package matrix

import "testing"

func TestParseCommand(t *testing.T) {
	cases := []struct {
		in   string
		want command
	}{
		{"!approve ap-42", command{Kind: cmdApprove, ApprovalID: "ap-42"}},
		{"  !APPROVE   ap-42  ", command{Kind: cmdApprove, ApprovalID: "ap-42"}},
		{"!approve `ap-42`", command{Kind: cmdApprove, ApprovalID: "ap-42"}},
		{"!deny ap-42 not now, change freeze", command{Kind: cmdDeny, ApprovalID: "ap-42", Reason: "not now, change freeze"}},
		{"!deny ap-42", command{Kind: cmdDeny, ApprovalID: "ap-42"}},
		{"!deny ap-42\nmultiline\nreason", command{Kind: cmdDeny, ApprovalID: "ap-42", Reason: "multiline\nreason"}},
		{"!approve", command{Kind: cmdUsage}},
		{"!approve <id>", command{Kind: cmdUsage}},
		{"!approve a;rm", command{Kind: cmdUsage}},
		{"!approved ap-42", command{}},
		{"please !approve ap-42", command{}},
		{"approve ap-42", command{}},
		{"", command{}},
	}
	for _, tc := range cases {
		if got := parseCommand(tc.in); got != tc.want {
			t.Errorf("parseCommand(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestNormaliseReaction(t *testing.T) {
	for in, want := range map[string]string{"✅": "✅", "✅\ufe0f": "✅", " ❌ ": "❌", "❌\ufe0e": "❌", "👍": "👍"} {
		if got := normaliseReaction(in); got != want {
			t.Errorf("normaliseReaction(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"!approve ap-1", "!deny x y z", "!deny", "!approve \x00", "!APPROVE a\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := parseCommand(s)
		switch c.Kind {
		case cmdApprove, cmdDeny:
			if c.ApprovalID == "" || len(c.ApprovalID) > maxApprovalIDLen || !validID(c.ApprovalID) {
				t.Fatalf("bad approval ID %q from %q", c.ApprovalID, s)
			}
			if c.Kind == cmdApprove && c.Reason != "" {
				t.Fatalf("approve with reason from %q", s)
			}
		default:
			if c.ApprovalID != "" {
				t.Fatalf("ID %q without command from %q", c.ApprovalID, s)
			}
		}
	})
}
