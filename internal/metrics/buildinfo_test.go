package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vigilops/vigil/internal/metrics"
)

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.RegisterBuildInfo(reg, metrics.BuildInfo{Version: "v1.2.3", Revision: "0123abcd", GoVersion: "go1.26.8"})
	want := `
# HELP vigil_build_info Always 1; the labels say which vigil is running (version, revision, goversion).
# TYPE vigil_build_info gauge
vigil_build_info{goversion="go1.26.8",revision="0123abcd",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "vigil_build_info"); err != nil {
		t.Fatal(err)
	}
}
