package command

import "strings"

// fileCheckers cover tools that read files but have options that write,
// run programs, or keep running.
var fileCheckers = map[string]checkFunc{
	"rm":      checkRm,
	"tee":     constructCheck(RiskMedium, "writes its input to files"),
	"tail":    checkTail,
	"less":    checkPager,
	"more":    checkPager,
	"most":    checkPager,
	"pg":      checkPager,
	"man":     checkMan,
	"vi":      checkEditor,
	"vim":     checkEditor,
	"nvim":    checkEditor,
	"view":    checkEditor,
	"vimdiff": checkEditor,
	"nano":    checkEditor,
	"pico":    checkEditor,
	"emacs":   checkEditor,
	"joe":     checkEditor,
	"mcedit":  checkEditor,
	"micro":   checkEditor,
	"ed":      checkEditor,
	"ex":      checkEditor,
	"find":    checkFind,
	"sort":    checkSort,
	"uniq":    checkUniq,
	"tar":     checkTar,
	"unzip":   checkUnzip,
	"gzip":    checkCompressor,
	"gunzip":  checkCompressor,
	"bzip2":   checkCompressor,
	"bunzip2": checkCompressor,
	"xz":      checkCompressor,
	"unxz":    checkCompressor,
	"lzma":    checkCompressor,
	"unlzma":  checkCompressor,
	"zstd":    checkCompressor,
	"unzstd":  checkCompressor,
	"pigz":    checkCompressor,
	"lz4":     checkCompressor,
	"xxd":     checkXxd,
	"tree":    checkTree,
	"file":    checkFile,
	"yq":      checkYq,
	"xmllint": checkXmllint,
	"rg":      checkRg,
	"fd":      checkFd,
	"fdfind":  checkFd,
	"awk":     checkAwk,
	"gawk":    checkAwk,
	"mawk":    checkAwk,
	"nawk":    checkAwk,
	"sed":     checkSed,
}

func checkRm(c *classifier, k *call) {
	risk := RiskMedium
	for _, a := range k.args {
		if !a.static || a.s == "--recursive" || a.s == "--force" ||
			len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsAny(a.s, "rRf") {
			risk = RiskHigh
		}
	}
	c.writer("rm", risk, "known writer")
}

var tailSpec = optSpec{shortArg: "cns", longArg: []string{"bytes", "lines", "sleep-interval", "pid", "max-unchanged-stats"}}

// checkTail: tail only reads; -f/-F/--follow never end, whatever -n says.
func checkTail(c *classifier, k *call) {
	f, counted := newFollow(), false
	s := scanOpts(&tailSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokShort:
			switch {
			case t.name == "f" || t.name == "F":
				f.dropShort(c, k, t.i, "fF", "cns")
			case t.name == "n" || t.name == "c" || t.name[0] >= '0' && t.name[0] <= '9':
				counted = true
			}
		case tokLong:
			switch {
			case isPrefixOf(t.name, "follow") && len(t.name) >= 2:
				f.dropArg(t.i)
			case t.name == "lines" || t.name == "bytes":
				counted = true
			}
		case tokOperand:
			if strings.HasPrefix(t.val, "+") {
				counted = true
			}
		}
	}
	var extra edit
	if !counted {
		extra.insert = "-n " + rewriteLines
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

// checkPager: less, more and most only show files, but wait for a person.
// less can also run commands (+!cmd) and write a log file (-o).
func checkPager(c *classifier, k *call) {
	plain := true
	for _, a := range k.args {
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		// less can run commands (+!cmd), write a log file (-o, -O) and load
		// a lesskey file that sets LESSOPEN (-k, --lesskey*).
		if strings.HasPrefix(a.s, "+") || k.name == "less" && (len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsAny(a.s, "oOk") ||
			strings.HasPrefix(a.s, "--log-file") || strings.HasPrefix(a.s, "--LOG-FILE") || strings.HasPrefix(a.s, "--lesskey")) {
			c.unknown(k.name+" "+a.s, "pager option may run commands or write files")
			return
		}
		if strings.HasPrefix(a.s, "-") {
			plain = false
		}
	}
	rewrite := ""
	if plain && len(k.args) > 0 {
		if cat := c.rebuildWord(k, "cat"); cat != "" {
			rewrite = cat
		}
	}
	c.unbounded(k.ctx, BoundPager, rewrite)
	c.readOnly(k)
}

// rebuildWord rewrites call k with a different command word.
func (c *classifier) rebuildWord(k *call, word string) string {
	body := c.rebuild(k, edit{insertAfter: -1})
	raw := c.raw(k.word, k.ctx)
	if body == "" || raw == "" {
		return ""
	}
	start := k.word.w.Pos().Offset()
	return body[:start] + word + body[start+uint(len(raw)):]
}

var manSpec = optSpec{shortArg: "PsSMLCRE", longArg: []string{"pager", "sections", "manpath", "locale", "config-file", "encoding"}}

func checkMan(c *classifier, k *call) {
	paged := true
	s := scanOpts(&manSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokOperand:
		case t.name == "P" || t.name == "pager":
			if !t.valStatic || t.val != "cat" {
				c.unknown("man -P", "runs a pager program")
				return
			}
			paged = false
		case matchOneOf(t.name, "k", "f", "w", "W", "apropos", "whatis", "where", "path", "location"):
			paged = false
		case matchOneOf(t.name, "s", "S", "M", "L", "a", "all", "sections", "manpath", "locale", "l", "local-file", "E", "encoding", "C", "config-file"):
		default:
			c.badOption(k, t)
			return
		}
	}
	if paged {
		c.unbounded(k.ctx, BoundPager, c.rebuild(k, edit{insertAfter: -1, insert: "-P cat"}))
	}
	c.readOnly(k)
}

func checkEditor(c *classifier, k *call) {
	c.unknown(k.name, "editor can write files")
	c.unbounded(k.ctx, BoundPager, "")
}

// findArgs lists find's tests and options that take one value.
var findArgs = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true,
	"-iwholename": true, "-regex": true, "-iregex": true, "-lname": true, "-ilname": true,
	"-type": true, "-xtype": true, "-user": true, "-group": true, "-uid": true, "-gid": true,
	"-perm": true, "-size": true, "-mtime": true, "-atime": true, "-ctime": true,
	"-mmin": true, "-amin": true, "-cmin": true, "-newer": true, "-anewer": true,
	"-cnewer": true, "-samefile": true, "-inum": true, "-links": true, "-maxdepth": true,
	"-mindepth": true, "-fstype": true, "-context": true, "-used": true, "-regextype": true,
	"-files0-from": true, "-printf": true,
}

// findFlags lists find's value-less tests, actions and operators that
// neither write nor run anything.
var findFlags = map[string]bool{
	"-print": true, "-print0": true, "-ls": true, "-prune": true, "-quit": true,
	"-true": true, "-false": true, "-empty": true, "-readable": true, "-writable": true,
	"-executable": true, "-nouser": true, "-nogroup": true, "-depth": true, "-d": true,
	"-mount": true, "-xdev": true, "-noleaf": true, "-ignore_readdir_race": true,
	"-noignore_readdir_race": true, "-daystart": true, "-follow": true, "-warn": true,
	"-nowarn": true, "-not": true, "!": true, "-a": true, "-and": true, "-o": true,
	"-or": true, "(": true, ")": true, ",": true, "-help": true, "--help": true,
	"-version": true, "--version": true,
}

// findWriters are find actions that write files.
var findWriters = map[string]int{"-delete": 0, "-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}

// checkFind walks find's expression: tests are fine, -delete and -fprint*
// write, and -exec/-execdir/-ok/-okdir run a command that is classified in
// turn (find substitutes {} with paths, which never look like options).
func checkFind(c *classifier, k *call) {
	args := k.args
	i := 0
	// Leading options: -H -L -P -D debugopts -Olevel.
	for i < len(args) && args[i].static && (args[i].s == "-H" || args[i].s == "-L" || args[i].s == "-P" || strings.HasPrefix(args[i].s, "-O")) {
		i++
	}
	if i < len(args) && args[i].static && args[i].s == "-D" {
		i += 2
	}
	ran := false
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			c.unknown("find", "dynamic argument")
			return
		}
		s := a.s
		switch {
		case findFlags[s]:
		case findArgs[s] || strings.HasPrefix(s, "-newer") && len(s) == len("-newerXY"):
			i++
		case s == "-exec" || s == "-execdir" || s == "-ok" || s == "-okdir":
			end := i + 1
			for end < len(args) && !(args[end].static && (args[end].s == ";" ||
				args[end].s == "+" && args[end-1].static && args[end-1].s == "{}")) {
				end++
			}
			if end >= len(args) {
				c.unknown("find "+s, "unterminated command")
				return
			}
			if end == i+1 {
				c.unknown("find "+s, "empty command")
				return
			}
			ctx := k.ctx
			ctx.piped, ctx.fed = false, true
			c.runInner(k, args[i+1:end], ctx)
			ran = true
			i = end
		default:
			if n, ok := findWriters[s]; ok {
				c.writer("find "+s, RiskHigh, "known writer")
				i += n
				continue
			}
			if strings.HasPrefix(s, "-") && len(s) > 1 {
				c.unknown("find "+s, "option not known to be read-only")
				return
			}
			// A starting point.
		}
	}
	if !ran {
		c.readOnly(k)
	}
}

var sortSpec = optSpec{
	shortArg: "kotST",
	longArg:  []string{"key", "output", "field-separator", "buffer-size", "temporary-directory", "parallel", "batch-size", "compress-program", "files0-from", "sort", "random-source"},
}

// checkSort: sort reads, unless -o/--output names a file or a compressor
// program runs.
func checkSort(c *classifier, k *call) {
	s := scanOpts(&sortSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokOperand:
			continue
		case tokShort:
			switch {
			case t.name == "o":
				c.writer("sort -o", RiskMedium, "writes its output to a file")
				return
			case strings.Contains("ktSTbdfghiMnRrsuVcCmz", t.name):
				continue
			}
		case tokLong:
			switch {
			case isPrefixOf(t.name, "output") && len(t.name) >= 2:
				c.writer("sort --output", RiskMedium, "writes its output to a file")
				return
			case isPrefixOf(t.name, "compress-program") && len(t.name) >= 2:
				c.construct("sort --compress-program", RiskMedium, "runs a program")
				return
			case matchOneOf(t.name, "key", "field-separator", "buffer-size", "temporary-directory",
				"parallel", "batch-size", "files0-from", "sort", "random-source",
				"ignore-leading-blanks", "dictionary-order", "ignore-case", "general-numeric-sort",
				"human-numeric-sort", "ignore-nonprinting", "month-sort", "numeric-sort",
				"random-sort", "reverse", "stable", "unique", "version-sort", "check", "merge",
				"zero-terminated", "debug"):
				continue
			}
		}
		c.badOption(k, t)
		return
	}
	c.readOnly(k)
}

var uniqSpec = optSpec{shortArg: "fsw", longArg: []string{"skip-fields", "skip-chars", "check-chars"}}

// checkUniq: uniq IN OUT writes OUT.
func checkUniq(c *classifier, k *call) {
	operands := 0
	s := scanOpts(&uniqSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokOperand:
			operands++
		case t.kind == tokShort && strings.Contains("fswcdDiuz", t.name):
		case t.kind == tokLong && matchOneOf(t.name, "skip-fields", "skip-chars", "check-chars",
			"count", "repeated", "all-repeated", "unique", "ignore-case", "zero-terminated", "group"):
		default:
			c.badOption(k, t)
			return
		}
	}
	if operands > 1 {
		c.writer("uniq", RiskMedium, "writes its second operand")
		return
	}
	c.readOnly(k)
}

// tarListShort are the short options allowed with tar's list mode; the
// ones in tarValued take a value.
const (
	tarListShort = "tfvzjJZaOCTXbipPkmR"
	tarValued    = "fCTXb"
)

var tarSpec = optSpec{shortArg: tarValued, longArg: []string{"file", "directory", "files-from", "exclude-from", "exclude", "blocking-factor", "occurrence", "quoting-style", "warning"}}

var tarListLong = []string{"list", "file", "verbose", "gzip", "gunzip", "ungzip", "bzip2", "xz", "lzma",
	"zstd", "lzip", "lzop", "auto-compress", "directory", "exclude", "exclude-from", "wildcards",
	"no-wildcards", "anchored", "no-anchored", "ignore-case", "numeric-owner", "full-time", "utc",
	"quoting-style", "show-transformed-names", "occurrence", "to-stdout", "files-from", "null",
	"verbatim-files-from", "blocking-factor", "warning", "absolute-names", "ignore-zeros", "totals"}

// checkTar: listing an archive (-t, tf, --list) reads; every other mode
// writes; options that run programs or write side files are unknown.
func checkTar(c *classifier, k *call) {
	args := k.args
	if len(args) > 0 && args[0].static && args[0].s != "" && args[0].s[0] != '-' {
		// Old-style bundled options: in "tzfb archive 20" each letter that
		// takes a value takes the next word, in order.
		var ok bool
		if args, ok = unbundleTar(args); !ok {
			c.unknown("tar "+k.args[0].s, "option not known to be read-only")
			return
		}
	}
	list := false
	s := scanOpts(&tarSpec, args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokOperand:
			continue
		case tokShort:
			switch {
			case strings.Contains("cxruAd", t.name):
				c.writer("tar -"+t.name, tarRisk(t.name), "writes files or archives")
				return
			case t.name == "t":
				list = true
				continue
			case t.name == "f" && (!t.valStatic || strings.Contains(t.val, ":")):
				c.unknown("tar -f", "archive may be remote")
				return
			case strings.Contains(tarListShort, t.name):
				continue
			}
		case tokLong:
			switch {
			case matchOneOf(t.name, "create", "extract", "get", "append", "update", "concatenate", "catenate", "delete", "diff", "compare"):
				c.writer("tar --"+t.name, RiskMedium, "writes files or archives")
				return
			case t.name == "list":
				list = true
				continue
			case t.name == "file" && (!t.valStatic || strings.Contains(t.val, ":")):
				c.unknown("tar --file", "archive may be remote")
				return
			case matchOneOf(t.name, tarListLong...):
				continue
			}
		}
		c.badOption(k, t)
		return
	}
	if !list {
		c.unknown("tar", "no mode known to be read-only")
		return
	}
	c.read("tar -t", "lists an archive")
}

// unbundleTar turns old-style tar options into separate ones.
func unbundleTar(args []arg) ([]arg, bool) {
	out := make([]arg, 0, len(args)+len(args[0].s))
	next := 1
	for _, ch := range args[0].s {
		if !strings.ContainsRune(tarListShort+"cxruAd", ch) {
			return nil, false
		}
		out = append(out, lit("-"+string(ch)))
		if strings.ContainsRune(tarValued, ch) {
			if next >= len(args) {
				return nil, false
			}
			out = append(out, args[next])
			next++
		}
	}
	return append(out, args[next:]...), true
}

func tarRisk(mode string) Risk {
	if mode == "x" {
		return RiskMedium
	}
	return RiskLow
}

// checkUnzip: listing, testing and extracting to stdout read; anything else
// extracts files.
func checkUnzip(c *classifier, k *call) {
	list := false
	for _, a := range k.args {
		if !a.static {
			c.unknown("unzip", "dynamic argument")
			return
		}
		if len(a.s) < 2 || a.s[0] != '-' {
			continue
		}
		for _, ch := range a.s[1:] {
			switch {
			case strings.ContainsRune("lvtZpc", ch):
				list = true
			case strings.ContainsRune("qzCL", ch):
			default:
				if list {
					c.unknown("unzip -"+string(ch), "option not known to be read-only")
					return
				}
				c.writer("unzip", RiskMedium, "extracts files")
				return
			}
		}
	}
	if !list {
		c.writer("unzip", RiskMedium, "extracts files")
		return
	}
	c.read("unzip -l", "lists an archive")
}

var compressorSpec = optSpec{shortArg: "STo", longArg: []string{"suffix", "threads", "output"}}

// checkCompressor: gzip and friends replace files unless they write to
// stdout (-c), list (-l) or test (-t).
func checkCompressor(c *classifier, k *call) {
	toStdout := strings.HasSuffix(k.name, "cat")
	s := scanOpts(&compressorSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokOperand:
			continue
		case tokShort:
			switch {
			case t.name == "o":
				c.writer(k.name+" -o", RiskMedium, "writes a file")
				return
			case t.name == "c" || t.name == "t" || t.name == "l" && k.name != "lz4":
				toStdout = true
				continue
			case strings.Contains("dfqvknNrST123456789", t.name):
				continue
			}
		case tokLong:
			switch {
			case matchOneOf(t.name, "stdout", "to-stdout", "list", "test"):
				toStdout = true
				continue
			case matchOneOf(t.name, "decompress", "uncompress", "force", "quiet", "verbose", "keep",
				"no-name", "name", "recursive", "suffix", "threads", "fast", "best"):
				continue
			}
		}
		c.badOption(k, t)
		return
	}
	if !toStdout {
		c.writer(k.name, RiskMedium, "replaces files")
		return
	}
	c.read(k.name, "lists, tests or writes to stdout only")
}

// checkXxd: a second operand is an output file.
func checkXxd(c *classifier, k *call) {
	operands := 0
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("xxd", "dynamic argument")
			return
		}
		switch strings.TrimLeft(a.s, "-") {
		case "c", "cols", "g", "groupsize", "l", "len", "s", "seek", "o", "offset", "n", "name", "R":
			if strings.HasPrefix(a.s, "-") {
				i++
				continue
			}
		}
		if !strings.HasPrefix(a.s, "-") || a.s == "-" {
			operands++
		}
	}
	if operands > 1 {
		c.writer("xxd", RiskMedium, "writes its second operand")
		return
	}
	c.readOnly(k)
}

// checkTree: -o writes the listing to a file; -R with -H writes HTML files.
func checkTree(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("tree", "dynamic argument")
			return
		}
		if len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsAny(a.s, "oR") {
			c.writer("tree -o", RiskLow, "writes a file")
			return
		}
		if strings.HasPrefix(a.s, "--") && isPrefixOf(strings.SplitN(a.s[2:], "=", 2)[0], "output") {
			c.writer("tree "+a.s, RiskLow, "writes a file")
			return
		}
	}
	c.readOnly(k)
}

var fileSpec = optSpec{shortArg: "eFfmP", longArg: []string{"exclude", "exclude-quiet", "separator", "files-from", "magic-file", "parameter"}}

// checkFile: file -C compiles a magic database to a file.
func checkFile(c *classifier, k *call) {
	s := scanOpts(&fileSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		if t.kind == tokDynamic {
			c.unknown("file", "dynamic argument")
			return
		}
		if t.kind == tokShort && t.name == "C" || t.kind == tokLong && isPrefixOf(t.name, "compile") {
			c.writer("file -C", RiskLow, "writes a magic database")
			return
		}
	}
	c.readOnly(k)
}

// checkYq: -i/--inplace edits files and -s/--split-exp writes them.
func checkYq(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("yq", "dynamic argument")
			return
		}
		s := a.s
		if len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s, "is") ||
			strings.HasPrefix(s, "--") && matchesAnyLong(strings.SplitN(s[2:], "=", 2)[0], "inplace", "in-place", "split-exp") {
			c.writer("yq "+s, RiskMedium, "writes files")
			return
		}
	}
	c.readOnly(k)
}

// checkXmllint: --output writes a file and --shell can save files.
func checkXmllint(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("xmllint", "dynamic argument")
			return
		}
		name := strings.SplitN(strings.TrimLeft(a.s, "-"), "=", 2)[0]
		if strings.HasPrefix(a.s, "-") && (name == "o" || len(name) >= 2 && isPrefixOf(name, "output") || isPrefixOf(name, "shell")) {
			c.writer("xmllint "+a.s, RiskLow, "writes files")
			return
		}
	}
	c.readOnly(k)
}

// checkRg: ripgrep's --pre runs a program on every file.
func checkRg(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown("rg", "dynamic argument")
			return
		}
		if a.s == "--pre" || strings.HasPrefix(a.s, "--pre=") {
			c.construct("rg --pre", RiskMedium, "runs a program")
			return
		}
	}
	c.readOnly(k)
}

// checkFd: fd's -x/-X/--exec run commands.
func checkFd(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		s := a.s
		if strings.HasPrefix(s, "--exec") || len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s, "xX") {
			c.unknown(k.name+" --exec", "runs commands")
			return
		}
	}
	c.readOnly(k)
}
