package command

import (
	"fmt"
	"runtime"
	"testing"
)

func TestHeap(t *testing.T) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Println("heap", m.HeapAlloc, "objects", m.HeapObjects)
}
