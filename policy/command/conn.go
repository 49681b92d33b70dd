package command

import (
	"strconv"
	"strings"
)

// Database connection parameters (SPEC R1). A libpq connection string
// (keyword=value pairs or a postgresql:// URI) is read key by key against
// an allowlist: keys that say where to connect and how to authenticate
// with what the command spells out. Any other key is a write: options
// changes server settings (search_path decides what the SQL calls),
// sslkeylogfile writes the TLS secrets to a file, passfile and
// service/servicefile read parameters or passwords from files,
// gssdelegation hands the local Kerberos credentials to the server, and
// replication changes the protocol.

// pgConnKeys are the libpq connection parameters a read may set.
var pgConnKeys = wordSet(`host hostaddr port dbname user password connect_timeout
	application_name fallback_application_name sslmode sslnegotiation sslcompression sslcert
	sslkey sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer
	ssl_min_protocol_version ssl_max_protocol_version gssencmode krbsrvname gsslib
	channel_binding require_auth target_session_attrs load_balance_hosts keepalives
	keepalives_idle keepalives_interval keepalives_count tcp_user_timeout client_encoding`)

// pgEncodings are client encodings in which every byte below 0x80 is the
// ASCII character it looks like (in SJIS, BIG5 or GBK a quote or
// backslash can be half of a character, which moves string boundaries).
var pgEncodings = wordSet(`utf8 sql_ascii latin1 latin9 unicode`)

// pgConn is where a PostgreSQL client connects: comma-separated hosts
// (or hostaddrs) and ports, as libpq takes them.
type pgConn struct {
	hosts, hostaddrs, ports string
}

// pgConnString reads a psql or pg_isready database argument: a plain
// database name, a keyword=value connection string or a postgresql://
// URI. It fills conn and returns false after recording a finding.
func (c *classifier) pgConnString(k *call, s string, conn *pgConn) bool {
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "postgresql://"), strings.HasPrefix(lower, "postgres://"):
		return c.pgURI(k, s[strings.Index(s, "://")+3:], conn)
	case strings.Contains(s, "="):
		return c.pgKeywords(k, s, conn)
	}
	return true // a database name
}

// pgKeywords reads keyword=value pairs separated by blanks; a value may be
// single-quoted, with \' and \\ escapes.
func (c *classifier) pgKeywords(k *call, s string, conn *pgConn) bool {
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		if i >= len(s) {
			return true
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			c.writer(k.name+" "+s, RiskMedium, "connection string not understood")
			return false
		}
		key := strings.TrimSpace(s[i : i+eq])
		i += eq + 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var val strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for ; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					val.WriteByte(s[i])
					continue
				}
				if s[i] == '\'' {
					closed = true
					i++
					break
				}
				val.WriteByte(s[i])
			}
			if !closed {
				c.writer(k.name+" "+s, RiskMedium, "connection string has an unterminated quote")
				return false
			}
		} else {
			for ; i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
		}
		if !c.pgParam(k, key, val.String(), conn) {
			return false
		}
	}
}

// pgURI reads the rest of a postgresql:// URI: [user[:password]@]
// [host][:port][,...][/dbname][?key=value&...].
func (c *classifier) pgURI(k *call, rest string, conn *pgConn) bool {
	rest, query, _ := strings.Cut(rest, "?")
	if strings.ContainsAny(rest, "%#") || strings.ContainsAny(query, "%#+") {
		c.writer(k.name+" "+rest, RiskMedium, "connection URI with escapes is not read")
		return false
	}
	netloc, _, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(netloc, '@'); at >= 0 {
		netloc = netloc[at+1:]
	}
	var hosts, ports []string
	for _, hp := range strings.Split(netloc, ",") {
		if hp == "" {
			continue
		}
		h, p, err := splitHostPort(hp)
		if err != nil {
			c.writer(k.name+" "+hp, RiskMedium, "connection URI host: "+err.Error())
			return false
		}
		hosts = append(hosts, h)
		if p != 0 {
			ports = append(ports, strconv.Itoa(p))
		} else {
			ports = append(ports, "")
		}
	}
	conn.hosts, conn.ports = strings.Join(hosts, ","), strings.Join(ports, ",")
	if query == "" {
		return true
	}
	for _, kv := range strings.Split(query, "&") {
		key, val, _ := strings.Cut(kv, "=")
		if !c.pgParam(k, key, val, conn) {
			return false
		}
	}
	return true
}

// pgParam vets one connection parameter.
func (c *classifier) pgParam(k *call, key, val string, conn *pgConn) bool {
	if !pgConnKeys[key] {
		c.writer(k.name+" "+key+"=", RiskMedium, "connection parameter not known to be harmless (options, passfile, service, sslkeylogfile and others set server options, read files or write them)")
		return false
	}
	switch key {
	case "host":
		conn.hosts = val
	case "hostaddr":
		conn.hostaddrs = val
	case "port":
		conn.ports = val
	case "client_encoding":
		if !pgEncodings[strings.ToLower(strings.ReplaceAll(val, "-", ""))] {
			c.writer(k.name+" client_encoding="+val, RiskMedium, "a multi-byte client encoding changes how SQL splits into tokens")
			return false
		}
	}
	return true
}

// pgDestinations records where a PostgreSQL client connects: each host
// (or hostaddr) with its port (5432 by default); a host that is a
// directory, or none, is a unix socket on this host.
func (c *classifier) pgDestinations(k *call, conn pgConn) bool {
	hosts := strings.Split(conn.hosts, ",")
	if conn.hostaddrs != "" {
		hosts = strings.Split(conn.hostaddrs, ",")
	}
	ports := strings.Split(conn.ports, ",")
	local := true
	for i, h := range hosts {
		if h == "" || strings.HasPrefix(h, "/") || strings.HasPrefix(h, "@") {
			continue // a unix socket directory
		}
		local = false
		p := ""
		switch {
		case len(ports) == len(hosts):
			p = ports[i]
		case len(ports) == 1:
			p = ports[0]
		}
		port := 5432
		if p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || !isNumber(p) {
				c.writer(k.name+" port "+p, RiskMedium, "port is not a number")
				return false
			}
			port = n
		}
		if !c.destination(k, h, port) {
			return false
		}
	}
	if local {
		c.localNet()
	}
	return true
}

// mysqlDestination records where a MySQL client connects: -h HOST with
// -P PORT (3306) over TCP; no host, or localhost without --protocol=TCP,
// is the unix socket. A login path (--login-path) reads the host from a
// file, so the destination cannot be told.
func (c *classifier) mysqlDestination(k *call, host, port, protocol string) bool {
	if host == "" || host == "localhost" && !strings.EqualFold(protocol, "tcp") {
		c.localNet()
		return true
	}
	p := 3306
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || !isNumber(port) {
			c.writer(k.name+" -P "+port, RiskMedium, "port is not a number")
			return false
		}
		p = n
	}
	return c.destination(k, host, p)
}
