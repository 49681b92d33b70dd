package command

import (
	"strconv"
	"strings"

	"github.com/vigilops/vigil/policy/command/sqlcheck"
)

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

// mysqlCharsets are client character sets in which every byte below 0x80 is
// the ASCII character it looks like wherever it stands; in GBK, Big5 or
// SJIS a backslash or backtick can be half of a character.
var mysqlCharsets = wordSet(`utf8 utf8mb3 utf8mb4 latin1 ascii`)

// checkMySQL inspects every -e/--execute string the way the client reads it
// (client commands first, then each statement it sends), and every
// --init-command string, which goes to the server as it is.
func checkMySQL(c *classifier, k *call) {
	var execute, init []string
	var host, port, protocol string
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
				c.unknown(k.name+" "+optText(t), "dynamic SQL")
				return
			}
			if t.name == "init-command" {
				init = append(init, t.val)
			} else {
				execute = append(execute, t.val)
			}
		case "tee", "T":
			c.writer(k.name+" --tee", RiskLow, "writes a file")
			return
		case "pager":
			c.construct(k.name+" --pager", RiskMedium, "runs a program")
			return
		case "default-character-set":
			if !t.valStatic || !mysqlCharsets[strings.ToLower(t.val)] {
				c.unknown(k.name+" --default-character-set", "a multi-byte character set changes how SQL splits into tokens")
				return
			}
		case "login-path":
			c.writer(k.name+" --login-path", RiskMedium, "reads the server to connect to from a file, so the destination cannot be told")
			return
		case "h", "host":
			host = t.val
		case "P", "port":
			port = t.val
		case "protocol":
			protocol = t.val
		case "u", "user", "D", "database", "S", "socket", "p", "password",
			"connect-timeout", "ssl-ca", "ssl-cert", "ssl-key",
			"ssl-mode", "max-allowed-packet", "net-buffer-length", "read-timeout",
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
	if len(execute) == 0 && len(init) == 0 {
		c.noSQL(k)
		return
	}
	if !c.mysqlDestination(k, host, port, protocol) {
		return
	}
	d := sqlcheck.MySQL
	if k.name == "mariadb" {
		d = sqlcheck.MariaDB
	}
	for _, sql := range init {
		if !c.inspectSQL(k, sql, d) {
			return
		}
	}
	if len(execute) == 0 {
		c.noSQL(k)
		return
	}
	// Each -e alone, and all of them as the one input the client reads.
	texts := execute
	if len(execute) > 1 {
		texts = append(texts[:len(texts):len(texts)], strings.Join(execute, "\n"))
	}
	for _, text := range texts {
		if !c.inspectMySQLInput(k, text, d) {
			return
		}
	}
}

// inspectMySQLInput decides one input of the mysql client, read with and
// without backslash escapes in strings.
func (c *classifier) inspectMySQLInput(k *call, text string, d sqlcheck.Dialect) bool {
	for _, escapes := range []bool{true, false} {
		if !escapes && !strings.Contains(text, `\`) {
			break // without a backslash both readings are the same
		}
		in := mysqlClient(text, escapes)
		if in.command != "" {
			c.inspected(k.name, true, RiskMedium, "client command "+in.command+" runs in the client, not as SQL")
			return false
		}
		if len(in.statements) == 0 {
			c.inspected(k.name, true, RiskMedium, "no SQL statement")
			return false
		}
		for _, stmt := range in.statements {
			if !c.inspectSQL(k, stmt, d) {
				return false
			}
		}
	}
	return true
}

var psqlSpec = optSpec{
	shortArg: "cdfhpUvoLPFRT",
	longArg: []string{"command", "dbname", "file", "host", "port", "username", "variable", "set",
		"output", "log-file", "pset", "field-separator", "record-separator", "table-attr"},
}

// psqlVariables may be set with -v: they change only how psql reports.
// Other variables are not known to be harmless (SINGLESTEP waits for a
// person; special variables change what psql does).
var psqlVariables = wordSet(`ON_ERROR_STOP QUIET VERBOSITY SHOW_CONTEXT FETCH_COUNT ECHO
	ECHO_HIDDEN HIDE_TABLEAM HIDE_TOAST_COMPRESSION SHOW_ALL_RESULTS`)

// psqlPsets may be set with -P: output formatting only. pager is allowed
// only when turned off.
var psqlPsets = wordSet(`format border expanded x null fieldsep fieldsep_zero recordsep
	recordsep_zero tuples_only title footer numericlocale linestyle unicode_border_linestyle
	unicode_column_linestyle unicode_header_linestyle csv_fieldsep tableattr columns
	xheader_width`)

// checkPsql inspects every -c/--command string: one that starts with a
// backslash is a single meta-command, anything else goes to the server as
// SQL (psql interpolates nothing in it). -l lists databases; -f, -o, -L
// and stdin are unknown or write.
func checkPsql(c *classifier, k *call) {
	var cmds []string
	list := false
	conn, operands := pgConn{}, 0
	var host, port string
	s := scanOpts(&psqlSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown("psql", "dynamic argument")
			return
		case tokOperand:
			// dbname (or a connection string), then the user name.
			if operands++; operands == 1 && !c.pgConnString(k, t.val, &conn) {
				return
			}
			continue
		}
		switch t.name {
		case "h", "host":
			host = t.val
		case "p", "port":
			port = t.val
		case "d", "dbname":
			if !c.pgConnString(k, t.val, &conn) {
				return
			}
		case "c", "command":
			if !t.valStatic {
				c.unknown("psql -c", "dynamic SQL")
				return
			}
			cmds = append(cmds, t.val)
		case "l", "list":
			list = true
		case "f", "file":
			c.unknown("psql -f", "SQL in a file")
			return
		case "o", "output", "L", "log-file":
			c.writer("psql "+optText(t), RiskLow, "writes a file")
			return
		case "v", "variable", "set":
			name, _, _ := strings.Cut(t.val, "=")
			if !t.valStatic || !psqlVariables[name] {
				c.unknown("psql "+optText(t)+" "+name, "variable not known to be harmless")
				return
			}
		case "P", "pset":
			name, val, _ := strings.Cut(t.val, "=")
			off := name == "pager" && (val == "off" || val == "0" || val == "false" || val == "no")
			if !t.valStatic || !psqlPsets[name] && !off {
				c.unknown("psql "+optText(t)+" "+name, "setting not known to be harmless")
				return
			}
		case "U", "username",
			"F", "field-separator", "R", "record-separator", "T", "table-attr",
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
	if len(cmds) == 0 && !list {
		c.noSQL(k)
		return
	}
	// -h and -p win over the connection string's host and port.
	if host != "" {
		conn.hosts, conn.hostaddrs = host, ""
	}
	if port != "" {
		conn.ports = port
	}
	if !c.pgDestinations(k, conn) {
		return
	}
	if len(cmds) == 0 {
		c.inspected("psql", false, RiskReadOnly, "-l lists databases")
		return
	}
	for _, cmd := range cmds {
		// psql reads a -c string as a meta-command exactly when its first
		// character is a backslash.
		if strings.HasPrefix(cmd, `\`) {
			name, ok := psqlMeta(cmd)
			if !ok {
				c.inspected("psql", true, RiskMedium, "meta-command "+name+" is not a listed read-only command with literal arguments")
				return
			}
			c.inspected("psql", false, RiskReadOnly, "meta-command "+name+" is read-only")
			continue
		}
		if !c.inspectSQL(k, cmd, sqlcheck.PostgreSQL) {
			return
		}
	}
}

// sqliteFlags and sqliteValued are sqlite3's options (one dash or two), as
// `sqlite3 -help` lists them; -A (archive), -init (runs a file),
// -interactive, -zip and anything unlisted are not known to be read-only.
var (
	sqliteFlags = wordSet(`ascii bail batch box column csv echo header noheader html json
		line list markdown memtrace nofollow quote readonly safe stats table tabs version help
		pcachetrace`)
	sqliteValued = wordSet(`escape maxsize mmap newline nonce nullvalue separator vfs`)
)

// checkSQLite: "sqlite3 [options] DB [SQL|.cmd]..." inspects each SQL
// argument and allows only dot-commands that show things. sqlite3 reads an
// option wherever it stands, before or after the database.
func checkSQLite(c *classifier, k *call) {
	db := false
	dbName, readonly := "", false
	inspected := 0
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("sqlite3", "dynamic argument")
			return
		}
		s := a.s
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			name := strings.TrimPrefix(s[1:], "-")
			switch {
			case name == "readonly":
				readonly = true
			case sqliteFlags[name]:
			case sqliteValued[name]:
				i++
			case name == "lookaside" || name == "pagecache":
				i += 2
			case name == "cmd":
				if i+1 >= len(k.args) || !k.args[i+1].static {
					c.unknown("sqlite3 -cmd", "dynamic command")
					return
				}
				i++
				if !c.inspectSQLiteArg(k, k.args[i].s) {
					return
				}
				inspected++
			default:
				c.unknown("sqlite3 "+s, "option not known to be read-only")
				return
			}
			continue
		}
		if !db {
			db, dbName = true, s
			continue
		}
		if !c.inspectSQLiteArg(k, s) {
			return
		}
		inspected++
	}
	if inspected == 0 {
		c.noSQL(k)
		return
	}
	if db && !readonly && !sqliteReadOnlyName(dbName) {
		// sqlite3 opens its database read-write, creating the file when it
		// is missing.
		c.writer("sqlite3 "+dbName, RiskLow, "opens the database read-write and creates it when missing; add -readonly")
	}
}

// sqliteReadOnlyName reports a database that cannot be written or
// created: an in-memory one, or a file: URI with mode=ro or immutable=1.
func sqliteReadOnlyName(name string) bool {
	if name == "" || name == ":memory:" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "file:")
	if !ok {
		return false
	}
	_, query, _ := strings.Cut(rest, "?")
	if strings.Contains(query, "#") {
		query, _, _ = strings.Cut(query, "#")
	}
	ro := false
	for _, kv := range strings.Split(query, "&") {
		switch kv {
		case "mode=ro", "immutable=1":
			ro = true
		case "mode=rw", "mode=rwc", "mode=memory":
			return false
		}
	}
	return ro
}

// inspectSQLiteArg inspects one SQL or dot-command argument: sqlite3 runs
// an argument whose first character is "." as a dot-command, anything else
// as SQL.
func (c *classifier) inspectSQLiteArg(k *call, s string) bool {
	if strings.HasPrefix(s, ".") {
		name, ok := sqliteDot(s)
		if !ok {
			c.inspected("sqlite3", true, RiskMedium, "dot-command "+name+" is not a listed read-only command with literal arguments")
			return false
		}
		c.inspected("sqlite3", false, RiskReadOnly, "dot-command "+name+" is read-only")
		return true
	}
	// sqlite3 runs an SQL argument whole; a line starting with "." inside
	// it would be a dot-command to a shell that read arguments line by line.
	for _, line := range strings.Split(s, "\n")[1:] {
		if strings.HasPrefix(strings.TrimLeft(line, " \t\r\f"), ".") {
			c.inspected("sqlite3", true, RiskMedium, "a line of the SQL starts with a dot-command")
			return false
		}
	}
	return c.inspectSQL(k, s, sqlcheck.SQLite)
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
	if !c.redisDest(k) {
		return
	}
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

// redisDest records where redis-cli connects: -u redis://HOST:PORT, -h
// and -p, or 127.0.0.1:6379. A unix socket (-s) may be vigil's own store
// under another name, so it is refused. A version or help query connects
// nowhere.
func (c *classifier) redisDest(k *call) bool {
	if len(k.p.ops) == 0 && k.p.hasAny("version", "help") {
		c.localNet()
		return true
	}
	if k.p.has("s") {
		c.writer(k.name+" -s", RiskMedium, "connects to a unix socket, which may be vigil's own store; give -h and -p")
		return false
	}
	host, port := "127.0.0.1", 6379
	if u := k.p.last("u"); u != nil {
		rest, ok := strings.CutPrefix(strings.ToLower(u.val.s), "redis://")
		if !ok {
			rest, ok = strings.CutPrefix(strings.ToLower(u.val.s), "rediss://")
		}
		if !ok {
			c.writer(k.name+" -u "+u.val.s, RiskMedium, "URI must be redis:// or rediss://")
			return false
		}
		authority, _, _ := strings.Cut(rest, "/")
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			authority = authority[at+1:]
		}
		h, p, err := splitHostPort(authority)
		if err != nil {
			c.writer(k.name+" -u "+u.val.s, RiskMedium, "URI host: "+err.Error())
			return false
		}
		host = h
		if p != 0 {
			port = p
		}
	}
	if u := k.p.last("h"); u != nil {
		host = u.val.s
	}
	if u := k.p.last("p"); u != nil {
		n, err := strconv.Atoi(u.val.s)
		if err != nil || !isNumber(u.val.s) {
			c.writer(k.name+" -p "+u.val.s, RiskMedium, "port is not a number")
			return false
		}
		port = n
	}
	return c.destination(k, host, port)
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
