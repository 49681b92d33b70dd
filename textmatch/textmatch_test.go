package textmatch

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"jellyfin", "jelyfin", 1}, {"delly", "delly", 0}, {"web-1", "web-2", 1},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance is not symmetric for %q, %q", tc.a, tc.b)
		}
		if !Within(tc.a, tc.b, tc.want) || (tc.want > 0 && Within(tc.a, tc.b, tc.want-1)) {
			t.Errorf("Within(%q, %q) disagrees with Distance %d", tc.a, tc.b, tc.want)
		}
	}
}

func TestCommonPrefix(t *testing.T) {
	if got := CommonPrefix("media-server", "media-box"); got != 6 {
		t.Fatalf("CommonPrefix = %d, want 6", got)
	}
	if got := CommonPrefix("", "x"); got != 0 {
		t.Fatalf("CommonPrefix of empty = %d", got)
	}
}
