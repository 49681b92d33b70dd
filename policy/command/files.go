package command

import "strings"

// Grammars of file and text tools that read but have options that write,
// run programs, or keep running.

var fileTools = map[string]*tool{
	"tail":    tailTool,
	"less":    lessTool,
	"more":    moreTool,
	"man":     manTool,
	"sort":    sortTool,
	"uniq":    uniqTool,
	"gzip":    gzipTool("gzip"),
	"gunzip":  gzipTool("gunzip"),
	"pigz":    gzipTool("pigz"),
	"bzip2":   bzipTool("bzip2"),
	"bunzip2": bzipTool("bunzip2"),
	"xz":      xzTool("xz"),
	"unxz":    xzTool("unxz"),
	"lzma":    xzTool("lzma"),
	"unlzma":  xzTool("unlzma"),
	"zstd":    zstdTool("zstd"),
	"unzstd":  zstdTool("unzstd"),
	"zstdcat": zstdTool("zstdcat"),
	"zstdmt":  zstdTool("zstdmt"),
	"lz4":     lz4Tool,
	"file":    fileTool,
	"nm":      binutilsTool("nm", nmOpts),
	"objdump": binutilsTool("objdump", objdumpOpts),
	"readelf": binutilsTool("readelf", readelfOpts),
	"size":    binutilsTool("size", sizeOpts),
	"strings": binutilsTool("strings", stringsOpts),
	"tree":    treeTool,
	"yq":      yqTool,
	"xmllint": xmllintTool,
	"rg":      rgTool,
	"fd":      fdTool,
	"fdfind":  fdTool,
	"awk":     awkTool("awk"),
	"gawk":    awkTool("gawk"),
	"mawk":    awkTool("mawk"),
	"nawk":    awkTool("nawk"),
	"sed":     sedTool,
	"diff3":   diff3Tool,
}

// diff3 (GNU) compares three files to stdout; --diff-program names the
// program it runs to compare them.
var diff3Tool = &tool{
	name: "diff3", style: styleGNU,
	opts: opts(
		reads(`-A|--show-all -e|--ed -E|--show-overlap -3|--easy-only -x|--overlap-only -X -i
			-m|--merge -a|--text --strip-trailing-cr -T|--initial-tab -L|--label= --help -v|--version`),
		execs("runs a program to compare the files", `--diff-program=`),
	),
}

// fileCheckers are file tools with parsers of their own.
var fileCheckers = map[string]checkFunc{
	"rm":      checkRm,
	"tee":     constructCheck(RiskMedium, "writes its input to files"),
	"most":    checkPlainPager,
	"pg":      checkPlainPager,
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
	"tar":     checkTar,
	"unzip":   checkUnzip,
	"xxd":     checkXxd,
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

var tailTool = &tool{
	name: "tail", style: styleGNU, digitOpts: true,
	opts: opts(reads(`-c|--bytes= -f|--follow[--=] -F -n|--lines= --max-unchanged-stats= --pid=
		-q|--quiet|--silent --retry -s|--sleep-interval= -v|--verbose -z|--zero-terminated
		--help --version --debug`)),
	check: checkTail,
}

// checkTail: tail only reads; -f/-F/--follow never end, whatever -n says.
func checkTail(c *classifier, k *call) {
	f := newFollow()
	f.dropKeys(c, k, "follow", "F")
	counted := k.p.hasAny("lines", "bytes", "#")
	for _, i := range k.p.ops {
		if strings.HasPrefix(k.args[i].s, "+") {
			counted = true
		}
	}
	var extra edit
	if !counted {
		extra.insert = "-n " + rewriteLines
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

// less only shows files, but waits for a person. It also writes a log
// file (-o, -O), loads lesskey files that can set LESSOPEN (-k,
// --lesskey-src, --lesskey-content) and runs initial commands (+cmd),
// which can run shell commands or save files.
var lessTool = &tool{
	name: "less", style: styleGNU, digitOpts: true,
	opts: opts(
		reads(`-?|--help -a|--search-skip-screen -A|--SEARCH-SKIP-SCREEN -b|--buffers=
			-B|--auto-buffers -c|--clear-screen -C|--CLEAR-SCREEN -d|--dumb -D|--color=
			-e|--quit-at-eof -E|--QUIT-AT-EOF -f|--force -F|--quit-if-one-screen
			-g|--hilite-search -G|--HILITE-SEARCH -h|--max-back-scroll= -i|--ignore-case
			-I|--IGNORE-CASE -j|--jump-target= -J|--status-column -K|--quit-on-intr
			-L|--no-lessopen -m|--long-prompt -M|--LONG-PROMPT -n|--line-numbers
			-N|--LINE-NUMBERS -p|--pattern= -P|--prompt= -q|--quiet|--silent -Q|--QUIET|--SILENT
			-r|--raw-control-chars -R|--RAW-CONTROL-CHARS -s|--squeeze-blank-lines
			-S|--chop-long-lines -t|--tag= -T|--tag-file= -u|--underline-special
			-U|--UNDERLINE-SPECIAL -V|--version -w|--hilite-unread -W|--HILITE-UNREAD -x|--tabs=
			-X|--no-init -y|--max-forw-scroll= -z|--window= -"|--quotes= -~|--tilde -#|--shift=
			--file-size --follow-name --incsearch --line-num-width= --mouse --MOUSE --no-keypad
			--no-histdups --rscroll= --status-col-width= --use-backslash --use-color
			--wheel-lines= --exit-follow-on-close --header= --intr= --no-number-headers
			--no-search-headers --no-vbell --proc-backspace --proc-return --proc-tab
			--redraw-on-quit --search-options= --show-preproc-errors --status-line --wordwrap
			--no-edit-warn --match-shift=`),
		writes(RiskLow, "writes a log file", `-o|--log-file= -O|--LOG-FILE=`),
		writes(RiskLow, "saves marks to the history file", `--save-marks`),
		execs("loads key bindings that can set an input preprocessor", `-k|--lesskey-file= --lesskey-src=
			--lesskey-content=`),
	),
	check: checkLess,
}

// checkLess: +cmd runs less commands (which include ! shell commands);
// otherwise less is a pager, and cat is the bounded equivalent.
func checkLess(c *classifier, k *call) {
	for _, i := range k.p.ops {
		if a := k.args[i]; !a.static || strings.HasPrefix(a.s, "+") {
			c.construct(k.name+" "+c.displayWord(a, k.ctx), RiskMedium, "initial commands may run programs or save files")
			return
		}
	}
	rewrite := ""
	if len(k.p.uses) == 0 && len(k.p.ops) > 0 {
		rewrite = c.rebuildWord(k, "cat")
	}
	c.unbounded(k.ctx, BoundPager, rewrite)
	c.readOnly(k)
}

var moreTool = &tool{
	name: "more", style: styleGNU, digitOpts: true,
	opts: opts(reads(`-d|--silent -l|--logical -f|--no-pause -p|--print-over -c|--clean-print
		-s|--squeeze -u|--plain -n|--lines= -e|--exit-on-eof -h|--help -V|--version`)),
	check: func(c *classifier, k *call) {
		for _, i := range k.p.ops {
			a := k.args[i]
			if !a.static || strings.HasPrefix(a.s, "+") && !isNumber(a.s[1:]) && !strings.HasPrefix(a.s, "+/") {
				c.construct(k.name+" "+c.displayWord(a, k.ctx), RiskMedium, "initial command")
				return
			}
		}
		rewrite := ""
		if len(k.p.uses) == 0 && len(k.p.ops) > 0 {
			rewrite = c.rebuildWord(k, "cat")
		}
		c.unbounded(k.ctx, BoundPager, rewrite)
		c.readOnly(k)
	},
}

// checkPlainPager: most and pg only show files; their options are not
// tabled, so only plain file operands are read-only.
func checkPlainPager(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+") {
			c.unknown(k.name+" "+c.displayWord(a, k.ctx), "pager option not known to be read-only")
			return
		}
	}
	rewrite := ""
	if len(k.args) > 0 {
		rewrite = c.rebuildWord(k, "cat")
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

// man (man-db, argp: abbreviations accepted) shows pages through a pager.
// -P names the pager (only cat is read-only), -H a browser, -C a
// configuration that defines the programs man runs; --update and
// --catman rewrite its caches.
var manTool = &tool{
	name: "man", style: styleGNU,
	opts: opts(
		reads(`-C|--config-file= -d|--debug -D|--default --warnings[=] -f|--whatis -k|--apropos
			-K|--global-apropos -l|--local-file -w|--where|--path|--location -W|--where-cat|--location-cat
			-e|--extension= -i|--ignore-case -I|--match-case --regex --wildcard --names-only
			-a|--all --no-subpages -L|--locale= -m|--systems= -M|--manpath= -S|-s|--sections=
			-7|--ascii -E|--encoding= --no-hyphenation|--nh --no-justification|--nj -p|--preprocessor=
			-t|--troff -T|--troff-device[=] -Z|--ditroff -r|--prompt= -R|--recode= -?|--help
			--usage -V|--version`),
		readsVal(manPager, `-P|--pager=`),
		execs("runs a browser or a viewer", `-H|--html[=] -X|--gxditview[=]`),
		writes(RiskLow, "rewrites man's caches", `-u|--update -c|--catman`),
	),
	check: checkMan,
}

func manPager(c *classifier, k *call, u *optUse) bool {
	if u.val.static && u.val.s == "cat" {
		return true
	}
	c.construct("man "+u.as, RiskMedium, "runs a pager program")
	return false
}

func checkMan(c *classifier, k *call) {
	// The configuration file defines the programs man runs.
	if k.p.has("config-file") {
		c.unknown("man -C", "configuration defines the programs man runs")
		return
	}
	if !k.p.hasAny("pager", "whatis", "apropos", "where", "where-cat", "help", "usage", "version") {
		c.unbounded(k.ctx, BoundPager, c.rebuild(k, edit{insertAfter: -1, insert: "-P cat"}))
	}
	c.readOnly(k)
}

func checkEditor(c *classifier, k *call) {
	c.unknown(k.name, "editor can write files")
	c.unbounded(k.ctx, BoundPager, "")
}

var sortTool = &tool{
	name: "sort", style: styleGNU,
	opts: opts(
		reads(`-b|--ignore-leading-blanks -d|--dictionary-order -f|--ignore-case
			-g|--general-numeric-sort -i|--ignore-nonprinting -M|--month-sort
			-h|--human-numeric-sort -n|--numeric-sort -R|--random-sort --random-source=
			-r|--reverse --sort= -V|--version-sort --batch-size= -c|--check[--=] -C --debug
			--files0-from= -k|--key= -m|--merge -s|--stable -S|--buffer-size=
			-t|--field-separator= -T|--temporary-directory= --parallel= -u|--unique
			-z|--zero-terminated --help --version`),
		writes(RiskMedium, "writes its output to a file", `-o|--output=`),
		execs("runs a program", `--compress-program=`),
	),
}

var uniqTool = &tool{
	name: "uniq", style: styleGNU,
	opts: opts(reads(`-c|--count -d|--repeated -D --all-repeated[=] -f|--skip-fields= --group[=]
		-i|--ignore-case -s|--skip-chars= -u|--unique -z|--zero-terminated -w|--check-chars=
		--help --version`)),
	check: outputOperand(1),
}

// outputOperand returns the check of a tool whose operand number n (from
// 0) is an output file: uniq IN OUT, xxd IN OUT, lz4 IN OUT. A glob or an
// expansion among the operands may become that output.
func outputOperand(n int) checkFunc {
	return func(c *classifier, k *call) {
		if c.noOutputOperand(k, n) {
			c.readOnly(k)
		}
	}
}

// noOutputOperand reports (recording a finding otherwise) that k has no
// operand number n and no operand that could expand into one.
func (c *classifier) noOutputOperand(k *call, n int) bool {
	if len(k.p.ops) > n {
		c.writer(k.name, RiskMedium, "writes its output operand")
		return false
	}
	for _, i := range k.p.ops {
		if a := k.args[i]; !a.static || a.glob {
			c.unknown(k.name+" "+c.displayWord(a, k.ctx), "glob or expansion may expand into the output operand")
			return false
		}
	}
	return true
}

// Compressors replace their input files unless they write to stdout
// (-c, or a *cat name), list (-l) or test (-t).

func gzipTool(name string) *tool {
	return &tool{
		name: name, style: styleGNU, check: checkCompressor,
		opts: opts(
			reads(`-c|--stdout|--to-stdout -d|--decompress|--uncompress -f|--force -h|--help -k|--keep
				-l|--list -L|--license -n|--no-name -N|--name -q|--quiet -r|--recursive --rsyncable
				-S|--suffix= --synchronous -t|--test -v|--verbose -V|--version -1|--fast -2 -3 -4 -5
				-6 -7 -8 -9|--best`),
		),
	}
}

func bzipTool(name string) *tool {
	return &tool{
		name: name, style: styleGNU, check: checkCompressor,
		opts: opts(reads(`-h|--help -d|--decompress -z|--compress -k|--keep -f|--force -t|--test
			-c|--stdout -q|--quiet -v|--verbose -L|--license -V|--version -s|--small -1|--fast -2 -3 -4
			-5 -6 -7 -8 -9|--best --repetitive-fast --repetitive-best`)),
	}
}

func xzTool(name string) *tool {
	return &tool{
		name: name, style: styleGNU, check: checkCompressor,
		opts: opts(reads(`-z|--compress -d|--decompress|--uncompress -t|--test -l|--list -k|--keep
			-f|--force -c|--stdout|--to-stdout --single-stream --no-sparse -S|--suffix= --files[=]
			--files0[=] -F|--format= -C|--check= --ignore-check -0 -1 -2 -3 -4 -5 -6 -7 -8 -9
			-e|--extreme -T|--threads= --block-size= --block-list= --flush-timeout=
			--memlimit-compress= --memlimit-decompress= --memlimit-mt-decompress=
			-M|--memlimit|--memory= --no-adjust --lzma1[=] --lzma2[=] --x86[=] --arm[=] --armthumb[=]
			--arm64[=] --powerpc[=] --ia64[=] --sparc[=] --riscv[=] --delta[=] --filters=
			--filters1= --filters2= --filters3= --filters4= --filters5= --filters6= --filters7=
			--filters8= --filters9= --filters-help -q|--quiet -v|--verbose -Q|--no-warn --robot
			--info-memory -h|--help -H|--long-help -V|--version`)),
	}
}

// zstd parses its own options: clusters such as -dc, values attached to
// -T, -B, -M and the level digits, long options spelled out.
func zstdTool(name string) *tool {
	return &tool{
		name: name, style: styleExact, check: checkCompressor, digitOpts: true,
		opts: opts(
			reads(`-k|--keep -d|--decompress|--uncompress -z|--compress -D= -f|--force -h -H|--help
				-V|--version -c|--stdout -v|--verbose -q|--quiet --progress --no-progress -r
				--filelist= --asyncio --no-asyncio --check --no-check -C --ultra --fast[=] --adapt[=]
				--long[=] --patch-from= -T= --threads= --single-thread --auto-threads= -B= --rsyncable
				--exclude-compressed --stream-size= --size-hint= --target-compressed-block-size=
				--no-dictID --compress-literals --no-compress-literals --row-match-finder
				--no-row-match-finder --format= -l|--list -t|--test -M= --memory= --sparse --no-sparse
				--pass-through --no-pass-through --show-default-cparams --mmap-dict --no-mmap-dict
				--content-size --no-content-size --zstd= --ignore-checksum --priority= -S -e= -i=
				-b=`),
			writes(RiskMedium, "writes or removes files", `-o= --rm --output-dir-flat= --output-dir-mirror=`),
			writes(RiskLow, "writes a trace log", `--trace=`),
			writes(RiskLow, "writes a dictionary", `--train --train-cover[=] --train-fastcover[=]
				--train-legacy[=] --maxdict= --dictID=`),
		),
	}
}

var lz4Tool = &tool{
	name: "lz4", style: styleExact, digitOpts: true,
	opts: opts(
		reads(`-d|--decompress|--uncompress -z|--compress -D= -f|--force -k|--keep -h -H|--help
			-V|--version -v|--verbose -q|--quiet -c|--stdout|--to-stdout -t|--test -m|--multiple -r
			-l -B= --no-frame-crc --frame-crc --content-size --no-content-size --list --sparse
			--no-sparse --favor-decSpeed --fast[=] --best -b= -e= -i= -0 -1 -2 -3 -4 -5 -6 -7 -8 -9`),
		writes(RiskMedium, "removes the source files", `--rm`),
	),
	check: func(c *classifier, k *call) {
		if k.p.hasAny("multiple", "r") || c.noOutputOperand(k, 1) {
			checkCompressor(c, k)
		}
	},
}

// checkCompressor: a compressor writes files unless it writes to stdout,
// lists or tests.
func checkCompressor(c *classifier, k *call) {
	// Keys of the modes that write nothing: lz4's -l is the legacy
	// compression format, not a listing, so short-only keys are named
	// explicitly per tool.
	if strings.HasSuffix(k.name, "cat") || k.p.hasAny("stdout", "list", "test", "help", "h",
		"version", "V", "long-help", "info-memory", "filters-help", "license") {
		c.read(k.name, "lists, tests or writes to stdout only")
		return
	}
	c.writer(k.name, RiskMedium, "replaces files")
}

var fileTool = &tool{
	name: "file", style: styleGNU,
	opts: opts(
		reads(`--help -v|--version -m|--magic-file= -z|--uncompress -Z|--uncompress-noreport
			-b|--brief -c|--checking-printout -e|--exclude= --exclude-quiet= -f|--files-from=
			-F|--separator= -i|--mime --apple --extension --mime-type --mime-encoding
			-k|--keep-going -l|--list -L|--dereference -h|--no-dereference -n|--no-buffer
			-N|--no-pad -0|--print0 -P|--parameter= -r|--raw -s|--special-files -S|--no-sandbox
			-d|--debug -E`),
		writes(RiskLow, "compiles a magic database to a file", `-C|--compile`),
		writes(RiskLow, "resets access times of the files it reads", `-p|--preserve-date`),
	),
}

// Binutils readers. nm takes --plugin, which loads a shared object
// (code) to read LTO objects; every binutils tool reads more options from
// a file named @FILE, which the classifier cannot see.
var (
	nmOpts = opts(
		reads(`-a|--debug-syms -A|-o|--print-file-name -B -C|--demangle[--=] --no-demangle
			--recurse-limit --no-recurse-limit -D|--dynamic -e -f|--format= -g|--extern-only
			--ifunc-chars= -j|--just-symbols -l|--line-numbers -n|-v|--numeric-sort -p|--no-sort
			-P|--portability -r|--reverse-sort -S|--print-size -s|--print-armap --quiet --size-sort
			--special-syms --synthetic -t|--radix= --target= -u|--undefined-only -U|--defined-only
			--unicode= -W|--no-weak --with-symbol-versions --without-symbol-versions -X= -h|--help
			-V|--version --export-symbols`),
		execs("loads a plugin", `--plugin=`),
	)
	objdumpOpts = opts(
		reads(`-a|--archive-headers -f|--file-headers -p|--private-headers -P|--private=
			-h|--section-headers|--headers -x|--all-headers -d|--disassemble[--=] -D|--disassemble-all
			-S|--source --source-comment[=] -s|--full-contents -g|--debugging -e|--debugging-tags
			-G|--stabs -W|--dwarf[=] -L|--process-links --ctf[=] --sframe[=] -t|--syms
			-T|--dynamic-syms -r|--reloc -R|--dynamic-reloc -v|--version -i|--info -H|--help
			-b|--target= -m|--architecture= -j|--section= -M|--disassembler-options= -E= --endian=
			--file-start-context -I|--include= -l|--line-numbers -F|--file-offsets -C|--demangle[--=]
			--recurse-limit --no-recurse-limit -w|--wide -U|--unicode= -z|--disassemble-zeroes
			--start-address= --stop-address= --no-addresses --prefix-addresses --show-raw-insn
			--no-show-raw-insn --insn-width= --adjust-vma= --show-all-symbols --special-syms
			--inlines --prefix= --prefix-strip= --dwarf-depth= --dwarf-start= --dwarf-check
			--ctf-parent= --visualize-jumps[=] --disassembler-color= -Z|--decompress
			-k|--section-sizes`),
	)
	readelfOpts = opts(
		reads(`-a|--all -h|--file-header -l|--program-headers|--segments -S|--section-headers|--sections
			-g|--section-groups -t|--section-details -e|--headers -s|--syms|--symbols --dyn-syms
			--lto-syms --sym-base= -C|--demangle[--=] --no-demangle --recurse-limit --no-recurse-limit
			-U|--unicode= -n|--notes -r|--relocs -u|--unwind -d|--dynamic -V|--version-info
			-A|--arch-specific -c|--archive-index -D|--use-dynamic -L|--lint|--enable-checks
			-x|--hex-dump= -p|--string-dump= -R|--relocated-dump= -z|--decompress -w|--debug-dump[=]
			-P|--process-links --dwarf-depth= --dwarf-start= --ctf= --ctf-parent= --ctf-symbols=
			--ctf-strings= --sframe[=] -I|--histogram -W|--wide -T|--silent-truncation -H|--help
			-v|--version -X|--extra-sym-info`),
	)
	sizeOpts = opts(
		reads(`-A -B -G --format= -o -d -x --radix= -t|--totals -f --common --target= -h|-H|-?|--help
			-v|-V|--version`),
		execs("loads a plugin", `--plugin=`),
	)
	stringsOpts = opts(
		reads(`-a|--all -d|--data -f|--print-file-name -n|--bytes= -t|--radix= -w|--include-all-whitespace
			-o -T|--target= -e|--encoding= --unicode= -U= -s|--output-separator= -h|--help -v|-V|--version
			-0 -1 -2 -3 -4 -5 -6 -7 -8 -9`),
	)
)

func binutilsTool(name string, t *optTable) *tool {
	return &tool{name: name, style: styleGNU, opts: t, check: checkResponseFile}
}

// checkResponseFile: an operand @FILE is more options, read from FILE.
func checkResponseFile(c *classifier, k *call) {
	for _, i := range k.p.ops {
		if a := k.args[i]; !a.noDash || strings.HasPrefix(a.s, "@") {
			c.unknown(k.name+" "+c.displayWord(a, k.ctx), "reads more options from a file")
			return
		}
	}
	c.readOnly(k)
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
// write, and -exec/-execdir run a command that is classified in turn.
// find replaces "{}" with each path wherever it occurs in the command's
// words, so such words are unknown to the classifier: a path pasted into
// a shell's -c string or an awk program becomes code.
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
	// Starting points come first; find's paths begin with one, so a path
	// never looks like an option unless a starting point does.
	safePaths := true
	for j := i; j < len(args); j++ {
		a := args[j]
		if a.static && (strings.HasPrefix(a.s, "-") || a.s == "(" || a.s == "!" || a.s == ",") {
			break
		}
		if !a.noDash {
			safePaths = false
		}
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
		case s == "-ok" || s == "-okdir":
			c.unknown("find "+s, "asks a person before running a command")
			return
		case s == "-exec" || s == "-execdir":
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
			c.runInner(k, substituted(args[i+1:end], "{}", safePaths), ctx)
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

// substituted returns args with every word containing repl made unknown:
// find -exec and xargs -I paste run-time text into them. noDash says the
// pasted text never starts with "-" (find's paths).
func substituted(args []arg, repl string, noDash bool) []arg {
	var out []arg
	for i, a := range args {
		if repl == "" || !strings.Contains(a.s, repl) {
			continue
		}
		if out == nil {
			out = append(make([]arg, 0, len(args)), args...)
		}
		b := a
		b.static = false
		b.noDash = noDash && strings.HasPrefix(a.s, repl) || !strings.HasPrefix(a.s, repl) && a.noDash
		out[i] = b
	}
	if out == nil {
		return args
	}
	return out
}

// tarModes are tar's operation modes: the read-only ones list or compare
// an archive (or extract it to stdout with -O).
var tarTool = &tool{
	name: "tar", style: styleGNU,
	opts: opts(
		reads(`-t|--list -d|--diff|--compare --test-label -x|--extract|--get --check-device
			-G|--incremental --hole-detection= --ignore-failed-read --level= --no-check-device
			--no-seek -n|--seek --occurrence[=] --sparse-version= -S|--sparse --add-file=
			-C|--directory= --exclude= --exclude-backups --exclude-caches --exclude-caches-all
			--exclude-caches-under --exclude-ignore= --exclude-ignore-recursive= --exclude-tag=
			--exclude-tag-all= --exclude-tag-under= --exclude-vcs --exclude-vcs-ignores --no-null
			--no-recursion --no-unquote --no-verbatim-files-from --null --verbatim-files-from
			--recursion -T|--files-from= --unquote -X|--exclude-from= --anchored --ignore-case
			--no-anchored --no-ignore-case --no-wildcards --no-wildcards-match-slash --wildcards
			--wildcards-match-slash --keep-directory-symlink --keep-newer-files -k|--keep-old-files
			--no-overwrite-dir --one-top-level[=] --overwrite --overwrite-dir --skip-old-files
			-W|--verify --ignore-command-error --no-ignore-command-error -O|--to-stdout
			--clamp-mtime --delay-directory-restore --group= --group-map= --mode= --mtime=
			-m|--touch --no-delay-directory-restore --no-same-owner --no-same-permissions
			--numeric-owner --owner= --owner-map= -p|--preserve-permissions|--same-permissions
			--same-owner --sort= -s|--preserve-order|--same-order --acls --no-acls --no-selinux
			--no-xattrs --selinux --xattrs --xattrs-exclude= --xattrs-include= --force-local
			-L|--tape-length= -M|--multi-volume -b|--blocking-factor= -B|--read-full-records
			-i|--ignore-zeros --record-size= -H|--format= --old-archive|--portability --pax-option=
			--posix -V|--label= -a|--auto-compress -j|--bzip2 -J|--xz --lzip --lzma --lzop
			--no-auto-compress --zstd -z|--gzip|--gunzip|--ungzip -Z|--compress|--uncompress
			--hard-dereference -h|--dereference -K|--starting-file= --newer-mtime=
			-N|--newer|--after-date= --one-file-system -P|--absolute-names --suffix=
			--strip-components= --transform|--xform= --checkpoint[=] --full-time -l|--check-links
			--no-quote-chars= --quote-chars= --quoting-style= -R|--block-number --show-defaults
			--show-omitted-dirs --show-snapshot-field-ranges --show-transformed-names
			--show-stored-names --totals[=] --utc -v|--verbose --warning= -w|--interactive|--confirmation
			-?|--help --restrict --usage --version -o -U|--unlink-first --recursive-unlink
			--backup[=] -f|--file=`),
		writes(RiskLow, "creates or changes an archive", `-c|--create -r|--append -u|--update
			-A|--catenate|--concatenate --delete`),
		writes(RiskLow, "writes a side file", `-g|--listed-incremental= --index-file= --volno-file=`),
		writes(RiskLow, "resets access times of the files it reads", `--atime-preserve[=]`),
		writes(RiskMedium, "removes files", `--remove-files`),
		execs("runs a program", `-I|--use-compress-program= --to-command= --rmt-command=
			--rsh-command= -F|--info-script|--new-volume-script= --checkpoint-action=`),
	),
	check: checkTarModes,
}

// checkTar: tar reads old-style bundled options ("tzf archive") before
// the getopt ones; they are unbundled, then scanned with tar's grammar.
func checkTar(c *classifier, k *call) {
	args := k.args
	if len(args) > 0 && args[0].static && args[0].s != "" && args[0].s[0] != '-' {
		// Old-style bundled options: in "tzfb archive 20" each letter that
		// takes a value takes the next word, in order.
		var ok bool
		if args, ok = unbundleTar(args); !ok {
			c.unknown("tar "+k.args[0].s, "old-style option not known")
			return
		}
		inner := c.newCall(call{name: k.name, word: k.word, lead: k.lead, args: args, ctx: k.ctx})
		defer c.freeCall()
		k = inner
	}
	c.runTool(k, tarTool)
}

// tarValued are tar's short options that take a value, for unbundling.
const tarValued = "fCTXbgHKLNVIF"

// unbundleTar turns old-style tar options into separate ones.
func unbundleTar(args []arg) ([]arg, bool) {
	out := make([]arg, 0, len(args)+len(args[0].s))
	next := 1
	for _, ch := range args[0].s {
		if ch > 127 || !tarTool.opts.shortOpt(byte(ch)).found() {
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

// checkTarModes: list (-t) and compare (-d) read, and so does extract
// (-x) with -O, which writes the members to stdout; extracting to disk
// writes. An archive named host:path is remote (tar runs rsh).
func checkTarModes(c *classifier, k *call) {
	if u := k.p.last("file"); u != nil && !k.p.has("force-local") && (!u.val.static || strings.Contains(u.val.s, ":")) {
		c.unknown("tar -f", "archive may be remote")
		return
	}
	switch {
	case k.p.has("extract") && !k.p.has("to-stdout"):
		c.writer("tar -x", RiskMedium, "extracts files")
	case k.p.hasAny("list", "diff", "test-label", "extract"):
		c.read("tar -t", "lists an archive")
	case k.p.hasAny("help", "usage", "version", "show-defaults"):
		c.readOnly(k)
	default:
		c.unknown("tar", "no mode known to be read-only")
	}
}

// checkUnzip: listing, testing and extracting to stdout read; anything else
// extracts files.
func checkUnzip(c *classifier, k *call) {
	list := false
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static {
			c.unknown("unzip", "dynamic argument")
			return
		}
		if len(a.s) < 2 || a.s[0] != '-' {
			continue
		}
		for j, ch := range a.s[1:] {
			switch {
			case strings.ContainsRune("lvtZpcz", ch):
				list = true
			case strings.ContainsRune("qCL", ch):
			case ch == 'x':
				// Exclusions: the rest of the line.
				i = len(k.args)
			case ch == 'P' && j == len(a.s)-2:
				i++ // the password
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

// checkXxd: a second operand is an output file; -r with one converts back
// to binary. xxd takes single-dash options matched by their first letters.
func checkXxd(c *classifier, k *call) {
	operands := 0
	for i := 0; i < len(k.args); i++ {
		a := k.args[i]
		if !a.static || a.glob {
			c.unknown("xxd "+c.displayWord(a, k.ctx), "glob or expansion may expand into the output operand")
			return
		}
		if name := strings.TrimLeft(a.s, "-"); strings.HasPrefix(a.s, "-") && name != "" &&
			strings.IndexByte("abCcEeghilnoprRsduv", name[0]) < 0 {
			c.unknown("xxd", "unknown option "+a.s)
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

// tree (2.1 --help) takes each value of a clustered option from the next
// word (-Lo 2 out is -L 2 -o out), so a value attached to a short option
// is refused; long options take "--charset X" or "--charset=X" and are
// never abbreviated.
var treeTool = &tool{
	name: "tree", style: parseStyle{clusters: true, permute: true},
	opts: opts(
		reads(`-a -d -l -f -x -L= -P= -I= --gitignore --gitfile= --ignore-case --matchdirs
			--metafirst --prune --info --infofile= --noreport --charset= --filelimit= -q -N -Q
			-p -u -g -s -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r
			--dirsfirst --filesfirst --sort= -i -A -S -n -C -X -J -H= -T= --nolinks --hintro=
			--houtro= --fromfile --fflinks --version --help`),
		writes(RiskLow, "writes a file", `-o=`),
		writes(RiskLow, "writes HTML files in every directory", `-R`),
	),
}

// yq is two programs under one name: kislyuk's jq wrapper (Python
// argparse, abbreviations accepted, other options passed to jq) and
// mikefarah's Go yq (cobra). The union of their options is tabled and
// parsed the argparse way (an abbreviation resolves to the option it
// names, so a prefix of --in-place still writes); -i edits in place in
// both, and mikefarah's -s (split) writes files, so -s is refused for
// both though it is jq's harmless slurp.
var yqTool = &tool{
	name: "yq", style: styleArgparse,
	opts: opts(
		reads(`-h|--help -y|--yaml-output|--yml-output -Y|--yaml-roundtrip|--yml-roundtrip
			--yaml-output-grammar-version|--yml-out-ver= -w|--width= --indentless-lists|--indentless
			-R|--raw-input --tab --arg== --argjson== --slurpfile== --rawfile== --args
			--jsonargs -r|--raw-output|--unwrapScalar -c|--compact-output -e|--exit-status
			-n|--null-input -j|--join-output|--tojson -a|--ascii-output -S|--sort-keys -C|--colors
			-M|--no-colors --indent= -I= -f|--from-file|--front-matter= -o|--output-format=
			-p|--input-format= -N|--no-doc -P|--prettyPrint -0|--nul-output -v|--verbose -V|--version
			--header-preprocess --expression= -x|--xml-output -t|--toml-output --seq --stream`),
		writes(RiskMedium, "writes files", `-i|--in-place|--inplace -s|--split-exp= --split-exp-file=`),
	),
}

// xmllint reads its options with one dash or two, spelled out. --output
// writes a file and --shell is a shell that can save documents.
var xmllintTool = &tool{
	name: "xmllint", style: styleDashLong,
	opts: opts(
		reads(`-version -debug -debugent -copy -recover -huge -noent -noenc -noout -path= -load-trace
			-nonet -nocompact -htmlout -nowrap -valid -postvalid -dtdvalid= -dtdvalidfpi= -quiet
			-timing -repeat -insert -compress -html -xmlout -nodefdtd -push -pushsmall -memory
			-maxmem= -nowarning -noblanks -nocdata -format -encode= -dropdtd -pretty= -c14n -c14n11
			-exc-c14n -nsclean -testIO -catalogs -nocatalogs -auto -xinclude -noxincludenode
			-nofixup-base-uris -loaddtd -dtdattr -stream -walker -pattern= -chkregister -relaxng=
			-schema= -schematron= -sax1 -sax -oldxml10 -xpath= -help`),
		writes(RiskLow, "writes a file", `-output|-o=`),
		writes(RiskLow, "an interactive shell that can save documents", `-shell`),
	),
}

// ripgrep: --pre runs a program on every file and --hostname-bin one for
// hyperlinks; the rest shape the search and its output.
var rgTool = &tool{
	name: "rg", style: styleExact,
	opts: opts(
		reads(`-A|--after-context= --auto-hybrid-regex --no-auto-hybrid-regex -B|--before-context=
			--binary --no-binary --block-buffered --no-block-buffered -b|--byte-offset --no-byte-offset
			-s|--case-sensitive --color= --colors= --column --no-column -C|--context=
			--context-separator= --no-context-separator -c|--count --count-matches --crlf --no-crlf
			--debug --trace --dfa-size-limit= -E|--encoding= --no-encoding --engine=
			--field-context-separator= --field-match-separator= -f|--file= --files
			-l|--files-with-matches --files-without-match -F|--fixed-strings --no-fixed-strings
			-L|--follow --no-follow -g|--glob= --glob-case-insensitive --no-glob-case-insensitive
			-h|--help --heading --no-heading -.|--hidden --no-hidden --iglob= -i|--ignore-case
			--ignore-file= --ignore-file-case-insensitive --no-ignore-file-case-insensitive
			--include-zero --no-include-zero -v|--invert-match --no-invert-match --json --no-json
			--line-buffered --no-line-buffered -n|--line-number -N|--no-line-number -x|--line-regexp
			-M|--max-columns= --max-columns-preview --no-max-columns-preview -m|--max-count=
			-d|--max-depth|--maxdepth= --max-filesize= --mmap --no-mmap -U|--multiline --no-multiline
			--multiline-dotall --no-multiline-dotall --no-config -I|--no-filename -H|--with-filename
			--no-ignore --ignore --no-ignore-dot --ignore-dot --no-ignore-exclude --ignore-exclude
			--no-ignore-files --ignore-files --no-ignore-global --ignore-global --no-ignore-messages
			--ignore-messages --no-ignore-parent --ignore-parent --no-ignore-vcs --ignore-vcs
			--no-messages --messages --no-pcre2-unicode --pcre2-unicode --no-require-git --require-git
			--no-unicode --unicode -0|--null --null-data --one-file-system --no-one-file-system
			-o|--only-matching --passthru|--passthrough --path-separator= -P|--pcre2 --no-pcre2
			--pcre2-version -p|--pretty -q|--quiet --regex-size-limit= -e|--regexp= -r|--replace=
			-z|--search-zip --no-search-zip -S|--smart-case --sort= --sortr= --stats --no-stats -a|--text
			--no-text -j|--threads= --trim --no-trim -t|--type= --type-list -T|--type-not= --type-add=
			--type-clear= -u|--unrestricted -V|--version --vimgrep -w|--word-regexp --generate=
			--hyperlink-format= --stop-on-nonmatch`),
		execs("runs a program", `--pre= --hostname-bin=`),
		reads(`--pre-glob= --no-pre`),
	),
}

// fd: -x/-X run a command for the results.
var fdTool = &tool{
	name: "fd", style: styleExact,
	opts: opts(
		reads(`-H|--hidden -I|--no-ignore -u|--unrestricted --no-ignore-vcs --no-ignore-parent
			-s|--case-sensitive -i|--ignore-case -g|--glob --regex -F|--fixed-strings --and=
			-a|--absolute-path -l|--list-details -L|--follow -p|--full-path -0|--print0 --max-results=
			-1 -q|--quiet --show-errors --base-directory= --path-separator= --strip-cwd-prefix[=]
			-d|--max-depth= --min-depth= --exact-depth= -E|--exclude= --prune -t|--type= -e|--extension=
			-S|--size= --changed-within|--change-newer-than|--newer= --changed-before|--change-older-than|--older=
			-o|--owner= --format= --ignore-file= -c|--color= -j|--threads= --search-path= --one-file-system
			-h|--help -V|--version --hyperlink[=] --no-hidden --ignore --no-require-git --ignore-vcs`),
		execs("runs a command for each result", `-x|--exec -X|--exec-batch`),
		reads(`--batch-size=`),
	),
}
