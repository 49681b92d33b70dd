package command

import "strings"

// envKind classifies one environment or shell variable assignment.
type envKind uint8

const (
	envInert   envKind = iota // cannot change what a command does to the world
	envInjects                // can load code or change which program runs
	envUnknown                // not known either way
)

// inertEnv are upper-case variables known only to change formatting,
// locale, time zone or which server a client talks to.
var inertEnv = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true,
	"COLUMNS": true, "LINES": true, "NO_COLOR": true, "CLICOLOR": true,
	"CLICOLOR_FORCE": true, "FORCE_COLOR": true, "SYSTEMD_COLORS": true,
	"SYSTEMD_PAGERSECURE": true, "SYSTEMD_URLIFY": true,
	"DOCKER_CONTEXT": true,
	"PGPASSWORD":     true, "PGHOST": true, "PGPORT": true, "PGUSER": true,
	"PGDATABASE": true, "PGCONNECT_TIMEOUT": true, "PGSSLMODE": true,
	"PGAPPNAME": true, "MYSQL_PWD": true, "MYSQL_HOST": true,
	"MYSQL_TCP_PORT": true, "REDISCLI_AUTH": true,
	"AWS_PROFILE": true, "AWS_REGION": true, "AWS_DEFAULT_REGION": true,
}

// pagerEnv name programs a tool runs to show output; only an empty value
// or cat is inert.
var pagerEnv = map[string]bool{
	"PAGER": true, "SYSTEMD_PAGER": true, "GIT_PAGER": true, "MANPAGER": true,
	"PSQL_PAGER": true, "BAT_PAGER": true,
}

// injectingEnvPrefixes and injectingEnv can load code into a process,
// change which program a name runs, or run a program by themselves.
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
	// A kubeconfig can run credential plugins; DOCKER_HOST=ssh:// runs ssh.
	"KUBECONFIG": true, "DOCKER_HOST": true,
}

// envClass classifies an assignment of value to name. static says whether
// the value is known.
func envClass(name, value string, static bool) envKind {
	if pagerEnv[name] {
		if static && (value == "" || value == "cat") {
			return envInert
		}
		return envInjects
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
	if inertEnv[name] || strings.HasPrefix(name, "LC_") {
		return envInert
	}
	// Shell-local lower-case variables are not part of any program's
	// contract; upper-case ones may be read by a tool and are unknown.
	if hasLower(name) {
		return envInert
	}
	return envUnknown
}

func hasLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'a' && s[i] <= 'z' {
			return true
		}
	}
	return false
}
