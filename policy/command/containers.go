package command

import "strings"

// Container engines, Kubernetes and Helm. Their CLIs are cobra programs
// (spf13/pflag): no abbreviations, options anywhere, persistent global
// options valid after the verb.

var containerTools = map[string]*tool{
	"docker":  dockerTool,
	"podman":  dockerTool,
	"nerdctl": dockerTool,
	"kubectl": kubectlTool,
	"oc":      kubectlTool,
	"helm":    helmTool,
	"crictl":  crictlTool,
	"etcdctl": etcdctlTool,
}

// stylePflagStop is pflag with interspersed flags off: options end at the
// first operand (docker run, docker exec, docker top).
var stylePflagStop = parseStyle{clusters: true, attached: true, shortEq: true, boolValue: true}

// dockerHost vets -H/--host: a local socket is the daemon the operator
// set up; a TCP daemon is a server the command names, which receives the
// HttpHeaders of the client's configuration and its TLS identity (as
// kubectl --server would receive credentials), and ssh:// runs ssh with
// the user's configuration.
func dockerHost(c *classifier, k *call, u *optUse) bool {
	v := u.val
	if v.static && (strings.HasPrefix(v.s, "unix://") || strings.HasPrefix(v.s, "fd://") || strings.HasPrefix(v.s, "npipe://")) {
		return true
	}
	if v.static && strings.HasPrefix(v.s, "tcp://") {
		c.writer(k.name+" "+u.as, RiskMedium, "sends the client's configured headers and TLS identity to a server the command names")
		return false
	}
	c.unknown(k.name+" "+u.as+" "+c.displayWord(v, k.ctx), "daemon address may run ssh")
	return false
}

var dockerGlobals = opts(
	reads(`-D|--debug -l|--log-level= --tls --tlscacert= --tlscert= --tlskey= --tlsverify
		-v|--version -h|--help`),
	readsVal(dockerHost, `-H|--host=`),
	unknowns("selects a context, which may name a remote daemon", `-c|--context=`),
	unknowns("reads a configuration that names credential helpers and plugins", `--config=`),
)

// Options of docker's reading verbs.
var (
	dockerPsOpts  = opts(reads(`-a|--all -f|--filter= --format= -n|--last= -l|--latest --no-trunc -q|--quiet -s|--size`))
	dockerImgOpts = opts(reads(`-a|--all --digests -f|--filter= --format= --no-trunc -q|--quiet --tree`))
	dockerInspect = opts(reads(`-f|--format= -s|--size --type= --platform= --pretty`))
	dockerFmtOnly = opts(reads(`-f|--format=`))
	dockerHistory = opts(reads(`--format= -H|--human --no-trunc --platform= -q|--quiet`))
	dockerSearch  = opts(reads(`-f|--filter= --format= --limit= --no-trunc`))
	dockerLogs    = opts(reads(`--details -f|--follow --since= -n|--tail= -t|--timestamps --until=
		--no-resolve --no-task-ids --no-trunc --raw --index= --no-color --no-log-prefix`))
	dockerStats  = opts(reads(`-a|--all --format= --no-stream --no-trunc`))
	dockerEvents = opts(reads(`-f|--filter= --format= --since= --until= --json`))
	dockerLsOpts = opts(reads(`-f|--filter= --format= -q|--quiet --no-trunc --cluster --no-resolve`))
	dockerDf     = opts(reads(`--format= -v|--verbose`))
	dockerExec   = opts(
		reads(`-d|--detach --detach-keys= -i|--interactive --privileged -t|--tty -u|--user=
			-w|--workdir= -T|--no-TTY --no-tty --index=`),
		readsVal(containerEnvValue, `-e|--env=`),
		unknowns("reads environment settings from a file", `--env-file=`),
	)
)

func dockerRead(t *optTable) *verbRule { return readWith(t) }

var dockerTool = &tool{
	name: "docker", style: stylePflag, globalsAfterVerb: true, noVerb: readVerb,
	opts: dockerGlobals,
	verbs: verbTable(
		vrule(dockerRead(dockerPsOpts), "ps"),
		vrule(dockerRead(dockerImgOpts), "images"),
		vrule(dockerRead(dockerInspect), "inspect"),
		vrule(dockerRead(dockerFmtOnly), "info version"),
		vrule(&verbRule{class: ruleRead, style: &stylePflagStop}, "top"),
		vrule(dockerRead(nil), "port diff"),
		vrule(dockerRead(dockerHistory), "history"),
		vrule(netReadCheck(dockerSearch, checkDockerSearch), "search"),
		vrule(checkWith(dockerLogs, checkDockerLogs), "logs"),
		vrule(checkWith(dockerStats, checkDockerStats), "stats"),
		vrule(checkWith(dockerEvents, checkUntil), "events"),
		vrule(&verbRule{class: ruleCheck, opts: dockerExec, style: &stylePflagStop, check: checkDockerExec}, "exec"),
		vrule(&verbRule{class: ruleCheck, check: checkRunTTY, noScan: true}, "run"),
		vrule(interactiveVerb, "attach"),
		vwrites(RiskMedium, `cp create start restart pull push build commit tag rename update pause
			unpause load save import export login logout swarm wait init`),
		vwrites(RiskHigh, "rm rmi kill stop prune"),
		vrule(nestedVerb(dockerContainerTool), "container"),
		vrule(nestedVerb(dockerImageTool), "image"),
		vrule(nestedVerb(dockerObjectTool()), "volume secret config plugin"),
		vrule(nestedVerb(dockerNetworkTool), "network"),
		vrule(nestedVerb(dockerSystemTool), "system"),
		vrule(nestedVerb(dockerNodeTool), "node"),
		vrule(nestedVerb(dockerServiceTool), "service"),
		vrule(nestedVerb(dockerStackTool), "stack"),
		vrule(nestedVerb(dockerContextTool), "context"),
		vrule(nestedVerb(dockerManifestTool), "manifest trust"),
		vrule(nestedVerb(dockerBuildxTool), "buildx"),
		vrule(nestedVerb(dockerComposeTool), "compose"),
	),
}

// dockerSub builds a docker object command (docker container, docker
// image, ...): its verbs after the object word.
func dockerSub(groups ...verbGroup) *tool {
	return &tool{name: "docker", style: stylePflag, globalsAfterVerb: true, verbs: verbTable(groups...)}
}

var (
	dockerContainerTool = dockerSub(
		vrule(dockerRead(dockerPsOpts), "ls list ps"),
		vrule(dockerRead(dockerInspect), "inspect"),
		vrule(&verbRule{class: ruleRead, style: &stylePflagStop}, "top"),
		vrule(dockerRead(nil), "port diff"),
		vrule(checkWith(dockerLogs, checkDockerLogs), "logs"),
		vrule(checkWith(dockerStats, checkDockerStats), "stats"),
		vrule(&verbRule{class: ruleCheck, opts: dockerExec, style: &stylePflagStop, check: checkDockerExec}, "exec"),
		vrule(&verbRule{class: ruleCheck, check: checkRunTTY, noScan: true}, "run"),
		vrule(interactiveVerb, "attach"),
		vwrites(RiskMedium, "cp create start restart commit rename update pause unpause export wait"),
		vwrites(RiskHigh, "rm kill stop prune"),
	)
	dockerImageTool = dockerSub(
		vrule(dockerRead(dockerImgOpts), "ls list"),
		vrule(dockerRead(dockerInspect), "inspect"),
		vrule(dockerRead(dockerHistory), "history"),
		vwrites(RiskMedium, "pull push build tag load save import"),
		vwrites(RiskHigh, "rm prune"),
	)
	dockerNetworkTool = dockerSub(
		vrule(dockerRead(dockerLsOpts), "ls list"),
		vrule(dockerRead(opts(reads(`-f|--format= -v|--verbose`))), "inspect"),
		vwrites(RiskMedium, "create connect disconnect"),
		vwrites(RiskHigh, "rm prune"),
	)
	dockerSystemTool = dockerSub(
		vrule(dockerRead(dockerDf), "df"),
		vrule(dockerRead(dockerFmtOnly), "info"),
		vrule(checkWith(dockerEvents, checkUntil), "events"),
		vwrites(RiskHigh, "prune"),
	)
	dockerNodeTool = dockerSub(
		vrule(dockerRead(dockerLsOpts), "ls list ps"),
		vrule(dockerRead(dockerInspect), "inspect"),
		vwrites(RiskMedium, "update promote demote"),
		vwrites(RiskHigh, "rm"),
	)
	dockerServiceTool = dockerSub(
		vrule(dockerRead(dockerLsOpts), "ls list ps"),
		vrule(dockerRead(dockerInspect), "inspect"),
		vrule(checkWith(dockerLogs, checkDockerLogs), "logs"),
		vwrites(RiskMedium, "create scale update rollback"),
		vwrites(RiskHigh, "rm"),
	)
	dockerStackTool = dockerSub(
		vrule(dockerRead(dockerLsOpts), "ls list ps services"),
		vrule(dockerRead(opts(reads(`-c|--compose-file= --skip-interpolation`))), "config"),
		vwrites(RiskMedium, "deploy"),
		vwrites(RiskHigh, "rm"),
	)
	dockerContextTool = dockerSub(
		vrule(dockerRead(opts(reads(`--format= -q|--quiet`))), "ls list"),
		vrule(dockerRead(nil), "show"),
		vrule(dockerRead(dockerFmtOnly), "inspect"),
		vwrites(RiskLow, "use create rm update import export"),
	)
	dockerManifestTool = dockerSub(
		vrule(netReadCheck(opts(reads(`--insecure -v|--verbose`)), checkManifestInspect), "inspect"),
		vwrites(RiskMedium, "create annotate push rm sign revoke key signer"),
	)
	dockerBuildxTool = dockerSub(
		vrule(dockerRead(opts(reads(`--format= --no-trunc`))), "ls"),
		vrule(dockerRead(opts(reads(`--filter= --format= --verbose --builder=`))), "du"),
		vrule(dockerRead(nil), "version"),
		vwrites(RiskMedium, "build bake create rm stop use prune imagetools"),
	)
)

// dockerObjectTool is docker volume, secret, config and plugin.
func dockerObjectTool() *tool {
	return dockerSub(
		vrule(dockerRead(dockerLsOpts), "ls list"),
		vrule(dockerRead(dockerInspect), "inspect"),
		vwrites(RiskMedium, "create install enable disable upgrade set push update"),
		vwrites(RiskHigh, "rm prune"),
	)
}

var dockerComposeTool = &tool{
	name: "docker compose", style: stylePflag, globalsAfterVerb: true,
	opts: opts(reads(`-f|--file= -p|--project-name= --project-directory= --env-file= --profile=
		--ansi= --progress= --parallel= --compatibility --dry-run --all-resources`)),
	verbs: verbTable(
		vrule(dockerRead(opts(reads(`-a|--all --filter= --format= --no-trunc --orphans -q|--quiet
			--services --status=`))), "ps"),
		vrule(dockerRead(opts(reads(`-a|--all --filter= --format= -q|--quiet`))), "ls"),
		vrule(dockerRead(opts(reads(`--format= -q|--quiet`))), "images"),
		vrule(dockerRead(nil), "top"),
		vrule(dockerRead(opts(reads(`-f|--format= --short`))), "version"),
		vrule(dockerRead(opts(reads(`--index= --protocol=`))), "port"),
		vrule(checkWith(dockerLogs, checkDockerLogs), "logs"),
		vrule(&verbRule{class: ruleCheck, opts: dockerEvents, check: streamVerb}, "events"),
		vrule(&verbRule{class: ruleCheck, opts: dockerExec, style: &stylePflagStop, check: checkComposeExec}, "exec"),
		vrule(readWith(opts(
			reads(`--format= --hash= --images --no-consistency --no-interpolate --no-normalize
				--no-path-resolution --profiles -q|--quiet --services --variables --volumes
				--environment --networks`),
			writes(RiskLow, "writes a file", `-o|--output=`),
			nets("asks registries for image digests", `--resolve-image-digests --lock-image-digests`),
		)), "config"),
		vwrites(RiskMedium, `run up start restart pull push build create pause unpause cp scale watch
			attach wait`),
		vwrites(RiskHigh, "down stop rm kill"),
	),
}

// checkDockerSearch: the daemon asks Docker Hub's index for the term.
func checkDockerSearch(c *classifier, k *call) {
	if c.readVerbOperands(k) && c.destination(k, "index.docker.io", 443) {
		c.readOnly(k)
	}
}

// checkManifestInspect: the client asks the image's registry (its first
// component when that is a host name, else Docker Hub).
func checkManifestInspect(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	if len(k.p.ops) == 0 {
		c.unknown(k.name, "no image")
		return
	}
	for _, i := range k.p.ops {
		ref := k.args[i].s
		host, port := "registry-1.docker.io", 443
		if first, _, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
			h, p, err := splitHostPort(first)
			if err != nil {
				c.writer(k.name+" "+ref, RiskMedium, "registry: "+err.Error())
				return
			}
			host = h
			if p != 0 {
				port = p
			}
		}
		if !c.destination(k, host, port) {
			return
		}
	}
	c.readOnly(k)
}

// checkDockerLogs: docker logs reads; -f/--follow never ends.
func checkDockerLogs(c *classifier, k *call) {
	f := newFollow()
	f.dropKeys(c, k, "follow")
	var extra edit
	if !k.p.has("tail") {
		extra.insert = "--tail " + rewriteLines
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

// checkDockerStats: without --no-stream, stats streams forever.
func checkDockerStats(c *classifier, k *call) {
	if !k.p.has("no-stream") {
		c.unbounded(k.ctx, BoundUnboundedStream, c.rebuild(k, edit{insertAfter: -1, insert: "--no-stream"}))
	}
	c.readOnly(k)
}

// checkRunTTY: docker run, kubectl run and kubectl debug create things;
// with -t/--tty they also wait on a terminal.
func checkRunTTY(c *classifier, k *call) {
	c.writer(k.name, RiskMedium, "known writer")
	for _, a := range k.args {
		if !a.static || a.s == "--" {
			break
		}
		if a.s == "--tty" || a.s == "--tty=true" || len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 't') && len(a.s) <= 4 {
			c.unbounded(k.ctx, BoundTTYFlag, "")
			return
		}
		if len(a.s) == 0 || a.s[0] != '-' {
			break // the image: the rest is its command
		}
	}
}

// checkUntil: event streams end only with --until.
func checkUntil(c *classifier, k *call) {
	if !k.p.has("until") {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.readOnly(k)
}

// execTTY collects a -t/--tty of an exec verb for the rewrite that drops
// it (with -i).
func execTTY(c *classifier, k *call) follow {
	tty := newFollow()
	if k.p.has("tty") {
		tty.dropKeys(c, k, "tty", "interactive", "stdin")
		tty.found = true
	}
	return tty
}

// checkDockerExec: "docker exec [options] CONTAINER CMD..." runs CMD in the
// container.
func checkDockerExec(c *classifier, k *call) {
	if len(k.p.ops) == 0 {
		c.unknown(k.name, "no container")
		return
	}
	if !k.args[k.p.ops[0]].static {
		c.unknown(k.name, "dynamic container")
		return
	}
	interactive := k.p.has("interactive")
	c.execInto(k, k.args[k.p.ops[0]+1:], !interactive || k.ctx.fed, interactive, execTTY(c, k))
}

// containerEnvValue vets an environment setting passed into a container.
func containerEnvValue(c *classifier, k *call, u *optUse) bool {
	if !u.val.static {
		c.unknown(k.name+" "+u.as, "dynamic environment setting")
		return false
	}
	name, value, _ := strings.Cut(u.val.s, "=")
	switch envClass(name, value, true) {
	case envInjects:
		c.construct(name+"=", RiskHigh, "environment can inject code or change which program runs")
		return false
	case envUnknown:
		c.unknown(name+"=", "environment variable not known to be inert")
		return false
	}
	return true
}

// checkComposeExec: compose exec allocates a terminal unless -T is given.
func checkComposeExec(c *classifier, k *call) {
	if len(k.p.ops) == 0 {
		c.unknown(k.name, "no service")
		return
	}
	argv := k.args[k.p.ops[0]+1:]
	if len(argv) == 0 {
		c.unknown(k.name, "no command")
		return
	}
	noTTY := k.p.hasAny("T", "no-TTY", "no-tty")
	ctx := k.ctx
	ctx.chain++
	ctx.piped, ctx.fed = false, noTTY
	c.argv(argv, ctx)
	if !noTTY {
		c.unbounded(k.ctx, BoundTTYFlag, c.rebuild(k, edit{insertAfter: -1, insert: "-T"}))
	}
}

// kubectl's global options. --server sends the configured credentials to
// the server the command names; a kubeconfig can run credential plugins
// (users[].user.exec); the profile, log and cache options write files.
var kubectlGlobals = opts(
	reads(`--as= --as-group= --as-uid= --certificate-authority= --client-certificate= --client-key=
		--disable-compression --insecure-skip-tls-verify --log-flush-frequency=
		--match-server-version -n|--namespace= --password= --request-timeout= --tls-server-name=
		--token= --user= --username= -v|--v= --vmodule= --warnings-as-errors -h|--help
		--alsologtostderr --logtostderr --one-output --skip-headers --skip-log-headers
		--stderrthreshold= --add-dir-header --log-backtrace-at= --log-file-max-size=`),
	readsVal(kubectlProfile, `--profile=`),
	readsVal(kubeContext, `--context=`),
	unknowns("selects a cluster of the kubeconfig by name, so the server it reaches cannot be told", `--cluster=`),
	nets("sends the configured credentials to a server the command names", `-s|--server=`),
	execs("a kubeconfig can run credential plugins", `--kubeconfig=`),
	writes(RiskLow, "writes files", `--profile-output= --cache-dir= --log-file= --log-dir=`),
)

// kubectlProfile: --profile=none is the default; a profile writes a file.
func kubectlProfile(c *classifier, k *call, u *optUse) bool {
	if u.val.static && u.val.s == "none" {
		return true
	}
	c.writer(k.name+" --profile", RiskLow, "writes a profile file")
	return false
}

// kubeService and kubeWhy are where kubectl and helm connect without a
// --context: the API servers of the configured clusters.
const (
	kubeService = "kubernetes"
	kubeWhy     = "connects to the API server of the cluster its kubeconfig names"
)

// kubeContext: --context NAME selects a cluster of the kubeconfig; it is
// known when a configured cluster uses that context
// (Options.Services["kubernetes/NAME"]).
func kubeContext(c *classifier, k *call, u *optUse) bool {
	c.setService(kubeService+"/"+u.val.s, "connects to the API server of kubeconfig context "+u.val.s)
	return true
}

// kubectlPrint are the output options of reading verbs.
const kubectlPrint = `-o|--output= --template= --allow-missing-template-keys --show-managed-fields
	--no-headers --show-kind --show-labels --sort-by= -L|--label-columns=`

var kubectlTool = &tool{
	name: "kubectl", style: stylePflag, globalsAfterVerb: true, net: true,
	service: kubeService, serviceWhy: kubeWhy,
	opts: kubectlGlobals,
	verbs: verbTable(
		vrule(checkWith(opts(
			reads(kubectlPrint+` -A|--all-namespaces --chunk-size= --field-selector=
				--ignore-not-found --output-watch-events -R|--recursive -l|--selector=
				--server-print --subresource= -w|--watch --watch-only`),
			readsVal(kubectlRaw, `--raw=`),
			unknowns("the objects come from a file the classifier cannot see (it may name a Secret)", `-f|--filename=`),
			kubectlKustomize,
		), checkKubectlGet), "get"),
		vrule(readCheck(opts(reads(`-A|--all-namespaces --chunk-size= -R|--recursive -l|--selector=
			--show-events`), unknowns("the objects come from a file the classifier cannot see (it may name a Secret)", `-f|--filename=`),
			kubectlKustomize), checkKubectlDescribe), "describe"),
		vrule(checkWith(opts(reads(`--all-containers --all-pods -c|--container= -f|--follow
			--ignore-errors --insecure-skip-tls-verify-backend --limit-bytes= --max-log-requests=
			--pod-running-timeout= --prefix -p|--previous -l|--selector= --since= --since-time=
			--tail= --timestamps`)), checkKubectlLogs), "logs"),
		vrule(nestedVerb(kubectlTopTool), "top"),
		vrule(readCheck(opts(reads(`--client -o|--output=`)), checkKubectlVersion), "version"),
		vrule(readWith(opts(reads(`--api-version= -o|--output= --recursive`))), "explain"),
		vrule(readWith(opts(reads(`--api-group= --cached --categories= --namespaced -o|--output=
			--sort-by= --verbs= --no-headers`))), "api-resources"),
		vrule(readVerb, "api-versions"),
		vrule(localVerb, "options completion"),
		vrule(readWith(opts(reads(kubectlPrint+` --all -A|--all-namespaces --field-selector=
			--for= --local -R|--recursive -l|--selector= --timeout=`),
			readsVal(kubectlFilename, `-f|--filename=`))), "wait"),
		vrule(checkWith(opts(reads(kubectlPrint+` -A|--all-namespaces --chunk-size= --for= --types=
			-w|--watch`)), checkKubectlWatch), "events"),
		vrule(&verbRule{class: ruleCheck, opts: opts(reads(`-c|--container= -f|--filename=
			--pod-running-timeout= -q|--quiet -i|--stdin -t|--tty`)), check: checkKubectlExec}, "exec"),
		vrule(nestedVerb(kubectlClusterInfoTool), "cluster-info"),
		vrule(nestedVerb(kubectlAuthTool), "auth"),
		vrule(nestedVerb(kubectlConfigTool), "config"),
		vrule(nestedVerb(kubectlRolloutTool), "rollout"),
		vrule(nestedVerb(&tool{name: "kubectl plugin", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--name-only`))}, "list"))}), "plugin"),
		vrule(editVerb, "edit"),
		vrule(interactiveVerb, "attach"),
		vrule(&verbRule{class: ruleCheck, check: checkLongRunning}, "port-forward proxy"),
		vrule(&verbRule{class: ruleCheck, check: checkRunTTY, noScan: true}, "run debug"),
		vrule(runsVerb, "diff kustomize alpha"),
		vwrites(RiskMedium, `apply create patch replace scale autoscale set label annotate taint cordon
			uncordon expose cp certificate`),
		vwrites(RiskHigh, "delete drain"),
	),
}

var (
	kubectlTopTool = &tool{name: "kubectl top", style: stylePflag, globalsAfterVerb: true,
		verbs: verbTable(
			vrule(readWith(opts(reads(`-A|--all-namespaces --containers --field-selector= --no-headers
				-l|--selector= --sort-by= --sum --use-protocol-buffers`))), "pod pods po"),
			vrule(readWith(opts(reads(`--no-headers -l|--selector= --show-capacity --sort-by=
				--use-protocol-buffers`))), "node nodes no"),
		)}
	kubectlClusterInfoTool = &tool{name: "kubectl cluster-info", style: stylePflag, globalsAfterVerb: true,
		noVerb: readVerb,
		verbs: verbTable(vrule(checkWith(opts(
			reads(`-A|--all-namespaces --namespaces= -o|--output= --pod-running-timeout=
				--allow-missing-template-keys --show-managed-fields --template=`),
			writes(RiskLow, "writes files", `--output-directory=`),
		), func(c *classifier, k *call) { c.readOnly(k) }), "dump"))}
	kubectlAuthTool = &tool{name: "kubectl auth", style: stylePflag, globalsAfterVerb: true,
		verbs: verbTable(
			vrule(readWith(opts(reads(`-A|--all-namespaces --list --no-headers -q|--quiet --subresource=`))), "can-i"),
			vrule(readWith(opts(reads(`-o|--output= --template= --allow-missing-template-keys
				--show-managed-fields`))), "whoami"),
			vwrites(RiskMedium, "reconcile"),
		)}
	kubectlConfigTool = &tool{name: "kubectl config", style: stylePflag, globalsAfterVerb: true,
		verbs: verbTable(
			vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--allow-missing-template-keys
				--merge --minify -o|--output= --show-managed-fields --template=`),
				nets("prints the kubeconfig's credentials", `--raw --flatten`))}, "view"),
			vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--no-headers -o|--output=`))}, "get-contexts"),
			vrule(localVerb, "current-context get-clusters get-users"),
			vwrites(RiskLow, `use-context use set-context set-cluster set-credentials set unset
				delete-context delete-cluster delete-user rename-context`),
		)}
	kubectlRolloutTool = &tool{name: "kubectl rollout", style: stylePflag, globalsAfterVerb: true,
		verbs: verbTable(
			vrule(readWith(opts(reads(`-R|--recursive --revision= -l|--selector= --timeout= -w|--watch`),
				readsVal(kubectlFilename, `-f|--filename=`), kubectlKustomize)), "status"),
			vrule(readWith(opts(reads(kubectlPrint+` -R|--recursive --revision= -l|--selector=`),
				readsVal(kubectlFilename, `-f|--filename=`), kubectlKustomize)), "history"),
			vwrites(RiskMedium, "restart undo pause resume"),
		)}
)

// kubectlFilename: -f names manifests to read; a URL is fetched with a
// GET, which must be a listed read URL on a known host.
func kubectlFilename(c *classifier, k *call, u *optUse) bool {
	if !u.val.static {
		c.unknown(k.name+" "+u.as, "dynamic file name")
		return false
	}
	if strings.Contains(u.val.s, "://") {
		return c.checkURL(k, u.val, urlUse{})
	}
	return true
}

// kubectlKustomize: -k builds a kustomization, whose bases may be remote
// repositories that kustomize clones.
var kubectlKustomize = unknowns("kustomize may fetch and build remote bases", `-k|--kustomize=`)

// kubectlRaw: get --raw sends a GET to any API path, including services
// and pods through the API proxy, which act on GET as they please, and
// Secrets. Only the API server's own health, version, metrics and
// discovery endpoints, and paths an operator listed in
// policy.http_read_urls, are read-only.
func kubectlRaw(c *classifier, k *call, u *optUse) bool {
	path, query, _ := strings.Cut(u.val.s, "?")
	if u.val.static && (c.listedAPIPath(u.val.s) || kubeRawEndpoint(path, query)) {
		return true
	}
	c.unknown(k.name+" --raw "+u.val.s, "raw API path is not one of the API server's health, version, metrics or discovery endpoints; list it in policy.http_read_urls if a GET of it only reads")
	return false
}

// kubeRawEndpoints are the API server's own read endpoints.
var kubeRawEndpoints = []endpoint{
	{"/healthz", "verbose exclude"}, {"/healthz/*", "verbose"}, {"/livez", "verbose exclude"},
	{"/livez/*", "verbose"}, {"/readyz", "verbose exclude"}, {"/readyz/*", "verbose"},
	{"/version", ""}, {"/metrics", ""}, {"/api", ""}, {"/apis", ""},
}

// kubeRawEndpoint reports a clean path of kubeRawEndpoints with only the
// parameters it reads.
func kubeRawEndpoint(path, query string) bool {
	if !cleanPath(path) {
		return false
	}
	for _, e := range kubeRawEndpoints {
		if !pathShape(path, e.path) {
			continue
		}
		for _, kv := range strings.Split(query, "&") {
			if name, _, _ := strings.Cut(kv, "="); kv != "" && !hasWord(e.params, name) {
				return false
			}
		}
		return true
	}
	return false
}

// checkKubectlGet: get reads (checkKubectlWatch) unless it names Secrets:
// their data is what the kube tool refuses to show, and so does the shell
// path (the -o formats print it, base64 being no protection).
func checkKubectlGet(c *classifier, k *call) {
	if c.kubeSecrets(k) {
		return
	}
	checkKubectlWatch(c, k)
}

// checkKubectlDescribe: describe reads, but not Secrets.
func checkKubectlDescribe(c *classifier, k *call) {
	if c.kubeSecrets(k) || !c.readVerbOperands(k) {
		return
	}
	c.readOnly(k)
}

// kubeSecrets reports (recording a finding) a get or describe of Secrets:
// a resource type secret or secrets (any case, any version or group
// suffix, in a comma-separated list, or as secret/NAME) among the
// operands.
func (c *classifier) kubeSecrets(k *call) bool {
	for n, i := range k.p.ops {
		a := k.args[i]
		if n > 0 && !strings.Contains(a.s, "/") {
			continue // a name of the first operand's type
		}
		for _, t := range strings.Split(a.s, ",") {
			t, _, _ = strings.Cut(t, "/")
			base, _, _ := strings.Cut(strings.ToLower(t), ".")
			if base == "secret" || base == "secrets" {
				c.writer(k.name+" "+a.s, RiskHigh, "reads Kubernetes Secrets, whose data the kube tool refuses to show; ask for the object's metadata with the kube tool")
				return true
			}
		}
	}
	return false
}

// checkKubectlVersion: version --client asks no server.
func checkKubectlVersion(c *classifier, k *call) {
	if len(k.p.ops) > 0 {
		c.unknown(k.name+" "+k.args[k.p.ops[0]].s, "unexpected argument")
		return
	}
	if k.p.has("client") {
		c.localNet()
	}
	c.readOnly(k)
}

// checkLongRunning: port-forward and proxy serve until stopped.
func checkLongRunning(c *classifier, k *call) {
	c.unknown(k.name, "opens a listener")
	c.unbounded(k.ctx, BoundUnboundedStream, "")
}

// checkKubectlWatch: get and events read; -w/--watch never ends.
func checkKubectlWatch(c *classifier, k *call) {
	f := newFollow()
	f.dropKeys(c, k, "watch", "watch-only")
	f.report(c, k, edit{})
	c.readOnly(k)
}

// checkKubectlLogs: logs read; -f/--follow never ends.
func checkKubectlLogs(c *classifier, k *call) {
	f := newFollow()
	f.dropKeys(c, k, "follow")
	var extra edit
	if !k.p.has("tail") {
		extra.insert = "--tail=" + rewriteLines
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

// checkKubectlExec: "kubectl exec POD [-c C] -- CMD..." runs CMD in the
// pod; without "--" the words after the pod are the command.
func checkKubectlExec(c *classifier, k *call) {
	ops := k.p.ops
	if len(ops) == 0 {
		c.unknown(k.name, "no pod")
		return
	}
	if !k.args[ops[0]].static {
		c.unknown(k.name, "dynamic pod")
		return
	}
	cmd := ops[1:]
	if len(cmd) == 0 {
		c.unknown(k.name, "no command")
		return
	}
	interactive := k.p.has("stdin")
	c.execInto(k, k.args[cmd[0]:], !interactive || k.ctx.fed, interactive, execTTY(c, k))
}

// helm's global options; --kube-apiserver sends the configured
// credentials to the server it names, a kubeconfig can run credential
// plugins.
var helmGlobals = opts(
	reads(`--burst-limit= --debug --kube-as-group= --kube-as-user= --kube-ca-file=
		--kube-insecure-skip-tls-verify --kube-tls-server-name= --kube-token= -n|--namespace= --qps=
		--registry-config= --repository-config= -h|--help`),
	readsVal(kubeContext, `--kube-context=`),
	nets("sends the configured credentials to a server the command names", `--kube-apiserver=`),
	execs("a kubeconfig can run credential plugins", `--kubeconfig=`),
	writes(RiskLow, "writes the repository cache", `--repository-cache= --content-cache=`),
)

var helmTool = &tool{
	name: "helm", style: stylePflag, globalsAfterVerb: true, net: true,
	service: kubeService, serviceWhy: kubeWhy,
	opts: helmGlobals,
	verbs: verbTable(
		vrule(readWith(opts(reads(`-a|--all -A|--all-namespaces -d|--date --deployed --failed
			-f|--filter= -m|--max= --no-headers --offset= -o|--output= --pending -r|--reverse
			-l|--selector= -q|--short --superseded --time-format= --uninstalled --uninstalling`))), "list ls"),
		vrule(readWith(opts(reads(`-o|--output= --revision= --show-desc --show-resources`))), "status"),
		vrule(nestedVerb(&tool{name: "helm get", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(readWith(opts(reads(`-a|--all -o|--output= --revision= --template=`))),
				"notes values metadata"),
				vrule(&verbRule{class: ruleWrite, risk: RiskHigh, msg: "prints the release's manifests, Secrets' data included"},
					"all hooks manifest"))}), "get"),
		vrule(readWith(opts(reads(`-o|--output= --max=`))), "history hist"),
		vrule(nestedVerb(&tool{name: "helm show", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(readCheck(opts(reads(`--version= --devel --username= --password=
				--ca-file= --cert-file= --key-file= --insecure-skip-tls-verify --keyring= --verify
				--pass-credentials --plain-http --jsonpath=`),
				unknowns("fetches the chart from a repository", `--repo=`)), checkHelmLocalChart),
				"all chart readme values crds"))}), "show inspect"),
		vrule(nestedVerb(&tool{name: "helm search", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(
				vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--devel --max-col-width=
					-o|--output= -r|--regexp --version= -l|--versions --fail-on-no-result`))}, "repo"),
				vrule(readCheck(opts(reads(`--max-col-width= -o|--output= --fail-on-no-result
					--list-repo-url`), readsVal(helmHubEndpoint, `--endpoint=`)), checkHelmHub), "hub"),
			)}), "search"),
		vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--short --template=`))}, "version"),
		vrule(localVerb, "env completion"),
		vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--quiet --strict --with-subcharts
			--kube-version= --set= --set-string= --set-file= --set-json= --set-literal= -f|--values=`))}, "lint"),
		vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--keyring=`))}, "verify"),
		vrule(checkWith(opts(
			reads(`-a|--api-versions= --atomic --ca-file= --cert-file= --create-namespace
				--description= --devel --disable-openapi-validation --dry-run[=]
				--enable-dns -g|--generate-name --include-crds --insecure-skip-tls-verify --is-upgrade
				--key-file= --keyring= --kube-version= -l|--labels= --name-template= --no-hooks
				--pass-credentials --password= --plain-http --release-name --render-subchart-notes
				--replace --repo= --set= --set-file= --set-json= --set-literal= --set-string=
				-s|--show-only= --skip-crds --skip-schema-validation --skip-tests --timeout=
				--username= -f|--values= --verify --version= --wait --wait-for-jobs
				--hide-notes`),
			nets("asks the cluster's API server to validate the manifests", `--validate`),
			writes(RiskLow, "writes files", `--output-dir= --dependency-update`),
			execs("runs a post-renderer program", `--post-renderer= --post-renderer-args=`),
		), checkHelmTemplate), "template"),
		vrule(nestedVerb(&tool{name: "helm repo", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`-o|--output=`))}, "list ls"),
				vwrites(RiskLow, "add remove rm update up index"))}), "repo"),
		vrule(nestedVerb(&tool{name: "helm plugin", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(localVerb, "list ls"),
				vwrites(RiskMedium, "install uninstall rm remove update up package verify"))}), "plugin"),
		vrule(nestedVerb(helmDependencyTool), "dependency dep"),
		vwrites(RiskMedium, "install upgrade rollback test push pull fetch package create registry"),
		vwrites(RiskHigh, "uninstall delete del un"),
	),
}

var helmDependencyTool = &tool{name: "helm dependency", style: stylePflag, globalsAfterVerb: true,
	verbs: verbTable(vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`--max-col-width=`))}, "list ls"),
		vwrites(RiskLow, "update up build"))}

// checkHelmLocalChart: show and template read a chart from a local
// directory or archive; any other chart reference is fetched from a
// repository (a destination the command does not name).
func checkHelmLocalChart(c *classifier, k *call) {
	if !c.readVerbOperands(k) {
		return
	}
	for _, i := range k.p.ops {
		if s := k.args[i].s; !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, ".") {
			c.writer(k.name+" "+s, RiskMedium, "fetches the chart from a repository; give a local chart path")
			return
		}
	}
	c.localNet()
	c.readOnly(k)
}

// checkHelmTemplate: template renders a local chart without a cluster;
// its operands are the release name and the chart.
func checkHelmTemplate(c *classifier, k *call) {
	ops := k.p.ops
	if len(ops) > 0 {
		chart := k.args[ops[len(ops)-1]].s
		if !strings.HasPrefix(chart, "/") && !strings.HasPrefix(chart, ".") {
			c.writer(k.name+" "+chart, RiskMedium, "fetches the chart from a repository; give a local chart path")
			return
		}
	}
	c.localNet()
	c.readOnly(k)
}

// helmHubEndpoint: search hub asks the hub at --endpoint.
func helmHubEndpoint(c *classifier, k *call, u *optUse) bool {
	scheme, rest, ok := strings.Cut(u.val.s, "://")
	if !ok {
		c.writer(k.name+" --endpoint "+u.val.s, RiskMedium, "endpoint must be a URL")
		return false
	}
	authority, _, _ := strings.Cut(rest, "/")
	return c.urlDest(k, strings.ToLower(scheme), authority)
}

// checkHelmHub: search hub asks Artifact Hub (hub.helm.sh) or --endpoint.
func checkHelmHub(c *classifier, k *call) {
	if !k.p.has("endpoint") && !c.destination(k, "hub.helm.sh", 443) {
		return
	}
	c.readOnly(k)
}

// crictl (urfave/cli): options before the operands, -name or --name.
var crictlTool = &tool{
	name: "crictl", style: styleGoFlag, globalsAfterVerb: false,
	opts: opts(
		reads(`-t|-timeout= -D|-debug -c|-config= -tracing-sampling-rate-per-million= -h|-help
			-v|-version`),
		readsVal(crictlEndpoint, `-r|-runtime-endpoint= -i|-image-endpoint=`),
		nets("sends traces to a collector", `-enable-tracing -tracing-endpoint=`),
	),
	verbs: verbTable(
		vrule(readWith(opts(reads(`-a|-all -q|-quiet -o|-output= -name= -label= -pod= -p= -state= -s=
			-id= -last= -latest -l -no-trunc -image= -resolve-image-path -v|-verbose -namespace=
			-digests -pinned -filter=`))), "ps pods images img"),
		vrule(readWith(opts(reads(`-o|-output= -template= -q|-quiet -name= -label=`))), "inspect inspecti inspectp info version imagefsinfo"),
		vrule(checkWith(opts(reads(`-a|-all -o|-output= -id= -label= -s|-seconds= -w|-watch -pod=`)), checkCrictlStats), "stats statsp"),
		vrule(checkWith(opts(reads(`-f|-follow -p|-previous -since= -tail= -t|-timestamps -until=
			-limit-bytes= -reopen`)), checkDockerLogs), "logs"),
		vrule(&verbRule{class: ruleCheck, opts: opts(reads(`-i|-interactive -t|-tty -s|-sync -timeout=
			-e|-env= -transport=`)), check: checkDockerExec}, "exec"),
		vrule(&verbRule{class: ruleCheck, opts: opts(reads(`-get= -list`)), check: checkCrictlConfig}, "config"),
		vrule(interactiveVerb, "attach"),
		vrule(&verbRule{class: ruleCheck, check: checkLongRunning}, "port-forward"),
		vwrites(RiskMedium, "start run runp create pull update update-runtime-config"),
		vwrites(RiskHigh, "rm rmp rmi stop stopp"),
	),
}

// crictlEndpoint: the runtime is reached over a local socket; a TCP
// endpoint is a server the command names.
func crictlEndpoint(c *classifier, k *call, u *optUse) bool {
	if strings.HasPrefix(u.val.s, "unix://") || strings.HasPrefix(u.val.s, "/") {
		return true
	}
	c.writer(k.name+" "+u.as+" "+u.val.s, RiskMedium, "runtime endpoint is not a local socket")
	return false
}

// checkCrictlStats: -w/-watch streams.
func checkCrictlStats(c *classifier, k *call) {
	if k.p.has("watch") || k.p.has("w") {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.readOnly(k)
}

// checkCrictlConfig: crictl config --get/--list shows settings; with
// operands or --set it changes them.
func checkCrictlConfig(c *classifier, k *call) {
	if len(k.p.ops) > 0 || !k.p.hasAny("get", "list") {
		c.writer(k.name, RiskLow, "changes crictl's configuration")
		return
	}
	c.readOnly(k)
}

var etcdctlTool = &tool{
	name: "etcdctl", style: stylePflag, globalsAfterVerb: true, net: true,
	opts: opts(
		reads(`--cacert= --cert= --key= --user= --password= --command-timeout=
		--dial-timeout= -w|--write-out= --insecure-skip-tls-verify --insecure-transport
		--insecure-discovery --debug --hex --keepalive-time= --keepalive-timeout=
		--max-request-bytes= --max-recv-bytes= --auth-jwt-token= -h|--help`),
		readsVal(etcdEndpoints, `--endpoints=`),
		nets("finds its servers in DNS SRV records, destinations the command does not name", `--discovery-srv= --discovery-srv-name=`),
	),
	verbs: verbTable(
		vrule(readCheck(opts(reads(`--prefix --from-key --keys-only --count-only --limit= --rev=
			--sort-by= --order= --print-value-only --consistency= --max-create-rev= --min-create-rev=
			--max-mod-rev= --min-mod-rev=`)), checkEtcdGet), "get"),
		vrule(localVerb, "version"),
		vrule(checkWith(opts(reads(`--prefix --rev= --prev-kv --progress-notify`),
			unknowns("reads watch commands from stdin", `-i|--interactive`)), checkEtcdWatch), "watch"),
		vrule(nestedVerb(etcdSub("list")), "member alarm"),
		vrule(nestedVerb(etcdSub("status", "health", "hashkv")), "endpoint"),
		vrule(nestedVerb(etcdSub("list", "get")), "user role"),
		vrule(nestedVerb(etcdSub("list", "timetolive")), "lease"),
		vrule(nestedVerb(etcdSub("status")), "snapshot"),
		vwrites(RiskMedium, `put txn compaction defrag move-leader lock elect make-mirror check auth
			downgrade`),
		vwrites(RiskHigh, "del"),
	),
}

// etcdEndpoints: the servers etcdctl connects to (comma-separated
// [scheme://]host:port; 127.0.0.1:2379 without the option).
func etcdEndpoints(c *classifier, k *call, u *optUse) bool {
	for _, e := range strings.Split(u.val.s, ",") {
		scheme, rest, ok := strings.Cut(e, "://")
		if !ok {
			scheme, rest = "http", e
		}
		authority, _, _ := strings.Cut(rest, "/")
		host, port, err := splitAuthority(authority)
		if err != nil || scheme != "http" && scheme != "https" && scheme != "unix" && scheme != "unixs" {
			c.writer(k.name+" --endpoints "+e, RiskMedium, "endpoint must be [http(s)://]HOST:PORT")
			return false
		}
		if port == 0 {
			port = 2379
		}
		if !c.destination(k, host, port) {
			return false
		}
	}
	return true
}

// etcdDefault records etcdctl's default endpoint when none is given.
func (c *classifier) etcdDefault(k *call) bool {
	for _, u := range k.p.uses {
		if u.key == "endpoints" {
			return true
		}
	}
	return c.destination(k, "127.0.0.1", 2379)
}

// checkEtcdGet: get reads keys, but not a range holding Kubernetes
// Secrets (/registry/secrets/...), whose data the kube tool refuses to
// show: a key under it, or a prefix or --from-key range that covers it.
func checkEtcdGet(c *classifier, k *call) {
	const secrets = "/registry/secrets/"
	if !c.readVerbOperands(k) {
		return
	}
	ranged := k.p.hasAny("prefix", "from-key") || len(k.p.ops) > 1
	for n, i := range k.p.ops {
		key := k.args[i].s
		if strings.HasPrefix(key, secrets) || n == 0 && ranged && (strings.HasPrefix(secrets, key) || k.p.has("from-key") && key <= secrets) {
			c.writer(k.name+" "+key, RiskHigh, "reads the keys of Kubernetes Secrets, whose data the kube tool refuses to show")
			return
		}
	}
	if !c.etcdDefault(k) {
		return
	}
	c.readOnly(k)
}

// checkEtcdWatch: watch streams; "watch KEY -- CMD" runs CMD on every
// event.
func checkEtcdWatch(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && a.s == "--" {
			c.construct(k.name+" --", RiskMedium, "runs a command on every event")
			return
		}
	}
	if !c.etcdDefault(k) {
		return
	}
	streamVerb(c, k)
}

// etcdSub is an etcdctl command group whose listed verbs read.
func etcdSub(verbs ...string) *tool {
	return &tool{name: "etcdctl", style: stylePflag, globalsAfterVerb: true,
		verbs: verbTable(vrule(readCheck(opts(reads(`--cluster --keys --detail --prefix`)), checkEtcdRead), strings.Join(verbs, " ")))}
}

// checkEtcdRead: a listing verb connects to the endpoints.
func checkEtcdRead(c *classifier, k *call) {
	if c.readVerbOperands(k) && c.etcdDefault(k) {
		c.readOnly(k)
	}
}
