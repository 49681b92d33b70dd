package sandbox

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParsePorts(t *testing.T) {
	good := map[string][]int{"": nil, "443": {443}, "22,443, 5432": {22, 443, 5432}, "1,65535": {1, 65535}}
	for in, want := range good {
		if got, err := ParsePorts(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParsePorts(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{"0": "out of range", "65536": "out of range", "-1": "out of range", "http": "not a TCP port",
		"443,": "not a TCP port", ",": "not a TCP port", "4 43": "not a TCP port", "0x50": "not a TCP port"}
	for in, want := range bad {
		if _, err := ParsePorts(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePorts(%q): err %v, want %q", in, err, want)
		}
	}
}

// FuzzParsePorts: whatever it is given, ParsePorts returns only ports
// Landlock can mean, or an error; and what it accepts prints back to the
// same ports.
func FuzzParsePorts(f *testing.F) {
	for _, s := range []string{"", "443", "22,443,5432", "0", "65536", "x", ",", " 80 ", "+80", "080", "1,,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ports, err := ParsePorts(s)
		if err != nil {
			return
		}
		var words []string
		for _, p := range ports {
			if p < 1 || p > 65535 {
				t.Fatalf("ParsePorts(%q) accepted port %d", s, p)
			}
			words = append(words, strconv.Itoa(p))
		}
		again, err := ParsePorts(strings.Join(words, ","))
		if err != nil || !slices.Equal(again, ports) {
			t.Fatalf("ParsePorts(%q) = %v, which does not read back (%v, %v)", s, ports, again, err)
		}
	})
}
