package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/alerts"
	"github.com/vigilops/vigil/tools/changes"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/kube"
	"github.com/vigilops/vigil/tools/metrics"
	"github.com/vigilops/vigil/tools/transport"
)

// observability is what the datasource tools add to an App: the tools,
// the Kubernetes objects people can @mention, and the discovery loop to
// stop on Close.
type observability struct {
	tools    []tools.Tool
	mentions mentionSource
	stop     func()
	// parts are what channels with a scope narrow these tools from.
	parts scopeParts
}

// mentionSource resolves @mentions that are not in the static inventory.
type mentionSource interface {
	ResolveMention(name string) ([]policy.Resource, bool)
}

// firstDiscovery bounds the discovery done before vigil starts serving, so
// @mentions of cluster objects work from the first message; a cluster that
// is slower is picked up by the next refresh.
const firstDiscovery = 5 * time.Second

// observabilityTools builds the metrics, alerts, kube and changes tools
// from the configuration. Tools whose datasource is not configured are
// still offered and say so, so the tool list is the same everywhere.
func observabilityTools(ctx context.Context, cfg *config.Config, inv *inventory.Inventory, x transport.Executor, log *slog.Logger) (*observability, error) {
	o := &observability{stop: func() {}}

	var sources []metrics.Datasource
	for i, p := range cfg.Observability.Prometheus {
		hc, err := p.HTTPClientConfig()
		if err != nil {
			return nil, fmt.Errorf("config: observability.prometheus[%d]: %w", i, err)
		}
		ds, err := metrics.Connect(metrics.Config{Name: p.Name, URL: p.URL, Timeout: p.Timeout, HTTP: hc})
		if err != nil {
			return nil, fmt.Errorf("config: observability.prometheus[%d]: %w", i, err)
		}
		sources = append(sources, ds)
	}

	am := cfg.Observability.Alertmanager
	ac := alerts.Config{URL: am.URL, Timeout: am.Timeout, MaxSilence: am.MaxSilence}
	if am.URL != "" {
		hcc, err := am.HTTPClientConfig()
		if err != nil {
			return nil, fmt.Errorf("config: observability.alertmanager: %w", err)
		}
		hc, err := metrics.NewHTTPClient(hcc, "alertmanager")
		if err != nil {
			return nil, fmt.Errorf("config: observability.alertmanager: %w", err)
		}
		client, err := alerts.NewClient(am.URL, hc)
		if err != nil {
			return nil, fmt.Errorf("config: observability.alertmanager.url: %w", err)
		}
		ac.API = client
	}

	var clusters []*kube.Cluster
	for i, k := range cfg.Kubernetes.Clusters {
		c, err := kube.Connect(kube.ClusterConfig{Name: k.Name, Kubeconfig: k.Kubeconfig, Context: k.Context, InCluster: k.InCluster,
			Namespaces: k.Namespaces, Timeout: cfg.Kubernetes.Timeout})
		if err != nil {
			return nil, fmt.Errorf("config: kubernetes.clusters[%d]: %w", i, err)
		}
		clusters = append(clusters, c)
	}
	var kubeChanges changes.Kube
	if len(clusters) > 0 {
		d := kube.NewDiscovery(clusters, log)
		first, cancel := context.WithTimeout(ctx, firstDiscovery)
		d.Refresh(first)
		cancel()
		log.Info("kubernetes discovery ready", "clusters", len(clusters), "resources", d.Len(), "refresh", cfg.Kubernetes.DiscoveryRefresh)
		loop, stop := context.WithCancel(context.WithoutCancel(ctx))
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTimer(cfg.Kubernetes.DiscoveryRefresh)
			defer t.Stop()
			select {
			case <-loop.Done():
				return
			case <-t.C:
			}
			d.Run(loop, cfg.Kubernetes.DiscoveryRefresh)
		})
		o.stop = func() { stop(); wg.Wait() }
		o.mentions = d
		kubeChanges = kube.NewChanges(clusters, d)
	}

	var repos []changes.Repo
	for _, r := range cfg.Changes.GitRepos {
		repos = append(repos, changes.Repo{Name: r.Name, Path: r.Path})
	}
	cc := changes.Config{Inventory: inv, Executor: x, Kube: kubeChanges, GitRepos: repos}
	kubeOpts := []kube.Option{kube.WithIdentities(&cfg.Identities)}
	o.tools = []tools.Tool{
		metrics.New(sources, nil),
		alerts.New(ac),
		kube.New(clusters, nil, kubeOpts...),
		changes.New(cc),
	}
	o.parts = scopeParts{sources: sources, alerts: ac, clusters: clusters, kubeOpts: kubeOpts, changes: cc}
	return o, nil
}

// stopper runs a function on Close.
type stopper func()

func (s stopper) Close() error { s(); return nil }
