//go:build !race

package plugintest

const raceBuild = false
