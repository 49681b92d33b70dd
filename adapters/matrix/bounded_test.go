package matrix

import "testing"

func TestBoundedForgetsOldest(t *testing.T) {
	b := newBounded[int, string](3)
	for i := 0; i < 5; i++ {
		b.put(i, "v")
	}
	for i, want := range []bool{false, false, true, true, true} {
		if _, ok := b.get(i); ok != want {
			t.Errorf("key %d present=%v, want %v", i, ok, want)
		}
	}
	b.put(4, "new")
	if v, _ := b.get(4); v != "new" {
		t.Fatalf("update lost: %q", v)
	}
	if len(b.items) != 3 {
		t.Fatalf("%d items", len(b.items))
	}
}
