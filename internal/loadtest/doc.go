// Package loadtest holds vigil's load benchmark (SPEC Q4): many concurrent
// threads through the whole bot (dedup, locks, sessions, agent loop,
// policy, tools, events) against a scripted model with a fixed latency,
// on the memory and the Redis stores. It has no tests, only benchmarks,
// so it costs nothing in `go test ./...`:
//
//	go test -run '^$' -bench ConcurrentThreads -benchtime 1x ./internal/loadtest/
//
// BenchmarkTurnTrace runs the same burst under runtime/trace and says what
// the slowest turns waited on. Results and how to read them are in
// BENCHMARKS.md ("Replicas and load").
package loadtest
