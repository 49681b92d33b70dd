package command

import "strings"

// Content inspectors (SPEC P1 phase 4): dual-use clients whose arguments
// carry the real command. Their results are read_only_conditional: the
// client was proven to send only reading statements, not proven unable to
// write.
var inspectCheckers = map[string]checkFunc{
	"mysql":      checkMySQL,
	"mariadb":    checkMySQL,
	"psql":       checkPsql,
	"sqlite3":    checkSQLite,
	"redis-cli":  checkRedis,
	"valkey-cli": checkRedis,
	"keydb-cli":  checkRedis,
}

// inspectSQL records the verdict about one SQL string.
func (c *classifier) inspectSQL(k *call, sql string, d sqlDialect) bool {
	ok, what, risk := sqlReadOnly(sql, d)
	if !ok {
		c.inspected(k.name, true, risk, "SQL not provably read-only ("+what+")")
		return false
	}
	c.inspected(k.name, false, RiskReadOnly, what+" is read-only")
	return true
}

// noSQL handles a client given no SQL to inspect: it reads statements from
// stdin, which is unknown, or waits for a person.
func (c *classifier) noSQL(k *call) {
	if k.ctx.fed {
		c.unknown(k.name, "reads statements from stdin")
		return
	}
	c.unknown(k.name, "interactive client")
	c.unbounded(k.ctx, BoundInteractiveREPL, "")
}

var mysqlSpec = optSpec{
	shortArg:    "DehPSu",
	shortOptArg: "p#",
	longArg: []string{"execute", "host", "user", "port", "database", "socket", "default-character-set",
		"connect-timeout", "protocol", "ssl-ca", "ssl-cert", "ssl-key", "ssl-mode", "init-command",
		"max-allowed-packet", "net-buffer-length", "login-path", "pager", "tee", "defaults-file",
		"defaults-extra-file", "plugin-dir", "default-auth", "load-data-local-dir", "read-timeout",
		"write-timeout", "compression-algorithms", "ssl-capath", "ssl-cipher", "tls-version"},
}

// checkMySQL inspects every -e/--execute (and --init-command) string.
func checkMySQL(c *classifier, k *call) {
	var sqls []string
	s := scanOpts(&mysqlSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown(k.name, "dynamic argument")
			return
		case tokOperand:
			continue // the database name
		}
		switch t.name {
		case "e", "execute", "init-command":
			if !t.valStatic {
				c.unknown(k.name+" -e", "dynamic SQL")
				return
			}
			sqls = append(sqls, t.val)
		case "tee", "T":
			c.writer(k.name+" --tee", RiskLow, "writes a file")
			return
		case "pager":
			c.construct(k.name+" --pager", RiskMedium, "runs a program")
			return
		case "h", "host", "u", "user", "P", "port", "D", "database", "S", "socket", "p", "password",
			"default-character-set", "connect-timeout", "protocol", "ssl-ca", "ssl-cert", "ssl-key",
			"ssl-mode", "max-allowed-packet", "net-buffer-length", "login-path", "read-timeout",
			"write-timeout", "ssl-capath", "ssl-cipher", "tls-version", "compression-algorithms",
			"B", "batch", "N", "skip-column-names", "s", "silent", "t", "table", "r", "raw", "E",
			"vertical", "H", "html", "X", "xml", "A", "no-auto-rehash", "skip-auto-rehash", "v",
			"verbose", "f", "force", "C", "compress", "q", "quick", "U", "safe-updates",
			"i-am-a-dummy", "column-names", "line-numbers", "skip-line-numbers", "L",
			"unbuffered", "n", "no-beep", "b", "sigint-ignore", "ssl", "skip-ssl", "V", "version",
			"binary-as-hex", "skip-pager", "no-pager", "wait", "w", "reconnect", "skip-reconnect":
		default:
			c.badOption(k, t)
			return
		}
	}
	if len(sqls) == 0 {
		c.noSQL(k)
		return
	}
	for _, sql := range sqls {
		if !c.inspectSQL(k, sql, sqlMySQL) {
			return
		}
	}
}

var psqlSpec = optSpec{
	shortArg: "cdfhpUvoLPFRT",
	longArg: []string{"command", "dbname", "file", "host", "port", "username", "variable", "set",
		"output", "log-file", "pset", "field-separator", "record-separator", "table-attr"},
}

// psqlReadMeta are psql meta-commands that only describe the database.
var psqlReadMeta = wordSet(`\d \d+ \dt \dt+ \di \di+ \dv \dv+ \dm \dm+ \ds \ds+ \dn \dn+ \du \du+
	\dg \dg+ \l \l+ \list \dx \dx+ \df \df+ \db \db+ \dp \z \dE \dD \dT \dC \dc \dd \dy \dRp \dRs
	\conninfo \encoding \drds \dconfig \dconfig+ \dP \dP+ \dX \dL \dF \des \deu \dew \det`)

// checkPsql inspects every -c/--command string; -l lists databases; -f,
// -o, -L and stdin are unknown or write.
func checkPsql(c *classifier, k *call) {
	var sqls []string
	list := false
	s := scanOpts(&psqlSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown("psql", "dynamic argument")
			return
		case tokOperand:
			continue // dbname and user
		}
		switch t.name {
		case "c", "command":
			if !t.valStatic {
				c.unknown("psql -c", "dynamic SQL")
				return
			}
			sqls = append(sqls, t.val)
		case "l", "list":
			list = true
		case "f", "file":
			c.unknown("psql -f", "SQL in a file")
			return
		case "o", "output", "L", "log-file":
			c.writer("psql "+optText(t), RiskLow, "writes a file")
			return
		case "d", "dbname", "h", "host", "p", "port", "U", "username", "v", "variable", "set",
			"P", "pset", "F", "field-separator", "R", "record-separator", "T", "table-attr",
			"a", "echo-all", "A", "no-align", "b", "echo-errors", "e", "echo-queries", "E",
			"echo-hidden", "H", "html", "n", "no-readline", "q", "quiet", "S", "single-line",
			"t", "tuples-only", "w", "no-password", "W", "password", "x", "expanded", "X",
			"no-psqlrc", "z", "field-separator-zero", "0", "record-separator-zero", "csv",
			"V", "version", "1", "single-transaction":
		default:
			c.badOption(k, t)
			return
		}
	}
	if len(sqls) == 0 {
		if list {
			c.inspected("psql", false, RiskReadOnly, "-l lists databases")
			return
		}
		c.noSQL(k)
		return
	}
	for _, sql := range sqls {
		trimmed := strings.TrimSpace(sql)
		if strings.HasPrefix(trimmed, `\`) {
			// A -c string is either SQL or one meta-command.
			cmd, _, _ := strings.Cut(trimmed, " ")
			if !psqlReadMeta[cmd] || strings.Count(trimmed, `\`) != 1 {
				c.inspected("psql", true, RiskMedium, "meta-command "+cmd+" not known to be read-only")
				return
			}
			c.inspected("psql", false, RiskReadOnly, cmd+" is read-only")
			continue
		}
		if !c.inspectSQL(k, sql, sqlPostgres) {
			return
		}
	}
}

// sqliteFlags and sqliteValued are sqlite3's options (one dash or two).
var (
	sqliteFlags = wordSet(`append ascii bail batch box column csv echo header noheader html json
		line list markdown memtrace nofollow quote readonly safe stats table tabs version help
		deserialize pcachetrace`)
	sqliteValued = wordSet(`escape maxsize mmap newline nonce nullvalue separator vfs`)
	// sqliteReadDot are dot-commands that only show the database.
	sqliteReadDot = wordSet(`.tables .table .schema .fullschema .indexes .indices .databases
		.dbinfo .headers .header .mode .show .help .print .width .separator .nullvalue .timer
		.eqp .changes .dump .lint .version .sha3sum .timeout .echo .bail .limit .vfsinfo
		.vfslist .vfsname .dbtotxt`)
)

// checkSQLite: "sqlite3 [options] DB [SQL|.cmd]..." inspects each SQL
// argument and allows only dot-commands that show things.
func checkSQLite(c *classifier, k *call) {
	db := false
	inspected := 0
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("sqlite3", "dynamic argument")
			return
		}
		s := a.s
		if !db && strings.HasPrefix(s, "-") && len(s) > 1 {
			name := strings.TrimLeft(s, "-")
			switch {
			case sqliteFlags[name]:
			case sqliteValued[name]:
				i++
			case name == "lookaside" || name == "pagecache":
				i += 2
			case name == "cmd":
				if i+1 >= len(k.args) || !k.args[i+1].static || !c.inspectSQLiteArg(k, k.args[i+1].s) {
					if i+1 >= len(k.args) || !k.args[i+1].static {
						c.unknown("sqlite3 -cmd", "dynamic command")
					}
					return
				}
				inspected++
				i++
			default:
				c.unknown("sqlite3 "+s, "option not known to be read-only")
				return
			}
			continue
		}
		if !db {
			db = true
			continue
		}
		if !c.inspectSQLiteArg(k, s) {
			return
		}
		inspected++
	}
	if inspected == 0 {
		c.noSQL(k)
	}
}

// inspectSQLiteArg inspects one SQL or dot-command argument.
func (c *classifier) inspectSQLiteArg(k *call, s string) bool {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, ".") {
		cmd := t
		if i := strings.IndexAny(t, " \t"); i >= 0 {
			cmd = t[:i]
		}
		if !sqliteReadDot[cmd] || strings.ContainsAny(t, "\n;|") {
			c.inspected("sqlite3", true, RiskMedium, "dot-command "+cmd+" not known to be read-only")
			return false
		}
		c.inspected("sqlite3", false, RiskReadOnly, cmd+" is read-only")
		return true
	}
	return c.inspectSQL(k, s, sqlSQLite)
}

// redisTool is redis-cli (and valkey-cli, keydb-cli): options, then one
// command whose words are sent as they are.
var redisTool = &tool{
	name: "redis-cli", style: styleExactStop, net: true,
	opts: opts(
		reads(`-h= -p= -s= -a= -u= -n= -d= -D= --user= --pass= --sni= --cacert= --cacertdir= --cert=
			--key= --tls-ciphers= --tls-ciphersuites= --tls --insecure --raw --no-raw --csv --json
			--quoted-json --quoted-input --no-auth-warning -c -e -2 -3 -4 -6 -t= --verbose --pattern=
			--quoted-pattern= --count= --memkeys-samples= --keystats-samples= --top= -i= --show-pushes
			--resp2 --resp3 -r= --scan --bigkeys --memkeys --hotkeys --keystats --intrinsic-latency=
			--version --help --stat --latency --latency-history --latency-dist --replica --slave`),
		writes(RiskLow, "writes a file", `--rdb= --functions-rdb=`),
		nets("sends its stdin to the server", `-x -X= --pipe --pipe-timeout=`),
		unknowns("mode not known to be read-only", `--eval= --ldb --ldb-sync-mode --lru-test= --cluster
			--askpass --cluster-yes`),
	),
	check: checkRedisMode,
}

// checkRedis: options first, then one command; only read commands pass.
// --scan, --bigkeys and friends read; --stat, --latency, MONITOR and
// SUBSCRIBE read forever; --pipe, --eval, --rdb and the rest are unknown or
// write.
func checkRedis(c *classifier, k *call) { c.runTool(k, redisTool) }

func checkRedisMode(c *classifier, k *call) {
	forever := false
	if u := k.p.last("r"); u != nil {
		forever = !u.val.static || strings.HasPrefix(u.val.s, "-")
	}
	if len(k.p.ops) > 0 {
		c.redisCommand(k, k.args[k.p.ops[0]:], forever)
		return
	}
	for _, mode := range []string{"stat", "latency", "latency-history", "latency-dist", "replica", "slave"} {
		if k.p.has(mode) {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
			c.inspected(k.name, false, RiskReadOnly, "--"+mode+" is read-only")
			return
		}
	}
	for _, mode := range []string{"scan", "bigkeys", "memkeys", "hotkeys", "keystats", "intrinsic-latency", "version", "help"} {
		if k.p.has(mode) {
			c.inspected(k.name, false, RiskReadOnly, "--"+mode+" is read-only")
			return
		}
	}
	c.noSQL(k)
}

// redisReads are Redis commands that only read; redisReadSubs are
// container commands whose listed subcommands read.
var (
	redisReads = wordSet(`GET MGET KEYS SCAN SSCAN HSCAN ZSCAN INFO TTL PTTL EXPIRETIME
		PEXPIRETIME TYPE EXISTS HGET HMGET HGETALL HKEYS HVALS HLEN HEXISTS HSTRLEN HRANDFIELD
		LRANGE LLEN LINDEX LPOS SMEMBERS SCARD SISMEMBER SMISMEMBER SRANDMEMBER SINTER SUNION
		SDIFF SINTERCARD ZRANGE ZRANGEBYSCORE ZRANGEBYLEX ZREVRANGE ZREVRANGEBYSCORE
		ZREVRANGEBYLEX ZCARD ZSCORE ZMSCORE ZRANK ZREVRANK ZCOUNT ZLEXCOUNT ZRANDMEMBER ZINTER
		ZUNION ZDIFF ZINTERCARD STRLEN GETRANGE SUBSTR DBSIZE PING ECHO TIME LASTSAVE ROLE
		RANDOMKEY XLEN XRANGE XREVRANGE XPENDING GEOPOS GEODIST GEOHASH GEOSEARCH
		GEORADIUS_RO GEORADIUSBYMEMBER_RO BITCOUNT BITPOS GETBIT BITFIELD_RO DUMP OBJECT
		LOLWUT SORT_RO LCS`)
	redisStreams  = wordSet(`MONITOR SUBSCRIBE PSUBSCRIBE SSUBSCRIBE`)
	redisReadSubs = map[string]map[string]bool{
		"CONFIG":   wordSet("GET HELP"),
		"CLIENT":   wordSet("LIST INFO GETNAME ID TRACKINGINFO GETREDIR HELP"),
		"SLOWLOG":  wordSet("GET LEN HELP"),
		"LATENCY":  wordSet("LATEST HISTORY DOCTOR GRAPH HISTOGRAM HELP"),
		"MEMORY":   wordSet("USAGE STATS DOCTOR MALLOC-STATS HELP"),
		"CLUSTER":  wordSet("INFO NODES SLOTS SHARDS MYID MYSHARDID KEYSLOT COUNTKEYSINSLOT GETKEYSINSLOT LINKS REPLICAS SLAVES COUNT-FAILURE-REPORTS HELP"),
		"COMMAND":  wordSet("COUNT INFO DOCS LIST GETKEYS GETKEYSANDFLAGS HELP"),
		"MODULE":   wordSet("LIST HELP"),
		"FUNCTION": wordSet("LIST STATS DUMP HELP"),
		"SCRIPT":   wordSet("EXISTS HELP"),
		"PUBSUB":   wordSet("CHANNELS NUMSUB NUMPAT SHARDCHANNELS SHARDNUMSUB HELP"),
		"ACL":      wordSet("WHOAMI LIST USERS CAT GETUSER DRYRUN HELP"),
		"SENTINEL": wordSet("MASTERS MASTER REPLICAS SLAVES SENTINELS GET-MASTER-ADDR-BY-NAME CKQUORUM INFO-CACHE MYID HELP"),
		"XINFO":    wordSet("STREAM GROUPS CONSUMERS HELP"),
	}
	redisHigh = wordSet(`FLUSHALL FLUSHDB SHUTDOWN DEBUG DEL UNLINK SWAPDB REPLICAOF SLAVEOF FAILOVER`)
)

// redisCommand inspects the command words of a redis-cli call.
func (c *classifier) redisCommand(k *call, words []arg, forever bool) {
	cmd := strings.ToUpper(words[0].s)
	if !words[0].static {
		c.unknown(k.name, "dynamic command")
		return
	}
	name := k.name + " " + cmd
	switch {
	case redisReads[cmd]:
	case redisStreams[cmd]:
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	case redisReadSubs[cmd] != nil:
		sub := ""
		if len(words) > 1 && words[1].static {
			sub = strings.ToUpper(words[1].s)
		}
		if cmd == "COMMAND" && len(words) == 1 {
			break
		}
		if !redisReadSubs[cmd][sub] {
			c.inspected(name+" "+sub, true, RiskMedium, "command writes")
			return
		}
		name += " " + sub
	default:
		risk := RiskMedium
		if redisHigh[cmd] {
			risk = RiskHigh
		}
		c.inspected(name, true, risk, "command writes")
		return
	}
	if forever {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.inspected(name, false, RiskReadOnly, "read-only")
}
