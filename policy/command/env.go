package command

import "strings"

// envKind classifies one environment or shell variable assignment.
type envKind uint8

const (
	envInert   envKind = iota // cannot change what a command does to the world
	envInjects                // can load code or change which program runs
	envUnknown                // not known to be inert
)

// inertEnv are the environment variables a command may be given: each
// only changes formatting, locale, time zone or terminal size, or hands a
// client a credential or name for the server the command itself names
// (PGPASSWORD, PGUSER, MYSQL_PWD, REDISCLI_AUTH: sent only to where the
// command connects, which the classifier judges). Every other name,
// whatever its case, is unknown: programs read variables no list could
// name (TF_CLI_ARGS_plan adds arguments to terraform plan,
// npm_config_logs_dir moves npm's log, http_proxy reroutes curl, PGHOST
// moves psql to another server).
var inertEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true,
	"COLUMNS": true, "LINES": true, "NO_COLOR": true, "CLICOLOR": true,
	"CLICOLOR_FORCE": true, "FORCE_COLOR": true, "SYSTEMD_COLORS": true,
	"SYSTEMD_PAGERSECURE": true, "SYSTEMD_URLIFY": true,
	"PGPASSWORD": true, "PGUSER": true, "PGDATABASE": true, "PGCONNECT_TIMEOUT": true,
	"PGAPPNAME": true, "MYSQL_PWD": true, "REDISCLI_AUTH": true,
}

// pagerEnv name programs a tool runs to show output; only an empty value
// or cat is inert.
var pagerEnv = map[string]bool{
	"PAGER": true, "SYSTEMD_PAGER": true, "GIT_PAGER": true, "MANPAGER": true,
	"PSQL_PAGER": true, "BAT_PAGER": true,
}

// injectingEnvPrefixes and injectingEnv can load code into a process,
// change which program a name runs, or run a program by themselves. They
// only choose how a refusal is worded (construct, high risk): every name
// not in inertEnv is refused anyway.
var injectingEnvPrefixes = []string{"LD_", "BASH_", "GIT_", "PYTHON", "PERL", "RUBY", "NODE_", "LESS", "DYLD_", "MALLOC_", "GCONV", "GLIBC_"}

var injectingEnv = map[string]bool{
	"PATH": true, "ENV": true, "PS4": true, "PROMPT_COMMAND": true,
	"SHELLOPTS": true, "BASHOPTS": true, "IFS": true, "CDPATH": true,
	"GLOBIGNORE": true, "HOSTALIASES": true, "LOCPATH": true, "NLSPATH": true,
	"EDITOR": true, "VISUAL": true, "BROWSER": true, "MANOPT": true,
	"SSH_ASKPASS": true, "SUDO_ASKPASS": true, "CURL_HOME": true,
	"WGETRC": true, "TAR_OPTIONS": true, "PSQLRC": true, "AWKPATH": true,
	"AWKLIBPATH": true, "KUBECTL_EXTERNAL_DIFF": true, "DOCKER_CONFIG": true,
	"HOME": true, "XDG_CONFIG_HOME": true, "SHELL": true, "TMPDIR": true,
	"SYSTEMD_EDITOR": true, "SYSTEMD_LESS": true, "MYSQL_HOME": true,
	"OPENSSL_CONF": true, "OPENSSL_ENGINES": true, "RUSTC_WRAPPER": true,
	"KUBECONFIG": true, "DOCKER_HOST": true,
}

// envClass classifies an assignment of value to name given to a
// program's environment (NAME=value cmd, env NAME=value, export NAME).
// static says whether the value is known.
func envClass(name, value string, static bool) envKind {
	if pagerEnv[name] {
		if static && (value == "" || value == "cat") {
			return envInert
		}
		return envInjects
	}
	if inertEnv[name] || strings.HasPrefix(name, "LC_") && isIdentifier(name) {
		return envInert
	}
	if injectingEnv[name] || strings.HasSuffix(name, "_PAGER") || strings.HasSuffix(name, "_EDITOR") ||
		strings.HasSuffix(name, "_COMMAND") || strings.HasSuffix(name, "PRELOAD") {
		return envInjects
	}
	for _, p := range injectingEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return envInjects
		}
	}
	return envUnknown
}

// shellLocal reports a name a command may set as a shell variable (a
// standalone assignment, a loop variable, read's target): lower-case
// letters and digits only. bash exports a variable only when it came from
// the environment or is exported, and the names programs read from the
// environment are upper-case or hold an underscore (http_proxy,
// npm_config_*); vigil runs local reads with a fixed environment of
// upper-case names.
func shellLocal(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if ch := name[i]; !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

// shellVarClass classifies a variable the shell itself sets (name=value
// alone, for NAME in, read NAME): a shell-local name, or an inert one.
func shellVarClass(name string) envKind {
	if shellLocal(name) {
		return envInert
	}
	return envClass(name, "", false)
}
