package command

import "strings"

// monitorTools are the process and resource monitors: full-screen ones
// never end by themselves (top -b -n 1 is the bounded equivalent), and
// some can also record to files, serve their data or run exports.
var monitorTools = map[string]*tool{
	"htop":          htopTool,
	"btop":          btopTool,
	"atop":          atopTool,
	"glances":       glancesTool,
	"nmon":          nmonTool,
	"iotop":         iotopTool,
	"systemd-cgtop": cgtopTool,
	"slabtop":       slabtopTool,
	"sensors":       sensorsTool,
}

// fullScreen is the check of the full-screen monitors.
func fullScreen(c *classifier, k *call) {
	c.unbounded(k.ctx, BoundUnboundedStream, c.splice(k, "top -b -n 1"))
	c.readOnly(k)
}

// noOperands is the check of tools whose operands are not known.
func noOperands(check checkFunc) checkFunc {
	return func(c *classifier, k *call) {
		if len(k.p.ops) > 0 {
			c.unknown(k.name+" "+k.args[k.p.ops[0]].s, "unexpected argument")
			return
		}
		check(c, k)
	}
}

// htop (getopt_long) has no option that writes; its setup screen saves
// settings, but only when a person uses it.
var htopTool = &tool{
	name: "htop", style: styleGNU,
	opts: opts(reads(`-C|--no-color|--no-colour -d|--delay= -F|--filter= -h|--help
		-H|--highlight-changes[=] -M|--no-mouse -n|--max-iterations= -p|--pid= --readonly
		-s|--sort-key= -t|--tree -u|--user[=] -U|--no-unicode -V|--version`)),
	check: noOperands(fullScreen),
}

// btop parses its few options itself, spelled out.
var btopTool = &tool{
	name: "btop", style: styleExact,
	opts:  opts(reads(`-h|--help -v|--version -t|--tty_on -p|--preset= --utf-force -u|--update=`)),
	check: noOperands(fullScreen),
}

// atop -w records raw samples into a file (-r reads one back).
var atopTool = &tool{
	name: "atop", style: styleExact,
	opts: opts(
		reads(`-a -c -d -m -n -s -v -g -C -M -D -N -A -f -F -G -1 -l -x -y -R -h -V -P= -r
			-b= -e=`),
		writes(RiskLow, "writes raw samples to a file", `-w=`),
	),
	check: fullScreen,
}

// glances (argparse: abbreviations accepted) can serve its data (-w web
// server, -s server), connect to a server (-c, --browser) and export to
// files or databases; only the display options are tabled.
var glancesTool = &tool{
	name: "glances", style: styleArgparse,
	opts: opts(
		reads(`-h|--help -V|--version -1|--percpu -t|--time= --stdout= --stdout-csv= --stdout-json=
			-C|--config= --disable-plugin= --enable-plugin= --fs-free-space --process-short-name
			--hide-kernel-threads --byte --diskio-show-ramfs --diskio-iops --fahrenheit
			--theme-white --disable-bg --disable-bold -b -d -m -n -p -q|--quiet --disable-left-sidebar
			--disable-quicklook --disable-top --disable-process --disable-irix`),
		nets("serves or fetches monitoring data over the network", `-w|--webserver -s|--server
			-c|--client= --browser`),
		writes(RiskLow, "exports data to files or databases", `--export= --export-csv-file=
			--export-json-file=`),
	),
	check: func(c *classifier, k *call) {
		if k.p.hasAny("stdout", "stdout-csv", "stdout-json") {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
			c.readOnly(k)
			return
		}
		noOperands(fullScreen)(c, k)
	},
}

// nmon's command-line options record spreadsheets (-f, -F, -x...) or
// change directories for them: only help is tabled.
var nmonTool = &tool{
	name: "nmon", style: styleExact,
	opts:  opts(reads(`-h`)),
	check: noOperands(fullScreen),
}

// iotop (Python optparse, abbreviations accepted; iotop-c takes the same
// options) ends with -n/--iter.
var iotopTool = &tool{
	name: "iotop", style: styleArgparse,
	opts: opts(reads(`-o|--only -b|--batch -n|--iter= -d|--delay= -p|--pid= -u|--user=
		-P|--processes -a|--accumulated -k|--kilobytes -t|--time -q|--quiet --no-help -h|--help
		--version -1`)),
	check: noOperands(iterations("iter", "1")),
}

// systemd-cgtop (getopt_long) ends with -n/--iterations or -1.
var cgtopTool = &tool{
	name: "systemd-cgtop", style: styleGNU,
	opts: opts(reads(`-h|--help --version -p -t -c -m -i --order= -r|--raw --cpu[=] -P -k
		--recursive= -d|--delay= -n|--iterations= -1 -b|--batch --depth= -M|--machine=`)),
	check: iterations("iterations", "1"),
}

// iterations is the check of a monitor that ends only after a count.
func iterations(keys ...string) checkFunc {
	return func(c *classifier, k *call) {
		if !k.p.hasAny(keys...) {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
		c.readOnly(k)
	}
}

var slabtopTool = &tool{
	name: "slabtop", style: styleGNU,
	opts: opts(reads(`-d|--delay= -o|--once -s|--sort= -h|--help -V|--version`)),
	check: noOperands(func(c *classifier, k *call) {
		if !k.p.hasAny("once", "help", "version") {
			c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "-o"}))
		}
		c.readOnly(k)
	}),
}

// sensors -s writes the set statements of the configuration to the chips.
var sensorsTool = &tool{
	name: "sensors", style: styleGNU,
	opts: opts(
		reads(`-c|--config-file= -A|--no-adapter -u -j -f|--fahrenheit -h|--help -v|--version
			--bus-list`),
		states(RiskMedium, "sets limits", `-s|--set`),
	),
}

// lsofMinus and lsofPlus are the letters lsof 4.95 (Linux) accepts after
// "-" and "+"; their values (optional ones in the next word) are
// selections that only read. +m (create a mount supplement file) and +M
// (ask portmappers) are not among them, nor -D (device cache, which can
// build or update a cache file where lsof has one).
const (
	lsofMinus = "?abcdEefFgiKlLMnNoOpPQRrsStTUuvVwxXZh"
	lsofPlus  = "cdDeEfLrw"
)

// lsofNames reports whether an lsof command selects Internet files by
// address (-i), whose host names lsof resolves.
func lsofNames(k *call) bool {
	for _, a := range k.args {
		if a.s == "--" {
			return false
		}
		if strings.HasPrefix(a.s, "-i") {
			return true
		}
	}
	return false
}

// checkLsof: lsof has no other option that writes or runs programs, its
// operands are files to look at, and -r/+r repeat forever. Its option
// grammar (values that are optional and sometimes in the next word) is
// not getopt's, so every word that starts with "-" or "+" before "--"
// must start with a letter known to read; values that start so are
// judged the same way, which can only refuse more.
func checkLsof(c *classifier, k *call) {
	if lsofNames(k) {
		// -i [@host] asks the resolver for a host it names: the
		// command line is a network client's (static text only).
		for _, a := range k.args {
			if !a.static || a.glob || a.tilde {
				c.construct("lsof -i", RiskHigh, "value is built by "+expansionKind(a)+": a network read sends only static text")
				return
			}
		}
		for _, a := range k.args {
			if strings.Contains(a.s, "@") {
				c.resolver()
				break
			}
		}
	}
	for _, a := range k.args {
		if !a.static {
			if a.split || !a.noDash {
				c.unknown("lsof", "dynamic argument")
				return
			}
			continue
		}
		s := a.s
		if s == "--" {
			break
		}
		if len(s) < 2 || s[0] != '-' && s[0] != '+' {
			continue
		}
		set := lsofMinus
		if s[0] == '+' {
			set = lsofPlus
		}
		if s[1] == '-' || strings.IndexByte(set, s[1]) < 0 {
			c.unknown("lsof", "unknown option "+s[:2])
			return
		}
		if s[1] == 'r' {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}
