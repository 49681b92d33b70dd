package command

import "strings"

// containerCheckers cover container engines, Kubernetes and Helm.
var containerCheckers = map[string]checkFunc{
	"docker":  sub(&dockerTool),
	"podman":  sub(&dockerTool),
	"nerdctl": sub(&dockerTool),
	"kubectl": sub(&kubectlTool),
	"oc":      sub(&kubectlTool),
	"helm":    sub(&helmTool),
	"crictl":  sub(&crictlTool),
	"etcdctl": sub(&etcdctlTool),
}

// readWrite builds a subcommand table: reads are pure reads, writes are
// writers of the given risk, extra verbs have their own rules.
func readWrite(reads []string, risk Risk, writes []string, extra map[string]verb) map[string]verb {
	m := make(map[string]verb, len(reads)+len(writes)+len(extra))
	for _, r := range reads {
		m[r] = rd
	}
	for _, w := range writes {
		m[w] = verb{class: ruleWrite, risk: risk}
	}
	for n, v := range extra {
		m[n] = v
	}
	return m
}

// nested returns a verb whose arguments are another subcommand table.
func nested(t *subTool) verb { return ck(sub(t)) }

var dockerGlobals = optSpec{shortArg: "Hcl", longArg: []string{"host", "context", "log-level", "tlscacert", "tlscert", "tlskey"}}

func dockerGlobalOK(t token) bool {
	return matchOneOf(t.name, "H", "host", "c", "context", "l", "log-level", "D", "debug", "tls",
		"tlsverify", "tlscacert", "tlscert", "tlskey", "v", "version", "help")
}

// dockerHigh are docker subcommands that destroy containers or data.
var dockerHigh = []string{"rm", "rmi", "kill", "stop", "prune"}

var dockerTool = subTool{
	spec: dockerGlobals, globalOK: dockerGlobalOK, none: rd,
	verbs: readWrite(
		[]string{"ps", "images", "inspect", "info", "version", "top", "port", "diff", "history", "search"},
		RiskMedium,
		[]string{"cp", "create", "start", "restart", "pull", "push", "build", "commit", "tag",
			"rename", "update", "pause", "unpause", "load", "save", "import", "export", "login",
			"logout", "swarm", "wait", "init"},
		map[string]verb{
			"rm": wrHigh, "rmi": wrHigh, "kill": wrHigh, "stop": wrHigh, "run": ck(checkRunTTY),
			"logs": ck(checkDockerLogs), "stats": ck(checkDockerStats), "events": ck(checkUntil),
			"exec": ck(checkDockerExec), "attach": ck(checkInteractive),
			"container": nested(&dockerContainerTool), "image": nested(&dockerImageTool),
			"volume": nested(&dockerObjectTool), "network": nested(&dockerNetworkTool),
			"system": nested(&dockerSystemTool), "node": nested(&dockerNodeTool),
			"service": nested(&dockerServiceTool), "stack": nested(&dockerStackTool),
			"secret": nested(&dockerObjectTool), "config": nested(&dockerObjectTool),
			"context": nested(&dockerContextTool), "plugin": nested(&dockerObjectTool),
			"manifest": nested(&dockerManifestTool), "buildx": nested(&dockerBuildxTool),
			"compose": nested(&dockerComposeTool), "trust": nested(&dockerManifestTool),
		}),
}

var (
	dockerContainerTool = subTool{verbs: readWrite(
		[]string{"ls", "list", "ps", "inspect", "top", "port", "diff"}, RiskMedium,
		[]string{"cp", "create", "start", "restart", "commit", "rename", "update", "pause",
			"unpause", "export", "wait"},
		map[string]verb{"rm": wrHigh, "kill": wrHigh, "stop": wrHigh, "prune": wrHigh,
			"run": ck(checkRunTTY), "logs": ck(checkDockerLogs), "stats": ck(checkDockerStats), "exec": ck(checkDockerExec),
			"attach": ck(checkInteractive)})}
	dockerImageTool = subTool{verbs: readWrite([]string{"ls", "list", "inspect", "history"}, RiskMedium,
		[]string{"pull", "push", "build", "tag", "load", "save", "import"},
		map[string]verb{"rm": wrHigh, "prune": wrHigh})}
	dockerObjectTool = subTool{verbs: readWrite([]string{"ls", "list", "inspect"}, RiskMedium,
		[]string{"create", "install", "enable", "disable", "upgrade", "set", "push", "update"},
		map[string]verb{"rm": wrHigh, "prune": wrHigh})}
	dockerNetworkTool = subTool{verbs: readWrite([]string{"ls", "list", "inspect"}, RiskMedium,
		[]string{"create", "connect", "disconnect"}, map[string]verb{"rm": wrHigh, "prune": wrHigh})}
	dockerSystemTool = subTool{verbs: readWrite([]string{"df", "info"}, RiskHigh, []string{"prune"},
		map[string]verb{"events": ck(checkUntil)})}
	dockerNodeTool = subTool{verbs: readWrite([]string{"ls", "list", "inspect", "ps"}, RiskMedium,
		[]string{"update", "promote", "demote"}, map[string]verb{"rm": wrHigh})}
	dockerServiceTool = subTool{verbs: readWrite([]string{"ls", "list", "ps", "inspect"}, RiskMedium,
		[]string{"create", "scale", "update", "rollback"},
		map[string]verb{"rm": wrHigh, "logs": ck(checkDockerLogs)})}
	dockerStackTool = subTool{verbs: readWrite([]string{"ls", "list", "ps", "services", "config"}, RiskMedium,
		[]string{"deploy"}, map[string]verb{"rm": wrHigh})}
	dockerContextTool = subTool{verbs: readWrite([]string{"ls", "list", "show", "inspect"}, RiskLow,
		[]string{"use", "create", "rm", "update", "import", "export"}, nil)}
	dockerManifestTool = subTool{verbs: readWrite([]string{"inspect"}, RiskMedium,
		[]string{"create", "annotate", "push", "rm", "sign", "revoke", "key", "signer"}, nil)}
	dockerBuildxTool = subTool{verbs: readWrite([]string{"ls", "du", "version"}, RiskMedium,
		[]string{"build", "bake", "create", "rm", "stop", "use", "prune", "imagetools"}, nil)}
	dockerComposeTool = subTool{
		spec: optSpec{shortArg: "fp", longArg: []string{"file", "project-name", "project-directory",
			"env-file", "profile", "ansi", "progress", "parallel"}},
		verbs: readWrite([]string{"ps", "ls", "images", "top", "version", "port"}, RiskMedium,
			[]string{"run", "up", "start", "restart", "pull", "push", "build", "create", "pause",
				"unpause", "cp", "scale", "watch", "attach", "wait"},
			map[string]verb{"down": wrHigh, "stop": wrHigh, "rm": wrHigh, "kill": wrHigh,
				"logs": ck(checkDockerLogs), "events": ck(streamVerb), "exec": ck(checkComposeExec),
				"config": ck(denyArgs(RiskLow, "writes a file", "-o", "--output"))}),
	}
)

var dockerLogsSpec = optSpec{shortArg: "n", longArg: []string{"since", "until", "tail"}}

// checkDockerLogs: docker logs reads; -f/--follow never ends.
func checkDockerLogs(c *classifier, k *call) {
	f, counted := newFollow(), false
	s := scanOpts(&dockerLogsSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch {
		case t.kind == tokShort && t.name == "f":
			f.dropShort(c, k, t.i, "f", "n")
		case t.kind == tokLong && (t.name == "follow" || strings.HasPrefix(t.name, "follow=")):
			f.dropArg(t.i)
		case t.kind == tokShort && t.name == "n", t.kind == tokLong && t.name == "tail":
			counted = true
		}
	}
	var extra edit
	if !counted {
		extra.insert = "--tail " + rewriteLines
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

// checkDockerStats: without --no-stream, stats streams forever.
func checkDockerStats(c *classifier, k *call) {
	streamsUnless(c, k, "--no-stream", "--no-stream", "--no-stream=true")
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
	for _, a := range k.args {
		if a.static && strings.HasPrefix(a.s, "--until") {
			c.readOnly(k)
			return
		}
	}
	c.unbounded(k.ctx, BoundUnboundedStream, "")
	c.readOnly(k)
}

var dockerExecSpec = optSpec{shortArg: "euw", longArg: []string{"env", "env-file", "user", "workdir", "detach-keys"}, stopAtOperand: true}

// checkDockerExec: "docker exec [options] CONTAINER CMD..." runs CMD in the
// container; -t allocates a terminal.
func checkDockerExec(c *classifier, k *call) {
	tty, interactive := newFollow(), false
	s := scanOpts(&dockerExecSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown(k.name, "dynamic argument")
			return
		case tokOperand:
			c.execInto(k, k.args[t.i+1:], !interactive || k.ctx.fed, tty)
			return
		}
		switch t.name {
		case "t", "tty":
			if t.kind == tokShort {
				tty.dropShort(c, k, t.i, "it", "euw")
			} else {
				tty.dropArg(t.i)
			}
		case "i", "interactive":
			interactive = true
		case "d", "detach", "privileged", "u", "user", "w", "workdir", "detach-keys":
		case "e", "env":
			if !t.valStatic || !c.containerEnv(t.val) {
				return
			}
		default:
			c.badOption(k, t)
			return
		}
	}
	c.unknown(k.name, "no container")
}

// containerEnv vets an environment setting passed into a container.
func (c *classifier) containerEnv(v string) bool {
	name, value, _ := strings.Cut(v, "=")
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

var composeExecSpec = optSpec{shortArg: "euw", longArg: []string{"env", "user", "workdir", "index"}, stopAtOperand: true}

// checkComposeExec: compose exec allocates a terminal unless -T is given.
func checkComposeExec(c *classifier, k *call) {
	noTTY := false
	s := scanOpts(&composeExecSpec, k.args)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown(k.name, "dynamic argument")
			return
		case tokOperand:
			tty := newFollow()
			if !noTTY {
				tty.found = true
				tty.replace = nil
			}
			c.composeExec(k, k.args[t.i+1:], tty)
			return
		}
		switch t.name {
		case "T", "no-TTY", "no-tty":
			noTTY = true
		case "d", "detach", "privileged", "u", "user", "w", "workdir", "index":
		case "e", "env":
			if !t.valStatic || !c.containerEnv(t.val) {
				return
			}
		default:
			c.badOption(k, t)
			return
		}
	}
	c.unknown(k.name, "no service")
}

func (c *classifier) composeExec(k *call, argv []arg, tty follow) {
	if len(argv) == 0 {
		c.unknown(k.name, "no command")
		return
	}
	ctx := k.ctx
	ctx.chain++
	ctx.piped, ctx.fed = false, !tty.found
	c.argv(argv, ctx)
	if tty.found {
		c.unbounded(k.ctx, BoundTTYFlag, c.rebuild(k, edit{insertAfter: -1, insert: "-T"}))
	}
}

var kubectlGlobals = optSpec{
	shortArg: "nsv",
	longArg: []string{"namespace", "context", "kubeconfig", "server", "cluster", "user", "token",
		"as", "as-group", "as-uid", "request-timeout", "certificate-authority", "client-certificate",
		"client-key", "tls-server-name", "cache-dir", "v", "username", "password"},
}

func kubectlGlobalOK(t token) bool {
	return matchOneOf(t.name, "n", "namespace", "context", "kubeconfig", "s", "server", "cluster",
		"user", "token", "as", "as-group", "as-uid", "request-timeout", "certificate-authority",
		"client-certificate", "client-key", "tls-server-name", "insecure-skip-tls-verify",
		"match-server-version", "v", "cache-dir", "disable-compression", "warnings-as-errors",
		"username", "password", "A", "all-namespaces", "help", "h")
}

var kubectlTool = subTool{
	spec: kubectlGlobals, globalOK: kubectlGlobalOK,
	verbs: readWrite(
		nil,
		RiskMedium,
		[]string{"apply", "create", "patch", "replace", "scale", "autoscale", "set", "label",
			"annotate", "taint", "cordon", "uncordon", "expose", "cp", "certificate"},
		map[string]verb{
			"delete": wrHigh, "drain": wrHigh, "run": ck(checkRunTTY), "debug": ck(checkRunTTY),
			"describe": ck(kubectlRead), "top": ck(kubectlRead), "version": ck(kubectlRead),
			"explain": ck(kubectlRead), "api-resources": ck(kubectlRead), "api-versions": ck(kubectlRead),
			"wait": ck(kubectlRead), "completion": ck(kubectlRead), "options": ck(kubectlRead),
			"get": ck(checkKubectlWatch), "events": ck(checkKubectlWatch),
			"logs": ck(checkKubectlLogs), "exec": ck(checkKubectlExec),
			"edit":         ck(checkEditVerb),
			"attach":       ck(checkInteractive),
			"port-forward": ck(checkLongRunning),
			"proxy":        ck(checkLongRunning),
			"cluster-info": ck(checkClusterInfo),
			"auth":         nested(&kubectlAuthTool),
			"config":       nested(&kubectlConfigTool),
			"rollout":      nested(&kubectlRolloutTool),
			"plugin":       nested(&subTool{verbs: map[string]verb{"list": rd}}),
		}),
}

var (
	kubectlAuthTool   = subTool{verbs: readWrite([]string{"can-i", "whoami"}, RiskMedium, []string{"reconcile"}, nil)}
	kubectlConfigTool = subTool{verbs: readWrite(
		[]string{"view", "current-context", "get-contexts", "get-clusters", "get-users"}, RiskLow,
		[]string{"use-context", "use", "set-context", "set-cluster", "set-credentials", "set",
			"unset", "delete-context", "delete-cluster", "delete-user", "rename-context"}, nil)}
	kubectlRolloutTool = subTool{verbs: readWrite([]string{"status", "history"}, RiskMedium,
		[]string{"restart", "undo", "pause", "resume"}, nil)}
)

// kubectlWrites reports (and records) kubectl's global options that write
// files, which may also follow the subcommand: --profile-output,
// --log-file, --log-dir.
func (c *classifier) kubectlWrites(k *call) bool {
	for _, a := range k.args {
		if !a.static || strings.HasPrefix(a.s, "--profile") || strings.HasPrefix(a.s, "--log-") {
			c.unknown(k.name, "option may write files")
			return true
		}
	}
	return false
}

// kubectlRead is a kubectl subcommand that only reads.
func kubectlRead(c *classifier, k *call) {
	if !c.kubectlWrites(k) {
		c.readOnly(k)
	}
}

// denyArgs returns a checker that reads unless one of the options is
// present (as "-o", "-o=x" or "--output=x").
func denyArgs(risk Risk, msg string, opts ...string) checkFunc {
	return func(c *classifier, k *call) {
		for _, a := range k.args {
			name, _, _ := strings.Cut(a.s, "=")
			if !a.static || matchOneOf(name, opts...) || len(name) > 2 && name[1] != '-' && matchOneOf(name[:2], opts...) {
				c.writer(k.name+" "+name, risk, msg)
				return
			}
		}
		c.readOnly(k)
	}
}

// checkEditVerb: an edit subcommand opens an editor and writes.
func checkEditVerb(c *classifier, k *call) {
	c.writer(k.name, RiskMedium, "known writer")
	c.unbounded(k.ctx, BoundPager, "")
}

// checkLongRunning: port-forward and proxy serve until stopped.
func checkLongRunning(c *classifier, k *call) {
	c.unknown(k.name, "opens a listener")
	c.unbounded(k.ctx, BoundUnboundedStream, "")
}

// checkClusterInfo: "cluster-info dump --output-directory" writes files.
func checkClusterInfo(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static || strings.HasPrefix(a.s, "--output-directory") {
			c.writer(k.name+" dump", RiskLow, "writes files")
			return
		}
	}
	c.readOnly(k)
}

// checkKubectlWatch: get and events read; -w/--watch never ends.
func checkKubectlWatch(c *classifier, k *call) {
	if c.kubectlWrites(k) {
		return
	}
	f := newFollow()
	for i, a := range k.args {
		if !a.static {
			continue
		}
		switch {
		case a.s == "-w" || a.s == "--watch" || a.s == "--watch=true" || a.s == "--watch-only" || a.s == "--watch-only=true":
			f.dropArg(i)
		case len(a.s) > 1 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'w') && !strings.ContainsAny(a.s, "onlLcf"):
			f.dropShort(c, k, i, "w", "onlLcf")
		}
	}
	f.report(c, k, edit{})
	c.readOnly(k)
}

// checkKubectlLogs: logs read; -f/--follow never ends.
func checkKubectlLogs(c *classifier, k *call) {
	if c.kubectlWrites(k) {
		return
	}
	f, counted := newFollow(), false
	for i, a := range k.args {
		if !a.static {
			continue
		}
		switch {
		case a.s == "-f" || a.s == "--follow" || a.s == "--follow=true":
			f.dropArg(i)
		case strings.HasPrefix(a.s, "--tail"):
			counted = true
		case len(a.s) > 2 && a.s[0] == '-' && a.s[1] != '-' && strings.ContainsRune(a.s, 'f') && !strings.ContainsAny(a.s[:strings.IndexByte(a.s, 'f')], "cln"):
			f.dropShort(c, k, i, "f", "cln")
		}
	}
	var extra edit
	if !counted {
		extra.insert = "--tail=" + rewriteLines
	}
	f.report(c, k, extra)
	c.readOnly(k)
}

var kubectlExecSpec = optSpec{shortArg: "cnfs", longArg: []string{"container", "namespace", "filename", "pod-running-timeout", "context", "kubeconfig", "server", "cluster", "user", "token"}}

// checkKubectlExec: "kubectl exec POD [-c C] -- CMD..." runs CMD in the pod.
func checkKubectlExec(c *classifier, k *call) {
	dash := -1
	for i, a := range k.args {
		if a.static && a.s == "--" {
			dash = i
			break
		}
	}
	opts := k.args
	if dash >= 0 {
		opts = k.args[:dash]
	}
	tty, interactive, pod := newFollow(), false, -1
	s := scanOpts(&kubectlExecSpec, opts)
	for t, more := s.next(); more; t, more = s.next() {
		switch t.kind {
		case tokDynamic:
			c.unknown(k.name, "dynamic argument")
			return
		case tokOperand:
			if pod < 0 {
				pod = t.i
				if dash < 0 {
					c.execInto(k, k.args[pod+1:], !interactive || k.ctx.fed, tty)
					return
				}
			}
			continue
		}
		switch t.name {
		case "t", "tty":
			if t.kind == tokShort {
				tty.dropShort(c, k, t.i, "it", "cnfs")
			} else {
				tty.dropArg(t.i)
			}
		case "i", "stdin":
			interactive = true
		case "q", "quiet", "c", "container", "n", "namespace", "f", "filename", "pod-running-timeout",
			"context", "kubeconfig", "s", "server", "cluster", "user", "token":
		default:
			c.badOption(k, t)
			return
		}
	}
	if dash < 0 || pod < 0 {
		c.unknown(k.name, "no pod or command")
		return
	}
	c.execInto(k, k.args[dash+1:], !interactive || k.ctx.fed, tty)
}

var helmTool = subTool{
	spec: optSpec{shortArg: "n", longArg: []string{"namespace", "kube-context", "kubeconfig",
		"registry-config", "repository-config", "repository-cache", "burst-limit", "qps",
		"kube-apiserver", "kube-token", "kube-as-user", "kube-as-group", "kube-ca-file"}},
	globalOK: func(t token) bool {
		return matchOneOf(t.name, "n", "namespace", "kube-context", "kubeconfig", "debug",
			"registry-config", "repository-config", "repository-cache", "burst-limit", "qps",
			"kube-apiserver", "kube-token", "kube-as-user", "kube-as-group", "kube-ca-file",
			"kube-insecure-skip-tls-verify", "help", "h")
	},
	verbs: readWrite(
		[]string{"list", "ls", "status", "get", "history", "hist", "show", "inspect", "search",
			"version", "env", "lint", "verify", "completion"},
		RiskMedium,
		[]string{"install", "upgrade", "rollback", "test", "push", "pull", "fetch", "package",
			"create", "registry"},
		map[string]verb{
			"uninstall": wrHigh, "delete": wrHigh, "del": wrHigh, "un": wrHigh,
			"template":   ck(checkHelmTemplate),
			"repo":       nested(&subTool{verbs: readWrite([]string{"list", "ls"}, RiskLow, []string{"add", "remove", "rm", "update", "up", "index"}, nil)}),
			"plugin":     nested(&subTool{verbs: readWrite([]string{"list", "ls"}, RiskMedium, []string{"install", "uninstall", "rm", "remove", "update", "up", "package", "verify"}, nil)}),
			"dependency": nested(&helmDependencyTool),
			"dep":        nested(&helmDependencyTool),
		}),
}

var helmDependencyTool = subTool{verbs: readWrite([]string{"list", "ls"}, RiskLow, []string{"update", "up", "build"}, nil)}

// checkHelmTemplate: rendering reads, but --output-dir writes files and
// --post-renderer runs a program.
func checkHelmTemplate(c *classifier, k *call) {
	for _, a := range k.args {
		if !a.static {
			c.unknown(k.name, "dynamic argument")
			return
		}
		if strings.HasPrefix(a.s, "--output-dir") || strings.HasPrefix(a.s, "--post-renderer") {
			c.writer(k.name+" "+strings.SplitN(a.s, "=", 2)[0], RiskLow, "writes files or runs a program")
			return
		}
	}
	c.readOnly(k)
}

var crictlTool = subTool{
	spec: optSpec{shortArg: "rit", longArg: []string{"runtime-endpoint", "image-endpoint", "timeout", "config"}},
	globalOK: func(t token) bool {
		return matchOneOf(t.name, "r", "runtime-endpoint", "i", "image-endpoint", "t", "timeout", "D", "debug")
	},
	verbs: readWrite(
		[]string{"ps", "pods", "images", "img", "inspect", "inspecti", "inspectp", "info", "version",
			"imagefsinfo", "statsp"},
		RiskMedium,
		[]string{"start", "run", "runp", "create", "pull", "update", "update-runtime-config"},
		map[string]verb{"rm": wrHigh, "rmp": wrHigh, "rmi": wrHigh, "stop": wrHigh, "stopp": wrHigh,
			"logs": ck(checkDockerLogs), "stats": ck(checkCrictlStats), "exec": ck(checkDockerExec),
			"attach": ck(checkInteractive), "port-forward": ck(checkLongRunning)}),
}

// checkCrictlStats: -w/--watch streams.
func checkCrictlStats(c *classifier, k *call) {
	for _, a := range k.args {
		if a.static && (a.s == "-w" || a.s == "--watch") {
			c.unbounded(k.ctx, BoundUnboundedStream, "")
		}
	}
	c.readOnly(k)
}

var etcdctlTool = subTool{
	spec: optSpec{longArg: []string{"endpoints", "cacert", "cert", "key", "user", "password",
		"command-timeout", "dial-timeout", "write-out", "discovery-srv"}},
	globalOK: func(t token) bool {
		return matchOneOf(t.name, "endpoints", "cacert", "cert", "key", "user", "password",
			"command-timeout", "dial-timeout", "write-out", "w", "discovery-srv", "insecure-skip-tls-verify",
			"insecure-transport", "debug", "hex", "keepalive-time", "keepalive-timeout")
	},
	verbs: readWrite([]string{"get", "version"}, RiskMedium,
		[]string{"put", "txn", "compaction", "defrag", "move-leader", "lock", "elect", "make-mirror",
			"check", "auth", "downgrade"},
		map[string]verb{
			"del":      wrHigh,
			"watch":    ck(streamVerb),
			"member":   ck(subOnly("list")),
			"endpoint": ck(subOnly("status", "health", "hashkv")),
			"alarm":    ck(subOnly("list")),
			"user":     ck(subOnly("list", "get")),
			"role":     ck(subOnly("list", "get")),
			"lease":    ck(subOnly("list", "timetolive")),
			"snapshot": ck(subOnly("status")),
		}),
}
