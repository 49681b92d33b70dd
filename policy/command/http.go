package command

import "strings"

var curlSpec = optSpec{
	shortArg: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
	longArg: []string{"user-agent", "cookie", "cookie-jar", "continue-at", "data", "data-ascii",
		"data-binary", "data-raw", "data-urlencode", "dump-header", "referer", "cert", "form",
		"form-string", "header", "config", "max-time", "output", "ftp-port", "quote", "range",
		"telnet-option", "upload-file", "user", "proxy-user", "write-out", "proxy", "request",
		"speed-time", "speed-limit", "time-cond", "connect-timeout", "retry", "retry-delay",
		"retry-max-time", "noproxy", "resolve", "connect-to", "cacert", "capath", "key", "cert-type",
		"key-type", "pass", "max-redirs", "unix-socket", "abstract-unix-socket", "url", "netrc-file",
		"oauth2-bearer", "interface", "local-port", "limit-rate", "keepalive-time", "dns-servers",
		"doh-url", "socks4", "socks4a", "socks5", "socks5-hostname", "expect100-timeout",
		"parallel-max", "max-filesize", "service-name", "ciphers", "tls13-ciphers", "curves",
		"crlfile", "aws-sigv4", "tls-max", "pinnedpubkey", "trace", "trace-ascii", "stderr",
		"json", "output-dir", "libcurl", "etag-save", "etag-compare", "hsts", "alt-svc",
		"mail-from", "mail-rcpt", "mail-auth", "proto", "proto-redir", "proto-default",
		"variable", "proxy-header", "proxy-cacert", "happy-eyeballs-timeout-ms", "retry-connrefused"},
}

// curlReadShort and curlReadLong are curl options that neither send data,
// write files, nor change the request method.
const curlReadShort = "sSfiIkLvGN#0qjnZpl1234M6hVgAbeEmruUxyYzCoDwHX"

var curlReadLong = []string{"silent", "show-error", "fail", "fail-with-body", "fail-early", "location",
	"location-trusted", "insecure", "verbose", "include", "show-headers", "head", "user-agent", "referer",
	"user", "max-time", "connect-timeout", "retry", "retry-delay", "retry-max-time", "retry-all-errors",
	"retry-connrefused", "proxy", "noproxy", "resolve", "connect-to", "cacert", "capath", "cert", "key",
	"cert-type", "key-type", "pass", "compressed", "ipv4", "ipv6", "http1.0", "http1.1", "http2",
	"http2-prior-knowledge", "http3", "http3-only", "get", "max-redirs", "unix-socket",
	"abstract-unix-socket", "globoff", "progress-bar", "no-progress-meter", "no-buffer", "range",
	"netrc", "netrc-optional", "netrc-file", "oauth2-bearer", "digest", "basic", "negotiate", "ntlm",
	"anyauth", "tlsv1", "tlsv1.0", "tlsv1.1", "tlsv1.2", "tlsv1.3", "tls-max", "ssl-no-revoke",
	"pinnedpubkey", "interface", "local-port", "path-as-is", "raw", "tcp-nodelay", "speed-time",
	"speed-limit", "limit-rate", "time-cond", "styled-output", "no-keepalive", "keepalive-time",
	"dns-servers", "doh-url", "proxy-insecure", "proxy-user", "proxytunnel", "socks4", "socks4a",
	"socks5", "socks5-hostname", "expect100-timeout", "parallel", "parallel-max",
	"parallel-immediate", "ignore-content-length", "junk-session-cookies", "disable", "cookie",
	"max-filesize", "no-sessionid", "no-alpn", "no-npn", "sasl-ir", "service-name", "ciphers",
	"tls13-ciphers", "curves", "false-start", "cert-status", "crlfile", "aws-sigv4",
	"haproxy-protocol", "list-only", "help", "version", "manual", "ca-native", "etag-compare",
	"happy-eyeballs-timeout-ms", "proxy-cacert", "ssl", "ssl-reqd", "url", "request", "header",
	"proxy-header", "write-out", "dump-header", "trace", "trace-ascii", "stderr", "output"}

// checkCurl: a plain GET (or HEAD) printed to stdout reads; a method other
// than GET/HEAD, data, forms, uploads, output files, cookie jars and the
// like write; a config file or an unusual URL scheme is unknown.
func checkCurl(c *classifier, k *call) {
	s := scanOpts(&curlSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown("curl", "dynamic argument")
			return
		case tokOperand:
			if !c.curlURL(t) {
				return
			}
			continue
		case tokShort:
			if !strings.Contains(curlReadShort, t.name) {
				c.curlWrites("-"+t.name, t)
				return
			}
		case tokLong:
			if !matchOneOf(t.name, curlReadLong...) {
				c.curlWrites("--"+t.name, t)
				return
			}
		}
		if !c.curlValue(t) {
			return
		}
	}
	c.read("curl", "GET to stdout")
}

// curlWrites records a curl option outside the read-only set.
func (c *classifier) curlWrites(opt string, t token) {
	switch t.name {
	case "d", "data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "json",
		"F", "form", "form-string", "T", "upload-file", "Q", "quote", "mail-rcpt", "mail-from":
		c.writer("curl "+opt, RiskMedium, "sends data")
	case "o", "O", "remote-name", "remote-name-all", "remote-header-name", "J", "output-dir",
		"c", "cookie-jar", "libcurl", "etag-save", "hsts", "alt-svc", "create-dirs":
		c.writer("curl "+opt, RiskLow, "writes a file")
	case "post301", "post302", "post303":
		c.writer("curl "+opt, RiskMedium, "sends data")
	default:
		c.unknown("curl "+opt, "option not known to be read-only")
	}
}

// curlValue checks the value of a read-only curl option.
func (c *classifier) curlValue(t token) bool {
	if !t.hasVal {
		return true
	}
	v := t.val
	switch t.name {
	case "X", "request":
		if !t.valStatic || (v != "GET" && v != "HEAD") {
			c.writer("curl -X "+v, RiskMedium, "sends a request that may change state")
			return false
		}
	case "H", "header", "proxy-header":
		if !t.valStatic || strings.Contains(strings.ToLower(v), "method") {
			c.writer("curl -H", RiskMedium, "header may override the request method")
			return false
		}
	case "w", "write-out":
		if !t.valStatic || strings.Contains(v, "%output") || strings.HasPrefix(v, "@") && v != "@-" {
			c.unknown("curl -w", "write-out may write a file")
			return false
		}
	case "o", "output", "D", "dump-header", "trace", "trace-ascii", "stderr":
		if !t.valStatic || (v != "-" && v != "/dev/null" && v != "/dev/stdout" && v != "/dev/stderr") {
			c.writer("curl "+optText(t)+" "+v, RiskLow, "writes a file")
			return false
		}
	case "url":
		return c.curlURL(token{kind: tokOperand, val: v, valStatic: t.valStatic})
	}
	return true
}

// curlURL accepts http, https and file URLs; other schemes (gopher, dict,
// ftp, smtp, ...) can drive other protocols' commands.
func (c *classifier) curlURL(t token) bool {
	if !t.valStatic {
		// A quoted expansion after "--" is a URL of unknown scheme.
		c.unknown("curl", "dynamic URL")
		return false
	}
	if i := strings.Index(t.val, "://"); i >= 0 {
		switch strings.ToLower(t.val[:i]) {
		case "http", "https", "file":
		default:
			c.unknown("curl "+t.val[:i]+"://", "URL scheme not known to be read-only")
			return false
		}
	}
	return true
}

var wgetSpec = optSpec{
	shortArg: "eoaiBtOTwQUPlARDIXY",
	longArg: []string{"output-document", "output-file", "append-output", "input-file", "tries",
		"timeout", "wait", "quota", "user-agent", "directory-prefix", "level", "accept", "reject",
		"domains", "header", "user", "password", "http-user", "http-password", "method",
		"post-data", "post-file", "body-data", "body-file", "execute", "config", "max-redirect",
		"connect-timeout", "read-timeout", "dns-timeout", "ca-certificate", "certificate",
		"private-key", "progress", "save-cookies", "load-cookies", "compression", "bind-address"},
}

// checkWget: wget saves what it fetches; only -O - (stdout) or --spider
// read. POST data, log files, recursion and the rest write.
func checkWget(c *classifier, k *call) {
	stdout := false
	args := k.args
	for i, a := range k.args {
		// wget's -nv is one option, not -n -v.
		if a.static && a.s == "-nv" {
			if i == 0 || &args[0] == &k.args[0] {
				args = append([]arg(nil), k.args...)
			}
			args[i] = lit("--no-verbose")
		}
	}
	s := scanOpts(&wgetSpec, args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown("wget", "dynamic argument")
			return
		case tokOperand:
			if !c.curlURL(t) {
				return
			}
			continue
		}
		switch t.name {
		case "O", "output-document":
			if !t.valStatic || t.val != "-" {
				c.writer("wget -O", RiskLow, "saves a file")
				return
			}
			stdout = true
		case "spider":
			stdout = true
		case "method":
			if !t.valStatic || (strings.ToUpper(t.val) != "GET" && strings.ToUpper(t.val) != "HEAD") {
				c.writer("wget --method", RiskMedium, "sends a request that may change state")
				return
			}
		case "header":
			if !t.valStatic || strings.Contains(strings.ToLower(t.val), "method") {
				c.writer("wget --header", RiskMedium, "header may override the request method")
				return
			}
		case "post-data", "post-file", "body-data", "body-file":
			c.writer("wget --"+t.name, RiskMedium, "sends data")
			return
		case "q", "quiet", "S", "server-response", "T", "timeout", "t", "tries", "U", "user-agent",
			"v", "verbose", "no-verbose", "d", "debug", "4", "6", "inet4-only", "inet6-only",
			"no-check-certificate", "max-redirect", "user", "password", "http-user", "http-password",
			"connect-timeout", "read-timeout", "dns-timeout", "no-proxy", "ca-certificate",
			"certificate", "private-key", "content-on-error", "no-cache", "compression", "progress",
			"show-progress", "auth-no-challenge", "no-dns-cache", "https-only", "save-headers":
		case "n":
			// -nv was rewritten above; other -n options shape downloads.
			c.writer("wget -n", RiskLow, "saves files")
			return
		default:
			c.writer("wget "+optText(t), RiskLow, "saves files or changes how it fetches")
			return
		}
	}
	if !stdout {
		c.writer("wget", RiskLow, "saves a file")
		return
	}
	c.read("wget", "GET without saving")
}

// opensslCmd describes the options one openssl subcommand may use while
// staying read-only. Options in valued take a value.
type opensslCmd struct {
	flags  string // space-separated value-less options
	valued string // space-separated options taking a value
	stdin  bool   // waits on stdin (s_client)
}

// opensslReads are the openssl subcommands that can be read-only, with the
// options that keep them so. -out, -new, -x509, -signkey, -genkey and the
// like are deliberately absent: they write keys or files.
var opensslReads = map[string]opensslCmd{
	"x509": {flags: "-noout -text -subject -issuer -dates -enddate -startdate -serial -fingerprint -sha1 -sha256 -sha384 -sha512 -md5 -hash -subject_hash -issuer_hash -email -ocsp_uri -purpose -modulus -pubkey -ocspid -alias -trustout",
		valued: "-in -inform -nameopt -certopt -checkend -checkhost -checkemail -checkip -ext -dateopt"},
	"s_client": {flags: "-showcerts -brief -verify_return_error -tls1 -tls1_1 -tls1_2 -tls1_3 -no_tls1_3 -no_tls1_2 -status -crlf -quiet -prexit -msg -state -debug -4 -6 -ign_eof -no_ign_eof -servername_fatal -noservername",
		valued: "-connect -servername -CAfile -CApath -starttls -alpn -verify -cipher -ciphersuites -host -port -proxy -xmpphost -verify_hostname -sigalgs -groups -curves -cert -key -name -timeout", stdin: true},
	"verify": {flags: "-verbose -show_chain -x509_strict -crl_check -crl_check_all -no-CAfile -no-CApath -partial_chain",
		valued: "-CAfile -CApath -untrusted -purpose -CRLfile -trusted -verify_hostname -attime"},
	"crl":  {flags: "-noout -text -hash -issuer -lastupdate -nextupdate -fingerprint -crlnumber", valued: "-in -inform -nameopt"},
	"req":  {flags: "-noout -text -verify -subject -pubkey -modulus", valued: "-in -inform -nameopt"},
	"rsa":  {flags: "-noout -text -check -pubout -modulus -pubin", valued: "-in -inform -passin"},
	"ec":   {flags: "-noout -text -check -pubout -pubin", valued: "-in -inform -passin"},
	"pkey": {flags: "-noout -text -pubout -pubin -check", valued: "-in -inform -passin"},
	"dgst": {flags: "-sha1 -sha256 -sha384 -sha512 -md5 -sha224 -sha3-256 -sha3-512 -blake2b512 -hex -r -c -binary",
		valued: "-verify -signature -prverify -hmac -keyform"},
	"asn1parse": {flags: "-i -dump -noout", valued: "-in -inform -offset -length -strparse -dlimit"},
	"pkcs12":    {flags: "-info -nokeys -nocerts -noout -clcerts -cacerts -nodes -noenc -legacy", valued: "-in -passin"},
	"pkcs7":     {flags: "-print_certs -text -noout -print", valued: "-in -inform"},
	"rand":      {flags: "-hex -base64"},
	"version":   {flags: "-a -v -b -o -f -p -d -e -c -r"},
	"ciphers":   {flags: "-v -V -s -tls1_2 -tls1_3 -stdname"},
	"list":      {flags: "-digest-commands -cipher-commands -public-key-algorithms -cipher-algorithms -digest-algorithms -commands -standard-commands -providers"},
	"errstr":    {},
	"help":      {},
}

// checkOpenssl: inspecting certificates, keys and connections reads;
// generating keys, signing and writing output files write.
func checkOpenssl(c *classifier, k *call) {
	if len(k.args) == 0 {
		c.unknown("openssl", "interactive")
		c.unbounded(k.ctx, BoundInteractiveREPL, "")
		return
	}
	first := k.args[0]
	if !first.static {
		c.unknown("openssl", "dynamic subcommand")
		return
	}
	name := "openssl " + first.s
	spec, ok := opensslReads[first.s]
	if !ok {
		switch first.s {
		case "genrsa", "genpkey", "gendsa", "dhparam", "ecparam", "ca", "srp", "enc", "ocsp", "cms",
			"smime", "ts", "pkcs8", "spkac", "req", "passwd":
			c.writer(name, RiskLow, "creates keys, signs or writes files")
		default:
			c.unknown(name, "subcommand not known to be read-only")
		}
		return
	}
	args := k.args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown(name, "dynamic argument")
			return
		}
		switch {
		case !strings.HasPrefix(a.s, "-") || a.s == "-":
			if matchOneOf(first.s, "rand", "verify", "dgst", "errstr", "help") {
				continue
			}
			c.unknown(name+" "+a.s, "operand not known")
			return
		case hasWord(spec.flags, a.s):
		case hasWord(spec.valued, a.s):
			i++
		default:
			if hasWord("-out -keyout -new -newkey -x509 -signkey -CA -CAkey -req -export -genkey -sign -set_serial -days -writerand -sess_out -keylogfile -msgfile -rand", a.s) {
				c.writer(name+" "+a.s, RiskLow, "writes keys or files")
				return
			}
			c.unknown(name+" "+a.s, "option not known to be read-only")
			return
		}
	}
	if spec.stdin && !k.ctx.fed {
		c.unbounded(k.ctx, BoundInteractiveREPL, c.rebuild(k, edit{insertAfter: -1, appendText: "</dev/null"}))
	}
	c.read(name, "read-only")
}

// hasWord reports whether w is one of the space-separated words in list.
func hasWord(list, w string) bool {
	for list != "" {
		i := strings.IndexByte(list, ' ')
		if i < 0 {
			return list == w
		}
		if list[:i] == w {
			return true
		}
		list = list[i+1:]
	}
	return false
}
