package matrix

import (
	"reflect"
	"testing"

	"maunium.net/go/mautrix/event"
	"maunium.net/go/mautrix/id"

	"github.com/vigilops/vigil/bot"
)

var me = identity{ID: "@vigil:example.org", DisplayName: "Vigil Bot"}

func TestAddressesBot(t *testing.T) {
	cases := []struct {
		name string
		c    event.MessageEventContent
		want bool
	}{
		{"intentional mention", event.MessageEventContent{Body: "hi", Mentions: &event.Mentions{UserIDs: []id.UserID{me.ID}}}, true},
		{"user ID in text", event.MessageEventContent{Body: "@vigil:example.org check @web-1"}, true},
		{"pill", event.MessageEventContent{Body: "Vigil Bot check", Format: event.FormatHTML,
			FormattedBody: `<a href="https://matrix.to/#/@vigil:example.org">Vigil Bot</a> check`}, true},
		{"escaped pill", event.MessageEventContent{Body: "x", Format: event.FormatHTML,
			FormattedBody: `<a href="https://matrix.to/#/%40vigil:example.org">x</a>`}, true},
		{"@display name", event.MessageEventContent{Body: "hey @vigil bot, look"}, true},
		{"leading display name", event.MessageEventContent{Body: "Vigil Bot: look at @db"}, true},
		{"@localpart", event.MessageEventContent{Body: "@vigil what is up with @db"}, true},
		{"localpart colon", event.MessageEventContent{Body: "vigil, status?"}, true},
		{"other user", event.MessageEventContent{Body: "@alice:example.org hi", Mentions: &event.Mentions{UserIDs: []id.UserID{"@alice:example.org"}}}, false},
		{"resource named like prefix", event.MessageEventContent{Body: "@vigilant-db is slow"}, false},
		{"email", event.MessageEventContent{Body: "mail ops@vigil.example"}, false},
		{"plain word", event.MessageEventContent{Body: "we need more vigil here"}, false},
		{"other server same localpart", event.MessageEventContent{Body: "@vigil:other.org hi"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := addressesBot(me, &tc.c); got != tc.want {
				t.Fatalf("addressesBot(%q) = %v, want %v", tc.c.Body, got, tc.want)
			}
		})
	}
}

func TestStripBot(t *testing.T) {
	cases := map[string]string{
		"@vigil:example.org check @web-1":        "check @web-1",
		"@vigil:example.org: check @web-1":       "check @web-1",
		"Vigil Bot: why is @db slow?":            "why is @db slow?",
		"hey @vigil, restart @nginx please":      "hey , restart @nginx please",
		"@vigil !approve ap-1":                   "!approve ap-1",
		"nothing to strip":                       "nothing to strip",
		"line one @vigil\nline  two":             "line one\nline two",
		"@vigil:example.org":                     "",
		"ask @vigil:other.org about @vigil-db":   "ask @vigil:other.org about @vigil-db",
		"VIGIL BOT, what happened to @web-1?":    "what happened to @web-1?",
		"see @vigil:example.org and @vigil bot.": "see and bot.",
	}
	for in, want := range cases {
		if got := stripBot(me, in); got != want {
			t.Errorf("stripBot(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResourceMentions(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"check @web-1 and @db.prod, then @web-1 again.", []string{"web-1", "db.prod"}},
		{"ask @alice:example.org about @nginx", []string{"nginx"}},
		{"mail ops@example.org", nil},
		{"(@lxc141) and @node_delly!", []string{"lxc141", "node_delly"}},
		{"@vigil look at @cache-01.", []string{"cache-01"}},
		{"@ alone and @@ and @-", nil},
		{"https://host/@user/x", nil},
		{"end @web-", []string{"web"}},
		{"@Vigil bot is @vigilant", []string{"vigilant"}},
		{"unicode @sérveur ok", []string{"sérveur"}},
		{"ipv6 @[::1]:8448 no", nil},
	}
	for _, tc := range cases {
		got := resourceMentions(me, tc.in)
		var names []string
		for _, m := range got {
			names = append(names, m.Name)
		}
		if !reflect.DeepEqual(names, tc.want) {
			t.Errorf("resourceMentions(%q) = %q, want %q", tc.in, names, tc.want)
		}
	}
}

func FuzzResourceMentions(f *testing.F) {
	for _, s := range []string{"check @web-1", "@a:b @c", "x@y", "@vigil: @db.", "@\xff@x", "@[::1]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, m := range resourceMentions(me, s) {
			if m.Name == "" {
				t.Fatalf("empty mention from %q", s)
			}
			if m.Name[len(m.Name)-1] == '.' || m.Name[len(m.Name)-1] == '-' {
				t.Fatalf("mention %q keeps trailing punctuation", m.Name)
			}
			if me.isName(m.Name) {
				t.Fatalf("the bot itself %q reported as a resource", m.Name)
			}
		}
		_ = stripBot(me, s)
		_ = addressesBot(me, &event.MessageEventContent{Body: s, Format: event.FormatHTML, FormattedBody: s})
	})
}

var _ = bot.Mention{}
