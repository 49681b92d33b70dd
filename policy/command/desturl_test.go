package command

import "testing"

func TestURLDestination(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // "" when not a destination
	}{
		{"http://prometheus:9090/api/v1/query", "prometheus:9090"},
		{"https://am.example.org", "am.example.org:443"},
		{"http://10.0.0.7", "10.0.0.7:80"},
		{"https://[2001:db8::1]:8443/x", "[2001:db8::1]:8443"},
		{"ftp://files:21", ""},
		{"prometheus:9090", ""},
		{"", ""},
		{"http://", ""},
	} {
		d, ok := URLDestination(tc.url)
		got := ""
		if ok {
			got = d.String()
		}
		if got != tc.want {
			t.Errorf("URLDestination(%q) = %q, %v; want %q", tc.url, got, ok, tc.want)
		}
	}
}
