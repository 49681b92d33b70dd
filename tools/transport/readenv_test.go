package transport

import (
	"slices"
	"testing"
)

func TestWithReadOnlyEnv(t *testing.T) {
	const ro = "-c default_transaction_read_only=on"
	in := []string{"PATH=/bin", "PGOPTIONS=-c search_path=app", "HOME=/root"}
	got := withReadOnlyEnv(in)
	if want := []string{"PATH=/bin", "HOME=/root", "PGOPTIONS=-c search_path=app " + ro}; !slices.Equal(got, want) {
		t.Errorf("with PGOPTIONS set: %q, want %q", got, want)
	}
	if in[1] != "PGOPTIONS=-c search_path=app" {
		t.Errorf("the caller's environment changed: %q", in)
	}
	if got := withReadOnlyEnv([]string{"PATH=/bin", "PGOPTIONS="}); !slices.Equal(got, []string{"PATH=/bin", "PGOPTIONS=" + ro}) {
		t.Errorf("with PGOPTIONS empty: %q", got)
	}
	if got := withReadOnlyEnv(nil); !slices.Equal(got, []string{"PGOPTIONS=" + ro}) {
		t.Errorf("from nothing: %q", got)
	}
}
