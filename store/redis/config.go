package redis

import (
	"fmt"
	"net"
	"time"

	"github.com/vigilops/vigil/confkey"
)

// Config is the store.redis section of vigil's configuration file (the
// mapstructure tags are its keys): where the shared store is and how to
// reach it. Its rules live here once: Validate. Options adds what only
// code supplies (the audit keys, a logger, tuning).
type Config struct {
	// Addr is one server's host:port.
	Addr string `mapstructure:"addr"`
	// Addrs follow go-redis's UniversalClient rule: with MasterName they
	// are Sentinels; else more than one address is a Redis Cluster.
	Addrs []string `mapstructure:"addrs"`
	// MasterName is the master's name in Sentinel.
	MasterName string `mapstructure:"master_name"`
	// SentinelPassword authenticates to the Sentinels.
	SentinelPassword confkey.Secret `mapstructure:"sentinel_password"`
	// ReplicaAckTimeout bounds the wait for a replica to acknowledge a
	// write that must survive a failover.
	ReplicaAckTimeout time.Duration  `mapstructure:"replica_ack_timeout"`
	Password          confkey.Secret `mapstructure:"password"`
	DB                int            `mapstructure:"db"`
	TLS               bool           `mapstructure:"tls"`
	KeyPrefix         string         `mapstructure:"key_prefix"`
	// PoolSize is the most connections to Redis (0: 10 per CPU).
	PoolSize int `mapstructure:"pool_size"`
}

// Validate checks the topology and every key without I/O, reporting
// every problem as *confkey.Error values naming the keys of the
// store.redis section.
func (c Config) Validate() error {
	es := confkey.NewErrors("store.redis")
	if len(c.Addrs) > 0 && c.Addr != "" {
		es.Add("addr", "is set together with store.redis.addrs; keep addr for one server, or addrs for a Cluster or Sentinels, and remove the other")
	}
	for i, a := range c.Addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			es.Add(fmt.Sprintf("addrs[%d]", i), "is not host:port")
		}
	}
	switch {
	case len(c.Addrs) == 0 && c.Addr == "":
		es.Add("addr", "is empty; set host:port of the Redis server")
	case len(c.Addrs) == 0 && c.MasterName != "":
		es.Add("master_name", "is set but store.redis.addrs is empty; list the Sentinels' host:port in addrs")
	case c.MasterName == "" && c.SentinelPassword != "":
		es.Add("sentinel_password", "is set without store.redis.master_name; name the Sentinel master, or remove the password")
	case c.MasterName == "" && len(c.Addrs) > 1 && c.DB != 0:
		es.Add("db", "must be 0 with a Redis Cluster (more than one address in store.redis.addrs and no master_name)")
	}
	if c.DB < 0 {
		es.Add("db", "must not be negative")
	}
	if err := validPrefix(c.KeyPrefix); err != nil {
		es.Add("key_prefix", "%v", err)
	}
	if c.PoolSize < 0 {
		es.Add("pool_size", "must not be negative (0 means 10 per CPU)")
	}
	return es.Err()
}

// Options are the options New takes for this configuration; the caller
// adds what only code supplies (AuditKeys, Logger).
func (c Config) Options() Options {
	return Options{
		Addr: c.Addr, Addrs: c.Addrs, MasterName: c.MasterName,
		SentinelPassword: c.SentinelPassword.Reveal(), ReplicaAckTimeout: c.ReplicaAckTimeout,
		Password: c.Password.Reveal(), DB: c.DB, TLS: c.TLS, KeyPrefix: c.KeyPrefix, PoolSize: c.PoolSize,
	}
}
