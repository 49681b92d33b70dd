package app

import (
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/vigilops/vigil/internal/config"
	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools/inventory"
)

// policyRules are the gate's rules: policy.* from the configuration, with
// the classifier told every destination vigil knows (SPEC R1): the
// configuration's (policy.read_destinations, declared commands' hosts, the
// datasources, vigil's own store as forbidden), the inventory's machines
// and the Kubernetes clusters' API servers.
func policyRules(cfg *config.Config, inv *inventory.Inventory, log *slog.Logger) policy.Rules {
	r := cfg.Policy.Rules()
	r.Command = commandOptions(cfg, inv, log)
	return r
}

// commandOptions builds the classifier's options; see policyRules.
func commandOptions(cfg *config.Config, inv *inventory.Inventory, log *slog.Logger) command.Options {
	o := cfg.CommandOptions()
	if inv != nil {
		for _, r := range inv.All() {
			switch r.Kind {
			case inventory.KindNode, inventory.KindHost, inventory.KindVM, inventory.KindLXC:
			default:
				continue // containers, pods and services are reached through their parent
			}
			names := append([]string{r.Name}, r.Aliases...)
			if r.Reach.SSH != nil && r.Reach.SSH.Host != "" {
				names = append(names, r.Reach.SSH.Host)
			}
			var group []string
			for _, n := range names {
				d, err := command.ParseDestination(n)
				if err != nil || d.Port != 0 {
					continue
				}
				o.Destinations = append(o.Destinations, d)
				group = append(group, d.Host)
			}
			if len(group) > 1 {
				o.Aliases = append(o.Aliases, group)
			}
		}
	}
	for _, k := range cfg.Kubernetes.Clusters {
		d, err := kubeAPIServer(k)
		if err != nil {
			log.Warn("kubernetes cluster's API server is not a known destination for shell reads (kubectl)", "cluster", k.Name, "err", err)
			continue
		}
		if o.Services == nil {
			o.Services = map[string][]command.Destination{}
		}
		o.Services["kubernetes"] = append(o.Services["kubernetes"], d)
		if k.Context != "" {
			o.Services["kubernetes/"+k.Context] = append(o.Services["kubernetes/"+k.Context], d)
		}
	}
	return o
}

// kubeAPIServer is the host and port of a configured cluster's API
// server: from its kubeconfig and context, or the service account's
// environment in a pod.
func kubeAPIServer(k config.KubeCluster) (command.Destination, error) {
	var server string
	if k.InCluster {
		server = "https://" + net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	} else {
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: k.Kubeconfig}
		rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context}).ClientConfig()
		if err != nil {
			return command.Destination{}, err
		}
		server = rc.Host
	}
	u, err := url.Parse(server)
	if err != nil {
		return command.Destination{}, err
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	if _, err := strconv.Atoi(port); err != nil {
		return command.Destination{}, err
	}
	return command.ParseDestination(net.JoinHostPort(u.Hostname(), port))
}
