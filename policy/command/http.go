package command

import "strings"

// HTTP clients and openssl. A fetch is read-only when it is a GET (or
// HEAD) of URLs that name no action (url.go), printed to stdout, sending
// nothing local: no request body, no file uploads, no headers or cookies
// read from files, no credentials from a netrc file.

// curl (7.x matches long options by unambiguous prefix, ignoring case;
// an option spelled in another case is unknown here, which fails closed).
var curlTool = &tool{
	name: "curl", style: styleGNU,
	opts: opts(
		reads(`--abstract-unix-socket= --anyauth --aws-sigv4= --basic --cacert= --capath=
			-E|--cert= --cert-status --cert-type= --ciphers= --compressed --compressed-ssh
			--connect-timeout= --connect-to= -C|--continue-at= --crlfile= --curves=
			--digest -q|--disable --disable-eprt --disable-epsv --disallow-username-in-url
			--dns-interface= --dns-ipv4-addr= --dns-ipv6-addr= --dns-servers= --doh-cert-status
			--doh-insecure --doh-url= --egd-file= --etag-compare= --expect100-timeout= -f|--fail
			--fail-early --fail-with-body --false-start --ftp-pasv -P|--ftp-port= --ftp-pret
			--ftp-skip-pasv-ip --ftp-ssl-ccc --ftp-ssl-ccc-mode= --ftp-ssl-control -G|--get
			-g|--globoff --happy-eyeballs-timeout-ms= --haproxy-protocol -I|--head -h|--help[=]
			--hostpubmd5= --hostpubsha256= --http0.9 -0|--http1.0 --http1.1 --http2
			--http2-prior-knowledge --http3 --http3-only --ignore-content-length -i|--include
			-k|--insecure --interface= -4|--ipv4 -6|--ipv6 -j|--junk-session-cookies
			--keepalive-time= --key= --key-type= --krb= --limit-rate= -l|--list-only --local-port=
			-L|--location --location-trusted --login-options= -M|--manual --max-filesize=
			--max-redirs= -m|--max-time= --negotiate --ntlm --no-alpn -N|--no-buffer --no-clobber
			--no-keepalive --no-npn --no-progress-meter --no-sessionid --noproxy= -:|--next
			--pass= --path-as-is --pinnedpubkey= --preproxy= -#|--progress-bar --proto= --proto-redir=
			-x|--proxy= --proxy-anyauth --proxy-basic --proxy-cacert= --proxy-capath= --proxy-cert=
			--proxy-cert-type= --proxy-ciphers= --proxy-crlfile= --proxy-digest --proxy-insecure
			--proxy-key= --proxy-key-type= --proxy-negotiate --proxy-ntlm --proxy-pass=
			--proxy-pinnedpubkey= --proxy-service-name= --proxy-ssl-allow-beast
			--proxy-ssl-auto-client-cert --proxy-tls13-ciphers= --proxy-tlsauthtype=
			--proxy-tlspassword= --proxy-tlsuser= --proxy-tlsv1 -U|--proxy-user= --proxy1.0=
			-p|--proxytunnel --pubkey= --random-file= -r|--range= --rate= --raw -R|--remote-time
			--remove-on-error --resolve= --retry= --retry-all-errors --retry-connrefused
			--retry-delay= --retry-max-time= --sasl-authzid= --sasl-ir --service-name=
			-S|--show-error -s|--silent --socks4= --socks4a= --socks5= --socks5-basic
			--socks5-gssapi --socks5-gssapi-nec --socks5-gssapi-service= --socks5-hostname=
			-Y|--speed-limit= -y|--speed-time= --ssl --ssl-allow-beast --ssl-auto-client-cert
			--ssl-no-revoke --ssl-reqd --ssl-revoke-best-effort -2|--sslv2 -3|--sslv3
			--styled-output --suppress-connect-headers --tcp-fastopen --tcp-nodelay
			--tftp-blksize= --tftp-no-options -z|--time-cond= --tls-max= --tls13-ciphers=
			--tlsauthtype= --tlspassword= --tlsuser= -1|--tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2
			--tlsv1.3 --tr-encoding --trace-time --unix-socket= -B|--use-ascii -v|--verbose
			-V|--version --create-file-mode= --ca-native --proxy-ca-native --mail-rcpt-allowfails
			--no-location --no-silent --no-verbose --no-include --no-fail --no-insecure`),
		readsVal(curlURLValue, `--url=`),
		readsVal(curlMethod, `-X|--request=`),
		readsVal(httpHeader, `-H|--header= --proxy-header=`),
		readsVal(curlWriteOut, `-w|--write-out=`),
		readsVal(stdoutOnly, `-o|--output= -D|--dump-header= --trace= --trace-ascii= --stderr=`),
		readsVal(curlCookie, `-b|--cookie=`),
		readsVal(noControlValue, `-A|--user-agent= -e|--referer= -u|--user= --oauth2-bearer=`),
		readsVal(curlURLQuery, `--url-query=`),
		writes(RiskMedium, "sends data", `-d|--data= --data-ascii= --data-binary= --data-raw=
			--data-urlencode= --json= -F|--form= --form-string= --form-escape -T|--upload-file=
			-Q|--quote= --mail-rcpt= --mail-from= --mail-auth= -t|--telnet-option= -a|--append
			--post301 --post302 --post303 --ftp-account= --ftp-alternative-to-user= --ftp-method=
			--ftp-create-dirs --crlf`),
		writes(RiskLow, "writes a file", `-O|--remote-name --remote-name-all -J|--remote-header-name
			--output-dir= -c|--cookie-jar= --libcurl= --etag-save= --hsts= --alt-svc= --create-dirs
			--xattr`),
		nets("sends credentials read from a netrc file", `-n|--netrc --netrc-file= --netrc-optional`),
		nets("delegates the local Kerberos credentials to the server", `--delegation=`),
		execs("loads code or runs a helper program", `--engine= --ntlm-wb`),
		unknowns("option not known to be read-only", `-K|--config= --proto-default= --request-target=
			--variable= --metalink --ipfs-gateway=`),
	),
	check: checkCurlURLs,
}

func checkCurl(c *classifier, k *call) { c.runTool(k, curlTool) }

// checkCurlURLs checks every URL operand.
func checkCurlURLs(c *classifier, k *call) {
	for _, i := range k.p.ops {
		if !c.checkURL(k, k.args[i], "") {
			return
		}
	}
	c.read("curl", "GET to stdout")
}

func curlURLValue(c *classifier, k *call, u *optUse) bool { return c.checkURL(k, u.val, "") }

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

func noControlValue(c *classifier, k *call, u *optUse) bool {
	if !u.val.static {
		return true // an unquoted expansion was refused before; a quoted one stays one word
	}
	return c.noControl(k, u.val)
}

// curlURLQuery: --url-query adds to the query of every URL; @file reads
// it from a file.
func curlURLQuery(c *classifier, k *call, u *optUse) bool {
	v := u.val
	if !v.static || strings.Contains(v.s, "@") {
		c.writer(k.name+" --url-query", RiskMedium, "sends data read from a file")
		return false
	}
	if w := urlAction("", v.s); w != "" {
		c.writer(k.name+" --url-query "+v.s, RiskMedium, "query names an action ("+w+")")
		return false
	}
	return c.noControl(k, v)
}

// wget saves what it fetches; only -O - (stdout) or --spider read.
var wgetTool = &tool{
	name: "wget", style: styleGNU, net: true,
	opts: opts(
		reads(`-V|--version -h|--help -d|--debug -q|--quiet -v|--verbose --no-verbose
			--report-speed= -F|--force-html -B|--base= --no-config -t|--tries= --retry-connrefused
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
			-X|--exclude-directories= --strict-comments`),
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
	if !k.p.hasAny("output-document", "spider", "help", "version") {
		c.writer("wget", RiskLow, "saves a file")
		return
	}
	for _, i := range k.p.ops {
		if !c.checkURL(k, k.args[i], "") {
			return
		}
	}
	c.read("wget", "GET without saving")
}

// httpie (http, https): "http [options] [METHOD] URL [ITEM...]". Items
// name==value add query parameters and Name:value headers; any other item
// (name=value, name:=json, field@file) is request data. httpie sends its
// stdin as the body unless --ignore-stdin.
var httpieTool = &tool{
	name: "http", style: styleArgparseExact, net: true,
	opts: opts(
		reads(`-j|--json --pretty= -s|--style= --unsorted --sorted --response-charset=
			--response-mime= --format-options= -p|--print= -h|--headers -m|--meta -b|--body
			-v|--verbose --all -S|--stream -c|--continue -q|--quiet -a|--auth= -A|--auth-type=
			--ignore-netrc --offline --proxy= -F|--follow --max-redirects= --max-headers= --timeout=
			--check-status --path-as-is --verify= --ssl= --ciphers= --cert= --cert-key=
			--cert-key-pass= -I|--ignore-stdin --help --manual --version --traceback
			--default-scheme= --debug`),
		writes(RiskMedium, "sends data", `-f|--form --multipart --boundary= --raw= -x|--compress --chunked`),
		writes(RiskLow, "writes a file", `-o|--output= -d|--download --session=`),
		nets("sends a saved session's cookies and credentials", `--session-read-only=`),
	),
	check: checkHTTPieItems,
}

func checkHTTPie(c *classifier, k *call) { c.runTool(k, httpieTool) }

var httpMethods = wordSet(`GET HEAD POST PUT PATCH DELETE OPTIONS TRACE CONNECT`)

func checkHTTPieItems(c *classifier, k *call) {
	ops := k.p.ops
	if len(ops) == 0 {
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
	if !explicitGet && !k.p.has("ignore-stdin") && (k.ctx.fed && !k.ctx.null || !k.ctx.fed) {
		c.unknown(k.name, "sends its stdin as the body unless --ignore-stdin or an explicit GET")
		return
	}
	if !c.checkURL(k, k.args[ops[0]], "localhost") {
		return
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
		if name, val, ok := strings.Cut(a.s, "=="); ok {
			if w := actionWord(name + " " + val); w != "" {
				c.writer(k.name+" "+a.s, RiskMedium, "query names an action ("+w+")")
				return
			}
		}
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
	args := k.args[1:]
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
			if opt == "-connect" || opt == "-host" || opt == "-servername" {
				if i < len(args) && !c.noControl(k, args[i]) {
					return
				}
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
		c.net = true
		switch {
		case k.ctx.fed && !k.ctx.null:
			c.writer(name, RiskMedium, "sends its input over the connection")
			return
		case !k.ctx.fed:
			c.unbounded(k.ctx, BoundInteractiveREPL, c.rebuild(k, edit{insertAfter: -1, appendText: "</dev/null"}))
		}
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
