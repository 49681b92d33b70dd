package command

import (
	"strconv"
	"strings"
)

// HTTP clients and openssl. A fetch is read-only when it is a GET (or
// HEAD) of URLs that are listed or well-known read endpoints (url.go) on
// hosts vigil knows (dest.go), printed to stdout, sending nothing local:
// no request body, no file uploads, no headers or cookies read from files,
// no credentials from a netrc file. Every word is static text (the HTTP
// clients are network clients, netclient.go). Options that reroute the
// connection (a proxy, --connect-to, --resolve, DNS-over-HTTPS) are reads
// only when what they name is known too.

// curl (7.x and 8.x match long options by unambiguous prefix, ignoring
// case; an option spelled in another case is unknown here, which fails
// closed).
var curlTool = &tool{
	name: "curl", style: styleGNU,
	opts: opts(
		reads(`--anyauth --aws-sigv4= --basic --cacert= --capath=
			-E|--cert= --cert-status --cert-type= --ciphers= --compressed --compressed-ssh
			--connect-timeout= -C|--continue-at= --crlfile= --curves=
			--digest -q|--disable --disable-eprt --disable-epsv --disallow-username-in-url
			--dns-interface= --dns-ipv4-addr= --dns-ipv6-addr= --doh-cert-status
			--doh-insecure --egd-file= --expect100-timeout= -f|--fail
			--fail-early --fail-with-body --false-start --ftp-pasv -P|--ftp-port= --ftp-pret
			--ftp-skip-pasv-ip --ftp-ssl-ccc --ftp-ssl-ccc-mode= --ftp-ssl-control -G|--get
			-g|--globoff --happy-eyeballs-timeout-ms= --haproxy-protocol -I|--head -h|--help[=]
			--hostpubmd5= --hostpubsha256= --http0.9 -0|--http1.0 --http1.1 --http2
			--http2-prior-knowledge --http3 --http3-only --ignore-content-length -i|--include
			-k|--insecure --interface= -4|--ipv4 -6|--ipv6 -j|--junk-session-cookies
			--keepalive-time= --key= --key-type= --krb= --limit-rate= -l|--list-only --local-port=
			-L|--location --login-options= -M|--manual --max-filesize=
			--max-redirs= -m|--max-time= --negotiate --ntlm --no-alpn -N|--no-buffer --no-clobber
			--no-keepalive --no-npn --no-progress-meter --no-sessionid --noproxy= -:|--next
			--pass= --path-as-is --pinnedpubkey= -#|--progress-bar --proto= --proto-redir=
			--proxy-anyauth --proxy-basic --proxy-cacert= --proxy-capath= --proxy-cert=
			--proxy-cert-type= --proxy-ciphers= --proxy-crlfile= --proxy-digest --proxy-insecure
			--proxy-key= --proxy-key-type= --proxy-negotiate --proxy-ntlm --proxy-pass=
			--proxy-pinnedpubkey= --proxy-service-name= --proxy-ssl-allow-beast
			--proxy-ssl-auto-client-cert --proxy-tls13-ciphers= --proxy-tlsauthtype=
			--proxy-tlspassword= --proxy-tlsuser= --proxy-tlsv1 -U|--proxy-user=
			-p|--proxytunnel --pubkey= --random-file= -r|--range= --rate= --raw -R|--remote-time
			--remove-on-error --retry= --retry-all-errors --retry-connrefused
			--retry-delay= --retry-max-time= --sasl-authzid= --sasl-ir --service-name=
			-S|--show-error -s|--silent --socks5-basic
			--socks5-gssapi --socks5-gssapi-nec --socks5-gssapi-service=
			-Y|--speed-limit= -y|--speed-time= --ssl --ssl-allow-beast --ssl-auto-client-cert
			--ssl-no-revoke --ssl-reqd --ssl-revoke-best-effort -2|--sslv2 -3|--sslv3
			--styled-output --suppress-connect-headers --tcp-fastopen --tcp-nodelay
			--tftp-blksize= --tftp-no-options --tls-max= --tls13-ciphers=
			--tlsauthtype= --tlspassword= --tlsuser= -1|--tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2
			--tlsv1.3 --tr-encoding --trace-time -B|--use-ascii -v|--verbose
			-V|--version --create-file-mode= --ca-native --proxy-ca-native --mail-rcpt-allowfails
			--no-location --no-silent --no-verbose --no-include --no-fail --no-insecure
			--unix-socket= --abstract-unix-socket= --url=`),
		readsVal(curlMethod, `-X|--request=`),
		readsVal(httpHeader, `-H|--header= --proxy-header=`),
		readsVal(curlWriteOut, `-w|--write-out=`),
		readsVal(stdoutOnly, `-o|--output= -D|--dump-header= --trace= --trace-ascii= --stderr=`),
		readsVal(curlCookie, `-b|--cookie=`),
		readsVal(noControlValue, `-A|--user-agent= -e|--referer= -u|--user= --oauth2-bearer=`),
		readsVal(curlURLQuery, `--url-query=`),
		readsVal(curlProxy, `-x|--proxy= --preproxy= --socks4= --socks4a= --socks5= --socks5-hostname=`),
		readsVal(curlConnectTo, `--connect-to=`),
		readsVal(curlResolve, `--resolve=`),
		readsVal(curlDoH, `--doh-url=`),
		readsVal(curlDNSServers, `--dns-servers=`),
		writes(RiskMedium, "sends data", `-d|--data= --data-ascii= --data-binary= --data-raw=
			--data-urlencode= --json= -F|--form= --form-string= --form-escape -T|--upload-file=
			-Q|--quote= --mail-rcpt= --mail-from= --mail-auth= -t|--telnet-option= -a|--append
			--post301 --post302 --post303 --ftp-account= --ftp-alternative-to-user= --ftp-method=
			--ftp-create-dirs --crlf`),
		writes(RiskMedium, "sends the ETag a local file holds (its first line) in If-None-Match", `--etag-compare=`),
		writes(RiskLow, "writes a file", `-O|--remote-name --remote-name-all -J|--remote-header-name
			--output-dir= -c|--cookie-jar= --libcurl= --etag-save= --hsts= --alt-svc= --create-dirs
			--xattr`),
		nets("sends credentials read from a netrc file", `-n|--netrc --netrc-file= --netrc-optional`),
		nets("delegates the local Kerberos credentials to the server", `--delegation=`),
		nets("sends its credentials to every host a redirect names", `--location-trusted`),
		execs("loads code or runs a helper program", `--engine= --ntlm-wb`),
		unknowns("sends the modification time of the file a value that is not a date names", `-z|--time-cond=`),
		unknowns("option not known to be read-only", `-K|--config= --proto-default= --request-target=
			--variable= --metalink --ipfs-gateway=`),
	),
	check: checkCurlURLs,
}

func checkCurl(c *classifier, k *call) { c.runTool(k, curlTool) }

// checkCurlURLs checks every URL: the operands and --url values. curl
// expands {a,b} and [1-9] in a URL into several unless -g/--globoff.
func checkCurlURLs(c *classifier, k *call) {
	use := urlUse{socket: k.p.hasAny("unix-socket", "abstract-unix-socket")}
	for _, u := range k.p.uses {
		if u.key == "url-query" {
			name, _, _ := strings.Cut(u.val.s, "=")
			use.params = append(use.params, strings.TrimPrefix(name, "+"))
		}
	}
	urls := 0
	check := func(a arg) bool {
		urls++
		if !k.p.has("globoff") && strings.ContainsAny(a.s, "{}[]") {
			c.writer(k.name+" "+a.s, RiskMedium, "curl expands {…} and […] in a URL into several requests; give each URL, or add -g")
			return false
		}
		return c.checkURL(k, a, use)
	}
	for _, u := range k.p.uses {
		if u.key == "url" && !check(u.val) {
			return
		}
	}
	for _, i := range k.p.ops {
		if !check(k.args[i]) {
			return
		}
	}
	if urls == 0 {
		if k.p.hasAny("help", "version", "manual") {
			c.localNet()
			c.readOnly(k)
			return
		}
		c.unknown(k.name, "no URL")
		return
	}
	c.read("curl", "GET to stdout")
}

func curlMethod(c *classifier, k *call, u *optUse) bool {
	if u.val.static && (u.val.s == "GET" || u.val.s == "HEAD") {
		return true
	}
	c.writer(k.name+" "+u.as+" "+u.val.s, RiskMedium, "sends a request that may change state")
	return false
}

// httpHeader accepts a header given inline that does not override the
// method; @file reads headers from a file (local data sent).
func httpHeader(c *classifier, k *call, u *optUse) bool {
	v := u.val
	switch {
	case !v.static:
		c.unknown(k.name+" "+u.as, "dynamic header")
	case strings.HasPrefix(v.s, "@"):
		c.writer(k.name+" "+u.as+" "+v.s, RiskMedium, "sends headers read from a file")
	case strings.Contains(strings.ToLower(v.s), "method"):
		c.writer(k.name+" "+u.as, RiskMedium, "header may override the request method")
	default:
		return c.noControl(k, v)
	}
	return false
}

func curlWriteOut(c *classifier, k *call, u *optUse) bool {
	v := u.val
	if !v.static || strings.Contains(v.s, "%output") || strings.HasPrefix(v.s, "@") && v.s != "@-" {
		c.unknown(k.name+" -w", "write-out may write or read a file")
		return false
	}
	return true
}

// stdoutOnly accepts an output file that is stdout, stderr or /dev/null.
func stdoutOnly(c *classifier, k *call, u *optUse) bool {
	switch v := u.val; {
	case v.static && matchOneOf(v.s, "-", "/dev/null", "/dev/stdout", "/dev/stderr"):
		return true
	default:
		c.writer(k.name+" "+u.as+" "+c.displayWord(v, k.ctx), RiskLow, "writes a file")
		return false
	}
}

// curlCookie: -b NAME=VALUE sends that cookie; -b FILE sends cookies read
// from a file.
func curlCookie(c *classifier, k *call, u *optUse) bool {
	v := u.val
	if v.static && strings.Contains(v.s, "=") {
		return c.noControl(k, v)
	}
	c.writer(k.name+" "+u.as+" "+c.displayWord(v, k.ctx), RiskMedium, "sends cookies read from a file")
	return false
}

// noControlValue vets a value sent as it is (a user agent, a referer,
// credentials): static text (the network-client rule has seen to that)
// without control characters.
func noControlValue(c *classifier, k *call, u *optUse) bool {
	if !u.val.static {
		c.construct(k.name+" "+u.as, RiskHigh, "value is built by "+expansionKind(u.val)+": a network read sends only static text")
		return false
	}
	return c.noControl(k, u.val)
}

// curlURLQuery: --url-query adds a parameter to every URL's query; @file
// reads it from a file. The parameter must be one the URL reads
// (checkCurlURLs).
func curlURLQuery(c *classifier, k *call, u *optUse) bool {
	v := u.val
	if !v.static || strings.Contains(v.s, "@") {
		c.writer(k.name+" --url-query", RiskMedium, "sends data read from a file")
		return false
	}
	return c.noControl(k, v)
}

// curlProxy: the proxy is a second destination, [scheme://]host[:port]
// (curl's default proxy port is 1080).
func curlProxy(c *classifier, k *call, u *optUse) bool {
	v := u.val.s
	if _, rest, ok := strings.Cut(v, "://"); ok {
		v = rest
	}
	v = strings.TrimSuffix(v, "/")
	host, port, err := splitAuthority(v)
	if err != nil {
		c.writer(k.name+" "+u.as+" "+u.val.s, RiskMedium, "proxy "+err.Error())
		return false
	}
	if port == 0 {
		port = 1080
	}
	return c.destination(k, host, port)
}

// curlConnectTo: --connect-to HOST1:PORT1:HOST2:PORT2 sends the requests
// for HOST1:PORT1 to HOST2:PORT2 (empty parts keep the original).
func curlConnectTo(c *classifier, k *call, u *optUse) bool {
	parts := strings.Split(u.val.s, ":")
	if len(parts) != 4 || parts[2] == "" || parts[3] == "" {
		c.writer(k.name+" --connect-to "+u.val.s, RiskMedium, "reroutes connections to a destination the classifier cannot tell; give HOST1:PORT1:HOST2:PORT2")
		return false
	}
	port, err := strconv.Atoi(parts[3])
	if err != nil {
		c.writer(k.name+" --connect-to "+u.val.s, RiskMedium, "port is not a number")
		return false
	}
	return c.destination(k, parts[2], port)
}

// curlResolve: --resolve [+]HOST:PORT:ADDR[,ADDR]... connects to ADDR.
func curlResolve(c *classifier, k *call, u *optUse) bool {
	v := strings.TrimPrefix(u.val.s, "+")
	if strings.HasPrefix(v, "-") {
		return true // removes an entry
	}
	host, rest, ok1 := strings.Cut(v, ":")
	portText, addrs, ok2 := strings.Cut(rest, ":")
	port, err := strconv.Atoi(portText)
	if !ok1 || !ok2 || host == "" || err != nil {
		c.writer(k.name+" --resolve "+u.val.s, RiskMedium, "reroutes connections; give HOST:PORT:ADDRESS")
		return false
	}
	for _, a := range strings.Split(addrs, ",") {
		if !c.destination(k, strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"), port) {
			return false
		}
	}
	return true
}

// curlDoH: names are resolved by a DNS-over-HTTPS server.
func curlDoH(c *classifier, k *call, u *optUse) bool {
	scheme, rest, ok := strings.Cut(u.val.s, "://")
	if !ok || strings.ToLower(scheme) != "https" {
		c.writer(k.name+" --doh-url "+u.val.s, RiskMedium, "DNS-over-HTTPS URL must be https://")
		return false
	}
	authority, _, _ := strings.Cut(rest, "/")
	return c.urlDest(k, "https", authority)
}

// curlDNSServers: names are resolved by these servers (port 53 unless
// given).
func curlDNSServers(c *classifier, k *call, u *optUse) bool {
	for _, s := range strings.Split(u.val.s, ",") {
		host, port, err := splitHostPort(s)
		if err != nil {
			c.writer(k.name+" --dns-servers "+u.val.s, RiskMedium, err.Error())
			return false
		}
		if port == 0 {
			port = 53
		}
		if !c.destination(k, host, port) {
			return false
		}
	}
	return true
}

// wget saves what it fetches; only -O - (stdout) or --spider read.
var wgetTool = &tool{
	name: "wget", style: styleGNU, net: true,
	opts: opts(
		reads(`-V|--version -h|--help -d|--debug -q|--quiet -v|--verbose --no-verbose
			--report-speed= -F|--force-html --no-config -t|--tries= --retry-connrefused
			--retry-on-http-error= --no-clobber --no-netrc -c|--continue --start-pos= --progress=
			--show-progress -N|--timestamping --no-if-modified-since --no-use-server-timestamps
			-S|--server-response --spider -T|--timeout= --dns-timeout= --connect-timeout=
			--read-timeout= -w|--wait= --waitretry= --random-wait --no-proxy -Q|--quota=
			--bind-address= --limit-rate= --no-dns-cache --restrict-file-names= --ignore-case
			-4|--inet4-only -6|--inet6-only --prefer-family= --no-iri
			--local-encoding= --remote-encoding= --no-cache
			--default-page= --ignore-length --compression= --max-redirect=
			--save-headers --no-http-keep-alive --no-cookies
			--keep-session-cookies --content-disposition --content-on-error --auth-no-challenge
			--secure-protocol= --https-only --no-check-certificate --certificate=
			--certificate-type= --private-key= --private-key-type= --ca-certificate=
			--ca-directory= --crl-file= --pinnedpubkey= --ciphers= --no-hsts --ftp-user=
			--ftp-password= --no-remove-listing --no-glob --no-passive-ftp --retr-symlinks
			--ftps-implicit --ftps-resume-ssl --ftps-clear-data-connection --ftps-fallback-to-ftp
			--trust-server-names --no-parent`),
		readsVal(noControlValue, `-U|--user-agent= --referer= --user= --password= --http-user=
			--http-password= --proxy-user= --proxy-password=`),
		readsVal(wgetNoFlags, `-n=`),
		readsVal(wgetOutput, `-O|--output-document=`),
		readsVal(curlMethod, `--method=`),
		readsVal(httpHeader, `--header=`),
		writes(RiskMedium, "sends data", `--post-data= --post-file= --body-data= --body-file=`),
		writes(RiskLow, "writes a file", `-o|--output-file= -a|--append-output= --rejected-log=
			--save-cookies= --warc-file= --warc-header= --warc-max-size= --warc-cdx --warc-dedup=
			--no-warc-compression --no-warc-digests --no-warc-keep-log --warc-tempdir= --hsts-file=
			--delete-after --backups= -P|--directory-prefix= -x|--force-directories
			--protocol-directories --cut-dirs= -E|--adjust-extension -k|--convert-links
			--convert-file-only -K|--backup-converted --unlink --xattr --preserve-permissions`),
		nets("fetches URLs not written in the command", `-i|--input-file= -r|--recursive
			-l|--level= -m|--mirror -p|--page-requisites -A|--accept= -R|--reject= --accept-regex=
			--reject-regex= --regex-type= -D|--domains= --exclude-domains= --follow-ftp
			--follow-tags= --ignore-tags= -H|--span-hosts -L|--relative -I|--include-directories=
			-X|--exclude-directories= --strict-comments -B|--base=`),
		nets("sends cookies read from a file", `--load-cookies=`),
		execs("runs a program", `--use-askpass=`),
		unknowns("option not known to be read-only", `-e|--execute= --config= -b|--background
			--ask-password`),
	),
	check: checkWgetURLs,
}

func checkWget(c *classifier, k *call) { c.runTool(k, wgetTool) }

// wgetNoFlags: -nv, -nc, -nd, -nH and -np are -n with letters.
func wgetNoFlags(c *classifier, k *call, u *optUse) bool {
	if u.val.static && u.val.s != "" && strings.Trim(u.val.s, "vcdHp") == "" {
		return true
	}
	c.unknown(k.name+" -n"+u.val.s, "option not known")
	return false
}

func wgetOutput(c *classifier, k *call, u *optUse) bool {
	if u.val.static && (u.val.s == "-" || u.val.s == "/dev/null") {
		return true
	}
	c.writer(k.name+" -O", RiskLow, "saves a file")
	return false
}

func checkWgetURLs(c *classifier, k *call) {
	if len(k.p.ops) == 0 && k.p.hasAny("help", "version") {
		c.localNet()
		c.readOnly(k)
		return
	}
	if !k.p.hasAny("output-document", "spider") {
		c.writer("wget", RiskLow, "saves a file")
		return
	}
	if len(k.p.ops) == 0 {
		c.unknown(k.name, "no URL")
		return
	}
	for _, i := range k.p.ops {
		if !c.checkURL(k, k.args[i], urlUse{}) {
			return
		}
	}
	c.read("wget", "GET without saving")
}

// httpie (http, https): "http [options] [METHOD] URL [ITEM...]". Items
// name==value add query parameters and Name:value headers; any other item
// (name=value, name:=json, field@file) is request data. httpie sends its
// stdin as the body unless --ignore-stdin. --offline builds the request
// without sending it.
var httpieTool = &tool{
	name: "http", style: styleArgparseExact, net: true,
	opts: opts(
		reads(`-j|--json --pretty= -s|--style= --unsorted --sorted --response-charset=
			--response-mime= --format-options= -p|--print= -h|--headers -m|--meta -b|--body
			-v|--verbose --all -S|--stream -c|--continue -q|--quiet -A|--auth-type=
			--ignore-netrc --offline -F|--follow --max-redirects= --max-headers= --timeout=
			--check-status --path-as-is --verify= --ssl= --ciphers= --cert= --cert-key=
			--cert-key-pass= -I|--ignore-stdin --help --manual --version --traceback
			--default-scheme= --debug`),
		readsVal(noControlValue, `-a|--auth=`),
		readsVal(httpieProxy, `--proxy=`),
		writes(RiskMedium, "sends data", `-f|--form --multipart --boundary= --raw= -x|--compress --chunked`),
		writes(RiskLow, "writes a file", `-o|--output= -d|--download --session=`),
		nets("sends a saved session's cookies and credentials", `--session-read-only=`),
	),
	check: checkHTTPieItems,
}

func checkHTTPie(c *classifier, k *call) { c.runTool(k, httpieTool) }

// httpieProxy: --proxy=PROTOCOL:URL sends that protocol's requests
// through the proxy at URL.
func httpieProxy(c *classifier, k *call, u *optUse) bool {
	_, proxy, ok := strings.Cut(u.val.s, ":")
	scheme, rest, ok2 := strings.Cut(proxy, "://")
	if !ok || !ok2 {
		c.writer(k.name+" --proxy "+u.val.s, RiskMedium, "proxy must be PROTOCOL:URL")
		return false
	}
	authority, _, _ := strings.Cut(rest, "/")
	host, port, err := splitAuthority(authority)
	if err != nil {
		c.writer(k.name+" --proxy "+u.val.s, RiskMedium, "proxy "+err.Error())
		return false
	}
	if port == 0 {
		port = defaultPorts[strings.ToLower(scheme)]
	}
	return c.destination(k, host, port)
}

var httpMethods = wordSet(`GET HEAD POST PUT PATCH DELETE OPTIONS TRACE CONNECT`)

func checkHTTPieItems(c *classifier, k *call) {
	ops := k.p.ops
	if len(ops) == 0 {
		if k.p.hasAny("help", "manual", "version") {
			c.localNet()
			c.readOnly(k)
			return
		}
		c.unknown(k.name, "no URL")
		return
	}
	explicitGet := false
	if m := k.args[ops[0]]; m.static && httpMethods[strings.ToUpper(m.s)] && len(ops) > 1 {
		if up := strings.ToUpper(m.s); up != "GET" && up != "HEAD" {
			c.writer(k.name+" "+m.s, RiskMedium, "sends a request that may change state")
			return
		}
		explicitGet = true
		ops = ops[1:]
	}
	if !explicitGet && !k.p.has("ignore-stdin") && !(k.ctx.fed && k.ctx.null) {
		// httpie reads a standard input that is not a terminal (and a read
		// runs without one) as the request body, and then POSTs it.
		c.unknown(k.name, "sends its stdin as the body (a POST) unless --ignore-stdin, an explicit GET or </dev/null")
		return
	}
	use := urlUse{defaultHost: "localhost"}
	if k.name == "https" {
		use.defaultScheme = "https"
	}
	if u := k.p.last("default-scheme"); u != nil {
		use.defaultScheme = strings.ToLower(u.val.s)
	}
	for _, i := range ops[1:] {
		a := k.args[i]
		if !a.static || !httpieReadItem(a.s) {
			c.writer(k.name+" "+c.displayWord(a, k.ctx), RiskMedium, "request item sends data")
			return
		}
		if !c.noControl(k, a) {
			return
		}
		if name, _, ok := strings.Cut(a.s, "=="); ok {
			use.params = append(use.params, name)
		}
	}
	if k.p.has("offline") {
		c.localNet()
		c.read(k.name+" --offline", "prints the request without sending it")
		return
	}
	if !c.checkURL(k, k.args[ops[0]], use) {
		return
	}
	c.read(k.name, "GET to stdout")
}

// httpieReadItem reports a query parameter (name==value) or a header
// (Name:value, Name;) given inline, with no escapes or file references.
func httpieReadItem(s string) bool {
	if strings.ContainsAny(s, "\\@") {
		return false
	}
	i := strings.IndexAny(s, ":=;")
	if i <= 0 {
		return false
	}
	rest := s[i:]
	switch {
	case strings.HasPrefix(rest, "=="):
		return !strings.HasPrefix(rest[2:], "=")
	case strings.HasPrefix(rest, ":="):
		return false
	case rest[0] == ':':
		return !strings.Contains(strings.ToLower(s[:i]), "method")
	case rest == ";":
		return true
	}
	return false
}

// opensslCmd describes the options one openssl subcommand may use while
// staying read-only. Options in valued take a value.
type opensslCmd struct {
	flags  string // space-separated value-less options
	valued string // space-separated options taking a value
	client bool   // s_client: connects, and sends its stdin
}

// opensslReads are the openssl subcommands that can be read-only, with the
// options that keep them so. -out, -new, -x509, -signkey, -genkey and the
// like are deliberately absent: they write keys or files.
var opensslReads = map[string]opensslCmd{
	"x509": {flags: "-noout -text -subject -issuer -dates -enddate -startdate -serial -fingerprint -sha1 -sha256 -sha384 -sha512 -md5 -hash -subject_hash -issuer_hash -email -ocsp_uri -purpose -modulus -pubkey -ocspid -alias -trustout -ext -nocert",
		valued: "-in -inform -nameopt -certopt -checkend -checkhost -checkemail -checkip -ext -dateopt"},
	"s_client": {flags: "-showcerts -brief -verify_return_error -tls1 -tls1_1 -tls1_2 -tls1_3 -no_tls1_3 -no_tls1_2 -status -crlf -quiet -prexit -msg -state -debug -4 -6 -ign_eof -no_ign_eof -servername_fatal -noservername -tlsextdebug -nbio -ct -noct -no_ticket -legacy_renegotiation",
		valued: "-connect -servername -CAfile -CApath -starttls -alpn -verify -cipher -ciphersuites -host -port -proxy -xmpphost -verify_hostname -sigalgs -groups -curves -cert -key -name -timeout -pass -certform -keyform -CAstore -chainCAfile -bind", client: true},
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

// opensslWriters are openssl options that write files, load code or send
// local data.
var opensslWriters = "-out -keyout -new -newkey -x509 -signkey -CA -CAkey -req -export -genkey -sign -set_serial -days -writerand -sess_out -keylogfile -msgfile -rand -early_data -sess_in -psk_session -ssl_config -serverinfo -ctlogfile -trace -keymatexport"

// opensslLoaders load shared objects: engines and providers.
var opensslLoaders = "-engine -provider -provider-path -propquery -config"

// checkOpenssl: inspecting certificates, keys and connections reads;
// generating keys, signing and writing output files write. s_client sends
// whatever its stdin holds.
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
			"smime", "ts", "pkcs8", "spkac", "passwd", "kdf", "mac", "pkeyutl", "rsautl":
			c.writer(name, RiskLow, "creates keys, signs or writes files")
		default:
			c.unknown(name, "subcommand not known to be read-only")
		}
		return
	}
	if spec.client {
		// s_client is a network client: its words are sent or name where
		// it connects.
		sub := c.newCall(call{name: name, word: k.word, lead: k.args[:1], args: k.args[1:], ctx: k.ctx})
		defer c.freeCall()
		if !c.enterNet(sub, "", "") {
			return
		}
		defer c.leaveNet(sub)
		k = sub
	}
	connect, host, port, proxy := "", "", "", ""
	args := k.args
	if !spec.client {
		args = k.args[1:]
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown(name, "dynamic argument")
			return
		}
		opt := strings.TrimPrefix(a.s, "-") // OpenSSL 3 also takes --name
		opt = "-" + opt
		switch {
		case !strings.HasPrefix(a.s, "-") || a.s == "-":
			if matchOneOf(first.s, "rand", "verify", "dgst", "errstr", "help") {
				continue
			}
			c.unknown(name+" "+a.s, "operand not known")
			return
		case hasWord(spec.flags, opt):
		case hasWord(spec.valued, opt):
			i++
			if i >= len(args) {
				c.unknown(name+" "+a.s, "missing value")
				return
			}
			if !c.noControl(k, args[i]) {
				return
			}
			switch opt {
			case "-connect":
				connect = args[i].s
			case "-host":
				host = args[i].s
			case "-port":
				port = args[i].s
			case "-proxy":
				proxy = args[i].s
			}
		case hasWord(opensslLoaders, opt):
			c.construct(name+" "+a.s, RiskMedium, "loads an engine, provider or configuration")
			return
		case hasWord(opensslWriters, opt):
			c.writer(name+" "+a.s, RiskLow, "writes keys or files, or sends local data")
			return
		default:
			c.unknown(name+" "+a.s, "option not known to be read-only")
			return
		}
	}
	if spec.client {
		// s_client connects to -connect HOST:PORT, or -host and -port, or
		// localhost:4433; through -proxy HOST:PORT when given.
		if connect == "" {
			connect = hostPort(cmpOr(host, "localhost"), 4433)
			if port != "" {
				connect = hostPort(cmpOr(host, "localhost"), 0)
				connect = connect[:len(connect)-1] + port
			}
		}
		for _, hp := range []string{connect, proxy} {
			if hp == "" {
				continue
			}
			h, p, err := splitHostPort(hp)
			if err != nil || p == 0 {
				c.writer(name+" "+hp, RiskMedium, "destination must be HOST:PORT")
				return
			}
			if !c.destination(k, h, p) {
				return
			}
		}
		if !k.ctx.fed {
			c.unbounded(k.ctx, BoundInteractiveREPL, c.rebuild(k, edit{insertAfter: -1, appendText: "</dev/null"}))
		}
	}
	c.read(name, "read-only")
}

// cmpOr returns a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
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
