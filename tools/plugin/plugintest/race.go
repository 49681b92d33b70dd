//go:build race

package plugintest

// raceBuild: the test binary has the race detector, so the echo server is
// built with it too and reuses the race build of its dependencies that the
// tests already compiled, instead of compiling them once more without it.
const raceBuild = true
