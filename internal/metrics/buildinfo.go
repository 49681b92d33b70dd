package metrics

import "github.com/prometheus/client_golang/prometheus"

// BuildInfo labels vigil_build_info: which vigil a scrape came from.
type BuildInfo struct {
	Version   string // vigil's version, e.g. v1.4.0 or a git describe
	Revision  string // VCS commit
	GoVersion string // the Go toolchain it was built with
}

// RegisterBuildInfo registers vigil_build_info, a gauge that is always 1
// and carries the version in its labels, the convention Prometheus's own
// *_build_info metrics follow: a dashboard shows which version runs where,
// and a rollout shows as the label changing, e.g.
// count by (version) (vigil_build_info).
func RegisterBuildInfo(reg prometheus.Registerer, b BuildInfo) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help:        "Always 1; the labels say which vigil is running (version, revision, goversion).",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion},
	})
	g.Set(1)
	reg.MustRegister(g)
}
