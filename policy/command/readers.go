package command

// readerTools are readers with an option that writes or does something
// else than reading, given a grammar so that every other option is known.
var readerTools = map[string]*tool{
	"locate":  locateTool,
	"plocate": locateTool,
	"mlocate": locateTool,
	"lxc-ls": lxcClassicTool("lxc-ls", `-1|--line -f|--fancy -F|--fancy-format= --active --frozen
		--running --stopped --defined --nesting[=] -g|--groups= --filter=`),
	"lxc-info": lxcClassicTool("lxc-info", `-n|--name= -c|--config= -i|--ips -p|--pid -S|--stats
		-s|--state -H|--no-humanize`),
}

// locateTool is plocate and mlocate together (slocate's -u, which
// rebuilds the database, is not among them).
var locateTool = &tool{
	name: "locate", style: styleGNU,
	opts: opts(reads(`-A|--all -b|--basename -c|--count -d|--database= -e|--existing -L|--follow
		-P|-H|--nofollow -h|--help -i|--ignore-case -l|-n|--limit= -m|--mmap -N|--literal -q|--quiet
		-r|--regexp= --regex -s|--stdio -S|--statistics -V|--version -w|--wholename -0|--null
		--regextype=`)),
}

// lxcClassicTool builds one of LXC's classic tools: -o/--logfile writes a
// log file, --rcfile loads another configuration.
func lxcClassicTool(name, spec string) *tool {
	return &tool{
		name: name, style: styleGNU,
		opts: opts(
			reads(spec+` -P|--lxcpath= -l|--logpriority= -q|--quiet -h|-?|--help --usage --version`),
			writes(RiskLow, "writes a log file", `-o|--logfile=`),
			unknowns("loads another configuration", `--rcfile=`),
		),
	}
}
