package matrix

import (
	"strings"
	"testing"
)

func TestNewValidatesConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want []string // substrings of the error; nil = valid
	}{
		{"empty", Config{}, []string{"matrix.homeserver", "matrix.user_id", "matrix.access_token is required, or matrix.password"}},
		{"token", Config{Homeserver: "https://hs.example", UserID: "@v:hs.example", AccessToken: "t"}, nil},
		{"password", Config{Homeserver: "http://127.0.0.1:8008", UserID: "@v:hs.example", Password: "p"}, nil},
		{"bad url", Config{Homeserver: "hs.example", UserID: "@v:hs.example", Password: "p"}, []string{"matrix.homeserver"}},
		{"bad user", Config{Homeserver: "https://hs.example", UserID: "vigil", Password: "p"}, []string{"matrix.user_id"}},
		{"bad room", Config{Homeserver: "https://hs.example", UserID: "@v:hs.example", Password: "p", Rooms: []string{"#ops:hs"}}, []string{"matrix.rooms[0]"}},
		{"negative level", Config{Homeserver: "https://hs.example", UserID: "@v:hs.example", Password: "p", ApproverPowerLevel: -1}, []string{"matrix.approver_power_level"}},
		{"e2ee without state", Config{Homeserver: "https://hs.example", UserID: "@v:hs.example", Password: "p", E2EE: true}, []string{"matrix.state_dir"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New(tc.cfg)
			if tc.want == nil {
				if err != nil || a == nil {
					t.Fatalf("New: %v", err)
				}
				if a.threshold != DefaultApproverPowerLevel {
					t.Fatalf("threshold = %d", a.threshold)
				}
				return
			}
			if err == nil {
				t.Fatal("New accepted an invalid config")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}
