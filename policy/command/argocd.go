package command

import "strings"

// argocdTools is the Argo CD CLI (cobra/pflag). It talks to the Argo CD
// server its configuration names (~/.config/argocd/config: the "argocd"
// service), or to --server, or with --core and --port-forward to the
// Kubernetes API. Its listing and inspecting verbs read; a refresh
// (--refresh, --hard-refresh) makes the server re-read and re-annotate the
// application, and diff --local renders a directory with whatever tools
// the configuration names.
var argocdTools = map[string]*tool{"argocd": argocdTool}

var argocdGlobals = opts(
	reads(`--auth-token= --client-crt= --client-crt-key= --grpc-web --grpc-web-root-path= -H|--header=
		--http-retry-max= --insecure --logformat= --loglevel= --plaintext --server-crt=
		--controller-name= --redis-haproxy-name= --redis-name= --repo-server-name= -h|--help
		--kube-context= --port-forward-namespace= --server-name=`),
	readsVal(argocdServer, `--server=`),
	readsVal(argocdCore, `--core --port-forward`),
	unknowns("reads another configuration, whose server cannot be told", `--config=`),
)

// argocdServer: --server HOST[:PORT] (443, or 80 with --plaintext).
func argocdServer(c *classifier, k *call, u *optUse) bool {
	host, port, err := splitAuthority(strings.TrimSuffix(u.val.s, "/"))
	if err != nil {
		c.writer(k.name+" --server "+u.val.s, RiskMedium, "server: "+err.Error())
		return false
	}
	if port == 0 {
		port = 443
		for _, a := range k.args {
			if a.s == "--plaintext" {
				port = 80
			}
		}
	}
	return c.destination(k, host, port)
}

// argocdCore: --core and --port-forward reach Argo CD through the
// Kubernetes API.
func argocdCore(c *classifier, k *call, u *optUse) bool {
	if !boolOff(u) {
		c.setService(kubeService, kubeWhy)
	}
	return true
}

// argocdRefresh are the options that make the server refresh an
// application, a change.
var argocdRefresh = states(RiskLow, "makes the server refresh the application", `--refresh --hard-refresh`)

func argocdRead(spec string, extra ...optGroup) *verbRule {
	return readWith(opts(append([]optGroup{reads(spec)}, extra...)...))
}

var argocdTool = &tool{
	name: "argocd", style: stylePflag, globalsAfterVerb: true, net: true,
	service: "argocd", serviceWhy: "connects to the Argo CD server its configuration names",
	opts: argocdGlobals,
	verbs: verbTable(
		vrule(nestedVerb(&tool{name: "argocd app", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(
				vrule(argocdRead(`-o|--output= -l|--selector= -p|--project= -r|--repo= --cluster=
					-N|--app-namespace=`), "list"),
				vrule(argocdRead(`-o|--output= --show-params --show-operation -N|--app-namespace=
					--source-position= --source-name= --timeout=`, argocdRefresh), "get"),
				vrule(argocdRead(`--revision= --server-side-generate --exit-code -N|--app-namespace=
					--source-positions= --revisions= --diff-exit-code=`, argocdRefresh,
					unknowns("renders a local directory with the tools the configuration names", `--local=
						--local-repo-root= --local-include=`)), "diff"),
				vrule(argocdRead(`-o|--output= -N|--app-namespace=`), "history"),
				vrule(argocdRead(`--source= --revision= -N|--app-namespace= --revisions=
					--source-positions=`), "manifests"),
				vrule(argocdRead(`--orphaned -o|--output= --group= --kind= --name= --namespace=
					-N|--app-namespace= --project=`), "resources"),
				vrule(checkWith(opts(reads(`-f|--follow --tail= --since-seconds= -c|--container=
					--group= --kind= --name= --namespace= --filter= -p|--previous --until-time= --match-case
					-N|--app-namespace=`)), checkArgocdLogs), "logs"),
				vwrites(RiskMedium, `create set unset sync rollback patch patch-resource edit
					delete delete-resource terminate-op actions wait add-source remove-source
					confirm-deletion`),
			)}), "app"),
		vrule(nestedVerb(&tool{name: "argocd cluster", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(argocdRead(`-o|--output=`), "list"),
				vwrites(RiskMedium, "add rm set rotate-auth"))}), "cluster"),
		vrule(nestedVerb(&tool{name: "argocd proj", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(argocdRead(`-o|--output=`), "list"))}), "proj"),
		vrule(nestedVerb(&tool{name: "argocd repo", style: stylePflag, globalsAfterVerb: true,
			verbs: verbTable(vrule(argocdRead(`-o|--output=`), "list"),
				vwrites(RiskMedium, "add rm"))}), "repo"),
		vrule(readCheck(opts(reads(`--client --short -o|--output=`)), checkKubectlVersion), "version"),
		vwrites(RiskMedium, "login logout relogin context account admin cert gpg appset"),
	),
}

// checkArgocdLogs: app logs --follow streams.
func checkArgocdLogs(c *classifier, k *call) {
	if k.p.has("follow") {
		c.unbounded(k.ctx, BoundUnboundedStream, "")
	}
	c.readOnly(k)
}
