package command

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// oracleWriters are commands that change the system whatever their
// arguments. The fuzz oracle keeps its own list, independent of the
// classifier's tables, so a mistake in the tables cannot hide itself.
var oracleWriters = map[string]bool{
	"rm": true, "mv": true, "cp": true, "dd": true, "shred": true, "mkfs": true, "mkfs.ext4": true,
	"truncate": true, "chmod": true, "chown": true, "chgrp": true, "ln": true, "mkdir": true,
	"touch": true, "rmdir": true, "reboot": true, "shutdown": true, "halt": true, "poweroff": true,
	"pkill": true, "killall": true, "useradd": true, "userdel": true,
	"install": true, "rsync": true, "scp": true, "wipefs": true, "fdisk": true, "parted": true,
	"swapoff": true, "modprobe": true, "insmod": true, "rmmod": true, "umount": true,
	"chattr": true, "setfacl": true, "fallocate": true, "tee": true, "eval": true, "exec": true,
	"doas": true, "source": true, ".": true, "alias": true, "trap": true,
}

// oracleFindings walks src independently of the classifier and returns
// the literal command words of simple commands that are known writers,
// inside substitutions too (which run). kill writes unless it sends signal
// 0 or lists signals, passwd unless it shows a status (-S), and sudo runs
// its command unless it lists (-l, -Bl). ok
// is false if src does not parse.
func oracleFindings(src string) (writers []string, ok bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		x, isCall := n.(*syntax.CallExpr)
		if !isCall || len(x.Args) == 0 {
			return true
		}
		word := x.Args[0].Lit()
		second := ""
		if len(x.Args) > 1 {
			second = x.Args[1].Lit()
		}
		switch {
		case oracleWriters[word]:
			writers = append(writers, word)
		case word == "kill" && second != "-0" && second != "-l" && second != "-L" && second != "-s" && second != "-n":
			writers = append(writers, word)
		case word == "passwd" && !strings.HasPrefix(second, "-S"):
			writers = append(writers, word)
		case word == "sudo" && !sudoLists(second) && second != "-n" && second != "-V" && second != "-U":
			writers = append(writers, word)
		case expands(x.Args[0]):
			writers = append(writers, "(dynamic command word)")
		}
		return true
	})
	return writers, true
}

// sudoLists reports a first option of sudo that lists (-l, a cluster
// with l such as -Bl, --list).
func sudoLists(w string) bool {
	return w == "--list" || strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "l")
}

// expands reports whether a word contains a parameter expansion, so that
// as a command word it could name any program.
func expands(w *syntax.Word) bool {
	found := false
	syntax.Walk(w, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ParamExp); ok {
			found = true
		}
		return !found
	})
	return found
}

// subcommandTools are tools whose grammar has verbs; the fuzz oracle
// inserts an option none of them has after their name.
var subcommandTools = map[string]bool{
	"systemctl": true, "kubectl": true, "helm": true, "docker": true, "git": true, "apt": true,
	"apt-get": true, "dnf": true, "yum": true, "zfs": true, "zpool": true, "timedatectl": true,
	"loginctl": true, "busctl": true, "networkctl": true, "resolvectl": true, "coredumpctl": true,
	"systemd-analyze": true, "supervisorctl": true, "crictl": true, "etcdctl": true, "virsh": true,
	"lxc": true, "pip": true, "npm": true, "snap": true, "apk": true, "terraform": true,
	"rbd": true, "rados": true, "udevadm": true, "hostnamectl": true, "localectl": true,
}

// unknownOption is an option no tool has.
const unknownOption = " --vigil-fuzz-unknown"

// oracleSecondGen reports why src must not be read-only by the second
// review's rules, independently of the classifier: a network device path,
// set -k, an @P expansion. It also returns src with an unknown option
// inserted after the first subcommand tool's name, or "".
func oracleSecondGen(src string) (why, withUnknown string) {
	switch {
	case strings.Contains(src, "/dev/tcp"), strings.Contains(src, "/dev/udp"):
		why = "a network device path"
	case strings.Contains(src, "set -k"):
		why = "set -k"
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return why, ""
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && x.Exp.Word.Lit() == "P" {
				why = "an @P expansion"
			}
		case *syntax.CallExpr:
			if withUnknown == "" && len(x.Args) > 0 && subcommandTools[x.Args[0].Lit()] {
				end := x.Args[0].End().Offset()
				if end <= uint(len(src)) {
					withUnknown = src[:end] + unknownOption + src[end:]
				}
			}
		}
		return true
	})
	return why, withUnknown
}

func FuzzClassifyCommand(f *testing.F) {
	for _, file := range corpusFiles {
		rows, err := loadCorpus("testdata/commands/" + file)
		if err != nil {
			f.Fatalf("seed corpus: %v", err)
		}
		for _, r := range rows {
			f.Add(r.command)
		}
	}
	shared, _ := sharedCorpusPath()
	if rows, err := loadCorpus(shared); err == nil {
		for _, r := range rows {
			f.Add(r.command)
		}
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := Classify(cmd)
		checkInvariants(t, cmd, v)
		if !v.ReadOnly() {
			return
		}
		writers, ok := oracleFindings(cmd)
		if !ok {
			t.Fatalf("Classify(%q) = %s %q, but the command does not parse", cmd, v.Intent, v.Reasons)
		}
		if len(writers) > 0 {
			t.Fatalf("Classify(%q) = %s %q, but it runs the writer %q", cmd, v.Intent, v.Reasons, writers[0])
		}
		why, withUnknown := oracleSecondGen(cmd)
		if why != "" {
			t.Fatalf("Classify(%q) = %s %q despite %s", cmd, v.Intent, v.Reasons, why)
		}
		if withUnknown != "" {
			if u := Classify(withUnknown); u.ReadOnly() {
				t.Fatalf("Classify(%q) = %s %q despite an unknown option of a subcommand tool", withUnknown, u.Intent, u.Reasons)
			}
		}
	})
}
