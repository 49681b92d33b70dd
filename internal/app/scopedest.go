package app

import (
	"log/slog"
	"strings"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
)

// destinationMap is the one table the gate places a shell command's
// destinations with for channel scopes (policy/scopedest.go): each
// datasource's and cluster API server's host:port, each inventory
// machine's names, and as open (no scope kind) every other destination
// the classifier knows from o, the classifier's options, and
// policy.http_read_urls. Built once at start.
func destinationMap(cfg *config.Config, inv *inventory.Inventory, o command.Options, log *slog.Logger) *policy.DestinationMap {
	m := policy.NewDestinationMap()
	warn := func(err error) {
		if err != nil {
			log.Warn("scope: a destination is not placed; scoped channels refuse shell commands reaching it", "err", err)
		}
	}
	for _, p := range cfg.Observability.Prometheus {
		if d, ok := command.URLDestination(p.URL); ok {
			warn(m.AddDatasource(p.Name, d))
		}
	}
	if d, ok := command.URLDestination(cfg.Observability.Alertmanager.URL); ok {
		warn(m.AddDatasource(policy.AlertmanagerDatasource, d))
	}
	for _, k := range cfg.Kubernetes.Clusters {
		d, err := kubeAPIServer(k)
		if err != nil {
			continue // not a known destination either (commandOptions)
		}
		warn(m.AddCluster(k.Name, k.Context, d))
	}
	if inv != nil {
		for _, r := range inv.All() {
			switch r.Kind {
			case inventory.KindNode, inventory.KindHost, inventory.KindVM, inventory.KindLXC:
			default:
				continue // as in commandOptions: only machines are destinations
			}
			reaches, ok := inv.ScopeReaches(string(r.ID))
			if !ok || len(reaches) == 0 {
				continue
			}
			names := append([]string{r.Name}, r.Aliases...)
			if r.Reach.SSH != nil && r.Reach.SSH.Host != "" {
				names = append(names, r.Reach.SSH.Host)
			}
			for _, n := range names {
				m.AddHost(n, reaches[0])
			}
		}
	}
	for _, d := range o.Destinations {
		m.AddOpen(d)
	}
	for svc, ds := range o.Services {
		if svc == "kubernetes" || strings.HasPrefix(svc, "kubernetes/") {
			continue // a cluster's API server is placed by AddCluster; another is unknown
		}
		for _, d := range ds {
			m.AddOpen(d)
		}
	}
	for _, u := range cfg.Policy.HTTPReadURLs {
		if d, ok := command.URLDestination(u); ok {
			m.AddOpen(d)
		}
	}
	return m
}
