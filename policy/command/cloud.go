package command

import (
	"slices"
	"strings"
)

// Cloud and infrastructure-as-code CLIs. Their reading commands are API
// calls named by convention (describe-*, list, show); every parameter is
// sent as written, so values that make the CLI read local files and send
// them (file://, fileb://, @file) or fetch URLs are refused, and so is an
// explicit endpoint, which would receive signed requests.

var cloudTools = map[string]*tool{
	"aws":               awsTool,
	"gcloud":            gcloudTool,
	"az":                azTool,
	"terraform":         terraformTool,
	"ansible-inventory": ansibleInventoryTool,
}

// awsGlobals are the AWS CLI's global options (spelled out: prefixes
// are unknown).
var awsGlobals = opts(
	reads(`--debug --no-verify-ssl --no-paginate --output= --query= --profile= --region= --version
		--color= --no-sign-request --ca-bundle= --cli-read-timeout= --cli-connect-timeout=
		--cli-binary-format= --no-cli-pager --no-cli-auto-prompt --page-size= --max-items=
		--starting-token= --generate-cli-skeleton[=]`),
	nets("sends signed requests to a server the command names", `--endpoint-url=`),
	unknowns("reads parameters from a file", `--cli-input-json= --cli-input-yaml=`),
	unknowns("prompts a person", `--cli-auto-prompt`),
)

var awsTool = &tool{
	name: "aws", style: styleExactStop, net: true, noVerb: nil,
	service: "aws", serviceWhy: "connects to the AWS APIs (their hosts come from the region and the CLI's configuration)",
	opts:  awsGlobals,
	check: checkAws,
}

// checkAws: "aws SERVICE OPERATION [--param value]...": an operation
// reads only when awsReadOps lists it for its service (names are no
// proof: ec2 get-password-data reveals a secret, cognito-identity get-id
// creates an identity, redshift get-cluster-credentials creates a user);
// the high-level s3 command reads with ls; configure reads its local
// configuration with list and get.
func checkAws(c *classifier, k *call) {
	ops := k.p.ops
	if len(ops) == 0 {
		if k.p.has("version") {
			c.localNet()
			c.readOnly(k)
			return
		}
		c.unknown("aws", "no service")
		return
	}
	words := k.args[ops[0]:]
	for _, a := range words {
		if !c.noControl(k, a) {
			return
		}
	}
	service := words[0].s
	if len(words) < 2 || strings.HasPrefix(words[1].s, "-") {
		if service == "help" || len(words) > 1 && words[1].s == "help" {
			c.localNet()
			c.read("aws help", "read-only")
			return
		}
		c.unknown("aws "+service, "no operation")
		return
	}
	op := words[1].s
	name := "aws " + service + " " + op
	params := words[2:]
	switch {
	case op == "help" || service == "help":
		c.localNet()
		c.read(name, "read-only")
		return
	case service == "configure":
		if op == "get" && !awsConfigureGetSafe(params) {
			c.writer(name, RiskMedium, "prints a setting not known to be free of credentials (it reads only settings such as region and output)")
			return
		}
		if op == "list" || op == "get" || op == "list-profiles" {
			c.localNet()
			c.read(name, "reads the CLI's configuration")
			return
		}
		c.writer(name, RiskLow, "changes the CLI configuration")
		return
	case service == "s3":
		if op != "ls" {
			c.writer(name, RiskMedium, "copies, moves or removes objects")
			return
		}
		c.awsParams(k, name, params, awsS3LsFlags, 1)
		return
	case awsStreaming[op]:
		c.writer(name, RiskLow, "writes the response to an output file")
		return
	case awsReadOps[service] == nil:
		c.writer(name, RiskMedium, "service "+service+" has no operation known to be read-only")
		return
	case op == "wait":
		// Waiters poll the service's own describe and get calls; the
		// waiter's name comes first.
		if len(params) > 0 && !strings.HasPrefix(params[0].s, "-") {
			name += " " + params[0].s
			params = params[1:]
		}
	case !awsReadOps[service][op]:
		c.writer(name, RiskMedium, "operation not known to be read-only (see the list of "+service+" reads)")
		return
	}
	for _, p := range params {
		if service == "ssm" && p.s == "--with-decryption" {
			c.writer(name+" --with-decryption", RiskHigh, "decrypts SecureString parameters, which are secrets")
			return
		}
	}
	// API operations take only --parameters; a positional argument is an
	// output file (s3api get-object BUCKET KEY OUTFILE).
	c.awsParams(k, name, params, nil, 0)
}

// awsS3LsFlags are aws s3 ls's value-less flags.
var awsS3LsFlags = opts(reads(`--recursive --human-readable --summarize --page-size= --request-payer=
	--bucket-name-prefix= --bucket-region=`))

// awsParams checks an operation's parameters: each --name takes the
// words up to the next option as its value, and no value may make the CLI
// read a local file or fetch a URL. extra are the operation's own flags;
// maxOps is the most positional words allowed (a path for s3 ls).
// awsConfigKeys are the settings aws configure get may print: none holds a
// credential (aws_secret_access_key, aws_session_token and the like are
// not among them). A name may carry a profile prefix (profile.NAME.region).
var awsConfigKeys = []string{"region", "output", "role_arn", "source_profile", "role_session_name",
	"mfa_serial", "duration_seconds", "sso_start_url", "sso_region", "sso_account_id", "sso_role_name",
	"sso_session", "ca_bundle", "cli_pager", "cli_timestamp_format", "max_attempts", "retry_mode",
	"endpoint_url", "use_fips_endpoint", "use_dualstack_endpoint"}

// awsConfigureGetSafe reports whether aws configure get's words name one
// listed setting, with at most --profile NAME.
func awsConfigureGetSafe(params []arg) bool {
	names := 0
	for i := 0; i < len(params); i++ {
		a := params[i]
		switch {
		case !a.static:
			return false
		case a.s == "--profile" && i+1 < len(params) && params[i+1].static:
			i++
		case strings.HasPrefix(a.s, "-"):
			return false
		default:
			key := a.s
			if rest, ok := strings.CutPrefix(key, "profile."); ok {
				_, key, _ = strings.Cut(rest, ".")
			}
			if !slices.Contains(awsConfigKeys, key) {
				return false
			}
			names++
		}
	}
	return names == 1
}

func (c *classifier) awsParams(k *call, name string, params []arg, flags *optTable, maxOps int) {
	positional := 0
	afterOpt := false
	for _, a := range params {
		s := a.s
		if strings.HasPrefix(s, "--") {
			opt, val, hasEq := strings.Cut(s[2:], "=")
			if o := awsGlobals.longOpt(opt); o.found() && o.info().eff != effRead {
				u := useOf(o, 0, "--"+opt)
				c.applyOpt(k, &u)
				return
			}
			if hasEq && !awsValue(c, k, name, val) {
				return
			}
			afterOpt = !hasEq
			if flags != nil && flags.longOpt(opt).found() && flags.longOpt(opt).opt().arg == argNone {
				afterOpt = false
			}
			continue
		}
		if !awsValue(c, k, name, s) {
			return
		}
		if !afterOpt {
			positional++
			if positional > maxOps {
				c.writer(name+" "+s, RiskLow, "positional argument names an output file")
				return
			}
		}
	}
	c.read(name, "read-only API call")
}

// awsValue refuses parameter values the CLI expands from files or URLs.
func awsValue(c *classifier, k *call, name, v string) bool {
	lv := strings.ToLower(v)
	for _, p := range []string{"file://", "fileb://", "http://", "https://"} {
		if strings.HasPrefix(lv, p) {
			c.writer(name+" "+v, RiskMedium, "parameter value is read from a file or URL and sent")
			return false
		}
	}
	return true
}

var gcloudTool = &tool{
	name: "gcloud", style: styleArgparseExact, net: true,
	service: "gcloud", serviceWhy: "connects to the Google Cloud APIs",
	opts: opts(
		reads(`--account= --billing-project= --configuration= --flatten= --format= -h|--help
			--impersonate-service-account= --log-http --project= -q|--quiet --trace-token=
			--user-output-enabled --no-user-output-enabled --verbosity= --uri --filter= --limit=
			--page-size= --sort-by= --zone= --zones= --region= --regions= --location= --locations=
			--global --cluster= --instance= --database= --namespace= --service= --platform=
			--repository= --keyring= --key= --topic= --subscription= --bucket= --dataset=
			--network= --subnet= --folder= --organization= --billing-account= --iam-account=
			--show-labels --all --version= --show-config --show-log --run-diagnostics
			--anonymize --show-versions --only-local-state --show-unconfigured-properties
			--recursive --long -l --readable-sizes --etag --raw --show-default-values --freshness=
			--order= --port= --start=`),
		unknowns("reads flags or a token from a file", `--flags-file= --access-token-file=`),
		nets("prints a secret's value", `--show-secret=`),
	),
	check: checkGcloud,
}

// checkGcloud: the command's groups and verb (before its resource names)
// must be one of gcloudReads; alpha and beta in front do not change that.
// The configuration, version and info commands are local.
func checkGcloud(c *classifier, k *call) {
	ops := k.p.ops
	if len(ops) == 0 {
		if k.p.has("help") {
			c.localNet()
			c.readOnly(k)
			return
		}
		c.unknown("gcloud", "no command")
		return
	}
	start := 0
	if w := k.args[ops[0]].s; w == "alpha" || w == "beta" {
		start = 1
	}
	for n := start; n < len(ops); n++ {
		path := joinOps(k, ops[start:n+1])
		switch gcloudReads[path] {
		case cloudRead:
			c.read("gcloud "+path, "read-only API call")
			return
		case cloudLocal:
			c.localNet()
			c.read("gcloud "+path, "reads gcloud's local configuration")
			return
		}
	}
	c.writer("gcloud "+joinOps(k, ops), RiskMedium, "command not known to be read-only")
}

// joinOps joins the operands at indices ops.
func joinOps(k *call, ops []int) string {
	var b strings.Builder
	for n, i := range ops {
		if n > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k.args[i].s)
	}
	return b.String()
}

var azTool = &tool{
	name: "az", style: styleArgparseExact, net: true,
	service: "azure", serviceWhy: "connects to the Azure APIs",
	opts: opts(reads(`--debug -h|--help --only-show-errors -o|--output= --query= --subscription=
		--verbose -g|--resource-group= -n|--name= --ids= -l|--location= --top= --all --resource-type=
		--namespace= --vault-name= --account-name= --auth-mode= --container-name= --server=
		--cluster-name= --registry= --zone-name= --vnet-name= --nsg-name= --lb-name= --plan=
		--show-details -d --include-deleted --include-inherited --assignee= --role= --scope=
		--start-time= --end-time= --offset= --max-events= --resource= --metrics= --interval=
		--aggregation= --filter= --expand= --version= --nodepool-name= --gateway-name=
		--namespace-name= --workspace-name= --vm-name= --instance-id= --image-name=`)),
	check: checkAz,
}

// checkAz: the command's groups and verb (every operand: az takes
// resource names as options) must be one of azReads. A parameter value
// @file is read from a file and sent.
func checkAz(c *classifier, k *call) {
	ops := k.p.ops
	for _, u := range k.p.uses {
		if u.hasVal && strings.HasPrefix(u.val.s, "@") {
			c.writer("az "+u.as+" "+u.val.s, RiskMedium, "parameter value is read from a file and sent")
			return
		}
	}
	if len(ops) == 0 {
		if k.p.has("help") {
			c.localNet()
			c.readOnly(k)
			return
		}
		c.unknown("az", "no command")
		return
	}
	path := joinOps(k, ops)
	switch azReads[path] {
	case cloudRead:
		c.read("az "+path, "read-only API call")
	case cloudLocal:
		c.localNet()
		c.read("az "+path, "reads the CLI's local state")
	default:
		c.writer("az "+path, RiskMedium, "command not known to be read-only")
	}
}

// terraform (Go's flag package): state list/show/pull, show, output,
// version, providers, validate, graph and fmt -check read; plan reads
// only with -lock=false (else it takes the state lock) and without -out
// or -generate-config-out (which write files). plan runs the
// configuration's providers and data sources, and refreshes state in
// memory without saving it.
var terraformTool = &tool{
	name: "terraform", style: styleGoFlag, net: true,
	service: "terraform", serviceWhy: "reads its state from the backend and runs the providers its configuration names",
	opts:   opts(reads(`-chdir= -help|-h`), readsVal(terraformVersionFlag, `-version|-v`)),
	noVerb: localVerb,
	verbs: verbTable(
		vrule(nestedVerb(&tool{name: "terraform state", style: styleGoFlag,
			opts: opts(reads(`-state= -id=`)), globalsAfterVerb: true,
			verbs: verbTable(vrule(readVerb, "list show pull"),
				vwrites(RiskMedium, "mv rm push replace-provider"))}), "state"),
		vrule(checkWith(opts(
			reads(`-refresh= -refresh-only -destroy -target= -replace= -var= -var-file=
				-compact-warnings -detailed-exitcode -input= -json -no-color -parallelism= -state=
				-lock-timeout=`),
			readsVal(terraformLockFalse, `-lock=`),
			writes(RiskLow, "writes a file", `-out= -generate-config-out=`),
		), checkTerraformPlan), "plan"),
		vrule(readWith(opts(reads(`-json -no-color -show-sensitive`))), "show"),
		vrule(readWith(opts(reads(`-json -raw -no-color -state=`))), "output"),
		vrule(readCheck(opts(reads(`-json`)), checkTerraformVersion), "version"),
		vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`-json -no-color -test-directory=`))}, "validate"),
		vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`-type= -plan= -draw-cycles -module-depth=`))}, "graph"),
		vrule(nestedVerb(&tool{name: "terraform providers", style: styleGoFlag, noVerb: localVerb,
			verbs: verbTable(vrule(&verbRule{class: ruleRead, local: true, opts: opts(reads(`-json`))}, "schema"),
				vwrites(RiskLow, "lock mirror"))}), "providers"),
		vrule(nestedVerb(&tool{name: "terraform workspace", style: styleGoFlag,
			verbs: verbTable(vreads("list show"), vwrites(RiskMedium, "select new delete"))}), "workspace"),
		vrule(&verbRule{class: ruleCheck, local: true, opts: opts(reads(`-check -diff -list= -write= -recursive -no-color`)), check: checkTerraformFmt}, "fmt"),
		vrule(interactiveVerb, "console"),
		vwrites(RiskMedium, `init get apply import taint untaint refresh login logout force-unlock test
			metadata modules`),
		vwrites(RiskHigh, "destroy"),
	),
}

func terraformLockFalse(c *classifier, k *call, u *optUse) bool {
	if u.val.static && u.val.s == "false" {
		return true
	}
	c.writer(k.name+" -lock="+u.val.s, RiskMedium, "takes the state lock")
	return false
}

func checkTerraformPlan(c *classifier, k *call) {
	if !k.p.has("lock") {
		c.writer(k.name, RiskMedium, "takes the state lock (add -lock=false)")
		return
	}
	if len(k.p.ops) > 0 {
		c.unknown(k.name+" "+k.args[k.p.ops[0]].s, "unexpected argument")
		return
	}
	c.read(k.name, "plans without saving or locking")
}

// terraformVersionFlag: -version prints the version and asks HashiCorp's
// checkpoint service whether a newer one exists.
func terraformVersionFlag(c *classifier, k *call, u *optUse) bool {
	return c.destination(k, "checkpoint-api.hashicorp.com", 443)
}

// checkTerraformVersion: version asks HashiCorp's checkpoint service
// whether a newer one exists.
func checkTerraformVersion(c *classifier, k *call) {
	if c.destination(k, "checkpoint-api.hashicorp.com", 443) {
		c.readOnly(k)
	}
}

// checkTerraformFmt: fmt rewrites files unless -check or -write=false.
func checkTerraformFmt(c *classifier, k *call) {
	if u := k.p.last("write"); k.p.has("check") || u != nil && u.val.s == "false" {
		c.readOnly(k)
		return
	}
	c.writer(k.name, RiskLow, "rewrites files")
}

// ansible-inventory prints the inventory. An inventory source (-i) may be
// an executable script or a plugin configuration, and a vault password
// file may be a script: both run code. --output writes a file.
var ansibleInventoryTool = &tool{
	name: "ansible-inventory", style: styleArgparse,
	opts: opts(
		reads(`--list --host= --graph -y|--yaml --toml --vars --export -l|--limit= --playbook-dir=
			-v|--verbose --version -h|--help`),
		unknowns("inventory source may be an executable script", `-i|--inventory|--inventory-file=`),
		execs("vault password source may be an executable script", `--vault-id= --vault-password-file|--vault-pass-file=`),
		unknowns("asks a person for a password", `-J|--ask-vault-password|--ask-vault-pass`),
		writes(RiskLow, "writes a file", `--output=`),
		writes(RiskLow, "clears the inventory cache", `--flush-cache`),
	),
	check: func(c *classifier, k *call) {
		if !k.p.hasAny("list", "host", "graph", "version", "help") {
			c.unknown("ansible-inventory", "no listing mode")
			return
		}
		c.readOnly(k)
	},
}
