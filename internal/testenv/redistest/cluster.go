package redistest

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of private servers: Masters, each with
// ReplicasPer replicas.
type Cluster struct {
	t     testing.TB
	Nodes []*Server
}

// StartCluster starts masters*(1+replicasPer) cluster-enabled servers,
// joins them with `redis-cli --cluster create`, and waits until every
// node reports cluster_state:ok. Each master owns about 16384/masters
// slots.
func StartCluster(t testing.TB, masters, replicasPer int) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("this test creates a Redis Cluster with redis-cli, which is not installed: %v\n"+
			"install it with:  apt-get install redis-server   (or run .ci/run)", err)
	}
	c := &Cluster{t: t}
	n := masters * (1 + replicasPer)
	args := []string{"--cluster", "create"}
	for range n {
		s := Start(t, Options{Bus: true, Args: []string{
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000",
		}})
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPer), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, s := range c.Nodes {
		waitUntil(t, 20*time.Second, "cluster_state:ok on "+s.Addr(), func() (bool, string) {
			v, err := s.Do("CLUSTER", "INFO")
			if err != nil {
				return false, err.Error()
			}
			text, _ := v.(string)
			return strings.Contains(text, "cluster_state:ok"), text
		})
	}
	if replicasPer > 0 {
		for _, s := range c.Nodes {
			waitUntil(t, 20*time.Second, "replication links in the Cluster", func() (bool, string) {
				role, err := s.Info("replication", "role")
				if err != nil {
					return false, err.Error()
				}
				if role == "master" {
					n, _ := s.Info("replication", "connected_slaves")
					return n == strconv.Itoa(replicasPer), "connected_slaves:" + n
				}
				st, _ := s.Info("replication", "master_link_status")
				return st == "up", "master_link_status:" + st
			})
		}
	}
	return c
}

// Addrs are every node's address, the seed list for a client.
func (c *Cluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		out[i] = s.Addr()
	}
	return out
}

// Client is a go-redis Cluster client, closed at cleanup.
func (c *Cluster) Client() *goredis.ClusterClient {
	cc := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: c.Addrs(), DisableIdentity: true})
	c.t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// Masters are the nodes that are masters now.
func (c *Cluster) Masters() []*Server {
	var out []*Server
	for _, s := range c.Nodes {
		if role, err := s.Info("replication", "role"); err == nil && role == "master" {
			out = append(out, s)
		}
	}
	return out
}
