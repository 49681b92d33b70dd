package redistest

import (
	"context"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// MasterName is the name the Sentinels monitor the master under.
const MasterName = "vigil-master"

// Sentinels is a master, its replica and three Sentinels watching them
// (quorum 2), all private servers.
type Sentinels struct {
	t         testing.TB
	Master    *Server
	Replica   *Server
	Sentinels []*Server
	// DownAfter is the Sentinels' down-after-milliseconds.
	DownAfter time.Duration
}

// StartSentinels starts the master and replica (append-only, fsync
// always), waits for the replica to sync, starts three Sentinels with
// down-after-milliseconds downAfter, and waits until each knows the
// replica and the other two Sentinels, so a failover can happen.
func StartSentinels(t testing.TB, downAfter time.Duration) *Sentinels {
	t.Helper()
	ss := &Sentinels{t: t, DownAfter: downAfter}
	ss.Master = Start(t, Options{Persist: true})
	ss.Replica = Start(t, Options{Persist: true, Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(ss.Master.Port())}})
	waitUntil(t, 15*time.Second, "the replica to sync", func() (bool, string) {
		st, err := ss.Replica.Info("replication", "master_link_status")
		if err != nil {
			return false, err.Error()
		}
		return st == "up", "master_link_status:" + st
	})
	conf := []string{
		"sentinel monitor " + MasterName + " 127.0.0.1 " + strconv.Itoa(ss.Master.Port()) + " 2",
		"sentinel down-after-milliseconds " + MasterName + " " + strconv.FormatInt(downAfter.Milliseconds(), 10),
		"sentinel failover-timeout " + MasterName + " 10000",
		"sentinel parallel-syncs " + MasterName + " 1",
	}
	for range 3 {
		ss.Sentinels = append(ss.Sentinels, Start(t, Options{Sentinel: conf}))
	}
	for _, s := range ss.Sentinels {
		waitUntil(t, 20*time.Second, "Sentinel "+s.Addr()+" to know the replica and its peers", func() (bool, string) {
			v, err := s.Do("SENTINEL", "MASTER", MasterName)
			if err != nil {
				return false, err.Error()
			}
			m := fields(v)
			return m["num-slaves"] == "1" && m["num-other-sentinels"] == "2", "num-slaves " + m["num-slaves"] + ", num-other-sentinels " + m["num-other-sentinels"]
		})
	}
	return ss
}

// fields turns a SENTINEL MASTER reply (a flat list or a map) into a map.
func fields(v any) map[string]string {
	out := map[string]string{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			k, _ := x[i].(string)
			val, _ := x[i+1].(string)
			out[k] = val
		}
	case map[any]any:
		for k, val := range x {
			ks, _ := k.(string)
			vs, _ := val.(string)
			out[ks] = vs
		}
	}
	return out
}

// Addrs are the Sentinels' addresses.
func (ss *Sentinels) Addrs() []string {
	out := make([]string, len(ss.Sentinels))
	for i, s := range ss.Sentinels {
		out[i] = s.Addr()
	}
	return out
}

// MasterAddr is the master's address as the first Sentinel that answers
// reports it.
func (ss *Sentinels) MasterAddr() (string, error) {
	var last error
	for _, s := range ss.Sentinels {
		c := goredis.NewSentinelClient(&goredis.Options{Addr: s.Addr(), DisableIdentity: true, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		addr, err := c.GetMasterAddrByName(ctx, MasterName).Result()
		cancel()
		_ = c.Close()
		if err == nil && len(addr) == 2 {
			return addr[0] + ":" + addr[1], nil
		}
		last = err
	}
	return "", last
}

// WaitPromoted waits until the Sentinels name the replica as master and it
// says so itself, and returns how long that took from since.
func (ss *Sentinels) WaitPromoted(since time.Time, timeout time.Duration) time.Duration {
	ss.t.Helper()
	waitUntil(ss.t, timeout, "the Sentinels to promote the replica", func() (bool, string) {
		addr, err := ss.MasterAddr()
		if err != nil {
			return false, err.Error()
		}
		role, _ := ss.Replica.Info("replication", "role")
		return addr == ss.Replica.Addr() && role == "master", "master " + addr + ", replica's role " + role
	})
	return time.Since(since)
}
