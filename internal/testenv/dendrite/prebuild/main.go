// Command prebuild builds and caches the Dendrite binaries used by the Matrix
// integration tests, so `go test` does not spend its timeout compiling a
// homeserver. It prints the cache directory.
//
//	go run ./internal/testenv/dendrite/prebuild
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/vigilops/vigil/internal/testenv/dendrite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	dir, err := dendrite.EnsureBinaries(ctx, logf)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(dir)
}
