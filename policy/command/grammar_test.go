package command

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// testTool is a synthetic grammar exercising every parser feature.
func testTool(st parseStyle) *tool {
	return &tool{
		name: "tt", style: st,
		opts: opts(
			reads(`-a|--all -n|--lines= -c|--color[=] -f|--follow[--=] --property= --props --two== -v`),
			writes(RiskMedium, "writes a file", `-o|--output=`),
			execs("runs a program", `--exec-program=`),
			nets("sends data", `--upload`),
			unknowns("reads a config", `--config=`),
		),
	}
}

// scanResult runs tool t over the words of line and returns the verdict,
// the option keys seen (with values) and the operands.
func scanResult(t *testing.T, tl *tool, line string) (Verdict, string) {
	t.Helper()
	c := classifierPool.Get().(*classifier)
	defer func() { c.reset(); classifierPool.Put(c) }()
	c.dialect, c.parser = DialectBash, c.bash
	f, err := c.parser.Parse(strings.NewReader("tt "+line), "")
	if err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	var args []arg
	for _, w := range f.Stmts[0].Cmd.(*syntax.CallExpr).Args[1:] {
		args = append(args, c.resolve(w))
	}
	var got []string
	check := func(c *classifier, k *call) {
		for _, u := range k.p.uses {
			s := u.key
			if u.hasVal {
				s += "=" + u.val.s
			}
			got = append(got, s)
		}
		for _, i := range k.p.ops {
			got = append(got, "op:"+k.args[i].s)
		}
		c.readOnly(k)
	}
	g := *tl
	g.check = check
	k := c.newCall(call{name: "tt", word: lit("tt"), args: args})
	c.runTool(k, &g)
	c.freeCall()
	return c.verdict("tt " + line), strings.Join(got, " ")
}

func TestGrammarScan(t *testing.T) {
	tests := []struct {
		style  parseStyle
		line   string
		scan   string // options and operands seen, for a read
		reason string // for a refusal: a reason with this prefix
	}{
		// getopt_long: clusters, attached and separate values, permutation.
		{styleGNU, "-an5 file -v", "all lines=5 v op:file", ""},
		{styleGNU, "-a -n 5 --lines=7 --lines 9", "all lines=5 lines=7 lines=9", ""},
		// An optional value is attached only; the next word is an operand.
		{styleGNU, "-cauto --color=always --color never", "color=auto color=always color op:never", ""},
		// A flag whose long form takes an optional value: -fa is -f -a.
		{styleGNU, "-fa --follow=name", "follow all follow=name", ""},
		{styleGNU, "--two a b c", "two=a op:c", ""},
		// Abbreviations: unique prefixes resolve, exact names win.
		{styleGNU, "--li 5 --al", "lines=5 all", ""},
		{styleGNU, "--props", "props", ""},
		{styleGNU, "--prop x", "", "tt --prop: ambiguous abbreviation (--property, --props)"},
		{styleGNU, "--out /x", "", "tt --out (--output): writes a file"},
		{styleGNU, "--outp=/x", "", "tt --outp (--output): writes a file"},
		{styleGNU, "-ao/x", "", "tt -o: writes a file"},
		{styleGNU, "--exec-p=sh", "", "tt --exec-p (--exec-program): runs a program"},
		{styleGNU, "--up", "", "tt --up (--upload): sends data"},
		{styleGNU, "--config x", "", "tt --config: reads a config"},
		{styleGNU, "--frobnicate", "", "tt: unknown option --frobnicate"},
		{styleGNU, "-az", "", "tt: unknown option -z"},
		{styleGNU, "--all=yes", "", "tt --all: option takes no value"},
		{styleGNU, "-n", "", "tt -n: missing value"},
		// "--" ends the options; after it "-o" is an operand.
		{styleGNU, "file -- -o /x", "op:file op:-o op:/x", ""},
		// Options end at the first operand for a stop-at-operand parser.
		{styleGNUStop, "-a cmd -o /x", "all op:cmd op:-o op:/x", ""},
		// Without abbreviations a prefix is unknown.
		{styleExact, "--li 5", "", "tt: unknown option --li"},
		// pflag: -n=5, bool values, a flag turned off by its value.
		{stylePflag, "-n=5 --all=false -a=true", "lines=5 all=false all=true", ""},
		{stylePflag, "--upload=false", "upload=false", ""},
		{stylePflag, "--upload=true", "", "tt --upload: sends data"},
		// Go's flag package: single- or double-dash names, no clusters.
		{styleGoFlag, "-lines=3 --all -v x -o y", "lines=3 all v op:x op:-o op:y", ""},
		// Dynamic words: one that may be an option is refused; one that
		// cannot start with "-" is an operand; an unquoted expansion may
		// split into options anywhere before "--".
		{styleGNU, `"$x"`, "", "tt: dynamic argument where an option may be"},
		{styleGNU, `"/var/$x"`, "op:/var/", ""},
		{styleGNU, `/var/$x`, "", "tt: unquoted expansion may split into options"},
		{styleGNU, `-- $x`, "op:", ""},
		{styleGNU, `-n $x`, "", "tt -n: unquoted expansion in an option value may split into options"},
		{styleGNU, `-n "$x"`, "lines=", ""},
	}
	for _, tt := range tests {
		v, scan := scanResult(t, testTool(tt.style), tt.line)
		switch {
		case tt.reason == "" && (!v.ReadOnly() || scan != tt.scan):
			t.Errorf("%q: %s %v scan %q, want read-only with scan %q", tt.line, v.Intent, v.Reasons, scan, tt.scan)
		case tt.reason != "" && (v.ReadOnly() || !hasReasonPrefix(v.Reasons, tt.reason)):
			t.Errorf("%q: %s %v, want write_or_unknown with reason %q", tt.line, v.Intent, v.Reasons, tt.reason)
		}
	}
}

// TestToolTables walks every grammar and checks that it is complete: each
// verb a check can run has one, each refusing option says why, and each
// table builds without duplicate names (opts panics at init otherwise).
func TestToolTables(t *testing.T) {
	seen := map[*tool]bool{}
	var walk func(path string, tl *tool)
	checkTable := func(path string, ot *optTable) {
		if ot == nil {
			return
		}
		for i := range ot.opts {
			r := optRef{ot, i}
			info := r.info()
			if r.key() == "" {
				t.Errorf("%s: option %d has no key", path, i)
			}
			if info.eff != effRead && info.msg == "" {
				t.Errorf("%s: option %s refuses without a reason", path, r.key())
			}
		}
	}
	walk = func(path string, tl *tool) {
		if seen[tl] {
			return
		}
		seen[tl] = true
		checkTable(path, tl.opts)
		if tl.verbs == nil {
			return
		}
		for i, name := range tl.verbs.names {
			v := tl.verbs.rules[i]
			vp := path + " " + name
			switch {
			case v.class == ruleCheck && v.check == nil && v.sub == nil:
				t.Errorf("%s: a checked verb without a check", vp)
			case v.class == ruleWrite && v.risk == "":
				t.Errorf("%s: a writing verb without a risk", vp)
			}
			checkTable(vp, v.opts)
			if v.sub != nil {
				walk(vp, v.sub)
			}
		}
	}
	n := 0
	for _, g := range toolGroups {
		for name, tl := range g {
			walk(name, tl)
			n++
		}
	}
	if n < 140 {
		t.Errorf("only %d commands have grammars", n)
	}
}

// TestReadEndpoints: a URL is a built-in read only by its exact shape and
// with only the parameters its endpoint reads.
func TestReadEndpoints(t *testing.T) {
	tests := []struct {
		path, query string
		read        bool
	}{
		{"/healthz", "", true}, {"/healthz", "verbose", true}, {"/healthz/", "", true},
		{"/-/healthy", "", true}, {"/metrics", "", true}, {"/metrics", "name[]=up", true},
		{"/api/v1/query", "query=up&time=1", true}, {"/api/v1/label/job/values", "", true},
		{"/api/v2/alerts", "silenced=false", true}, {"/_cat/indices/logs-1", "v&h=index", true},
		{"/v1/health/state/critical", "", true}, {"/containers/json", "all=1", true},
		// Not an endpoint's shape, or a parameter it does not read.
		{"/", "", false}, {"/healthz/x/y", "", false}, {"/metrics", "action=reset", false},
		{"/api/v1/admin/tsdb/delete_series", "", false}, {"/api/v1/query", "query=up&x=1", false},
		{"/manager/text/undeploy", "path=/app", false}, {"/solr/admin/cores", "action=UNLOAD", false},
		{"/job/x/build", "token=t", false}, {"/metrics/../admin", "", false}, {"/%6detrics", "", false},
		{"/api/v1/query", "query=up&query=x%26", true}, {"/api/v1/query", "qu%65ry=up", false},
		{"/readyz", "verbose&", false},
	}
	for _, tc := range tests {
		if _, got := readEndpoint(tc.path, tc.query, nil); got != tc.read {
			t.Errorf("readEndpoint(%q, %q) = %v, want %v", tc.path, tc.query, got, tc.read)
		}
	}
}

func TestURLPrefixes(t *testing.T) {
	good := map[string][3]string{
		"http://Prom:9090/api/v1/": {"http", "prom:9090", "/api/v1/"},
		"https://x/metrics":        {"https", "x:443", "/metrics"},
		"http://[::1]:8080":        {"http", "[::1]:8080", "/"},
		"/readyz":                  {"", "", "/readyz"},
	}
	for in, want := range good {
		p, err := ParseURLPrefix(in)
		if err != nil || p.scheme != want[0] || p.host != want[1] || p.path != want[2] || p.String() != in {
			t.Errorf("ParseURLPrefix(%q) = %+v, %v; want %v", in, p, err, want)
		}
	}
	for _, in := range []string{"", "ftp://x/", "http://", "http://u:p@x/", "http://x/a?b=c", "http://x/a#f",
		"http://x/%2e%2e/", "http://x/a/../b", "http://x//a", "http://x:port/", "x/metrics", "/a/./b", `http://x\y/`} {
		if _, err := ParseURLPrefix(in); err == nil {
			t.Errorf("ParseURLPrefix(%q): want an error", in)
		}
	}
}

func TestURLMatching(t *testing.T) {
	prefixes := func(ss ...string) Options {
		var o Options
		for _, s := range ss {
			p, err := ParseURLPrefix(s)
			if err != nil {
				t.Fatal(err)
			}
			o.HTTPReadURLs = append(o.HTTPReadURLs, p)
		}
		return o
	}
	o := prefixes("http://localhost:9090/api/v1/", "https://admin:8443/status", "/readyz",
		"/api/v1/nodes/n1/proxy/metrics")
	cluster := map[string][]Destination{"kubernetes": {mustDest("kube-api:6443")}}
	o.Services = cluster
	tests := []struct {
		cmd  string
		read bool
	}{
		{"curl 'http://localhost:9090/api/v1/query_range?query=up&start=1&end=2'", true},
		{"curl 'http://LOCALHOST:9090/api/v1/query?query=up&start=1'", true},
		{"curl 'http://localhost:80/api/v1/query?start=1'", false},
		{"curl 'http://localhost:9090/api/v2/query?start=1'", false},
		{"curl 'http://localhost:9090/api/v1/../v2/admin/delete'", false},
		{"curl 'http://localhost:9090/api/v1/%2e%2e/admin/delete'", false},
		{"curl https://admin:8443/status/restart", true},
		{"curl https://admin:8443/statusx/restart", false},
		{"curl http://admin:8443/status/restart", false},
		{"curl 'https://admin@evil:8443/status/restart'", false},
		{"kubectl get --raw /readyz", true},
		{"kubectl get --raw '/readyz?verbose'", true},
		{"kubectl get --raw '/readyz?verbose&x=1'", false},
		{"kubectl get --raw /api/v1/nodes/n1/proxy/metrics/cadvisor", true},
		{"kubectl get --raw /api/v1/nodes/n2/proxy/metrics", false},
		{"curl http://localhost:8001/api/v1/nodes/n1/proxy/metrics", false},
		{"kubectl get --raw /readyz/../api/v1/namespaces/x/services/y/proxy/reset", false},
	}
	for _, tt := range tests {
		v := o.Classify(tt.cmd, DialectBash)
		if v.ReadOnly() != tt.read {
			t.Errorf("%q with listings: read=%v %v, want read=%v", tt.cmd, v.ReadOnly(), v.Reasons, tt.read)
		}
		builtin := strings.Contains(tt.cmd, "readyz") || strings.Contains(tt.cmd, "/api/v1/query")
		if tt.read && !builtin && (Options{Services: cluster}).Classify(tt.cmd, DialectBash).ReadOnly() {
			t.Errorf("%q is read-only without a listing", tt.cmd)
		}
	}
}
