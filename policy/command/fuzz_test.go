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
	"kill": true, "pkill": true, "killall": true, "useradd": true, "userdel": true, "passwd": true,
	"install": true, "rsync": true, "scp": true, "wipefs": true, "fdisk": true, "parted": true,
	"swapoff": true, "modprobe": true, "insmod": true, "rmmod": true, "umount": true,
	"chattr": true, "setfacl": true, "fallocate": true, "tee": true, "eval": true, "exec": true,
	"sudo": true, "doas": true, "source": true, ".": true, "alias": true, "trap": true,
}

// oracleFindings walks src independently of the classifier and returns
// the literal command words of simple commands that are known writers, and
// whether any command or process substitution appears. ok is false if src
// does not parse.
func oracleFindings(src string) (writers []string, subst bool, ok bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, false, false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CallExpr:
			if len(x.Args) > 0 && oracleWriters[x.Args[0].Lit()] {
				writers = append(writers, x.Args[0].Lit())
			}
			if len(x.Args) > 0 && expands(x.Args[0]) {
				writers = append(writers, "(dynamic command word)")
			}
		case *syntax.CmdSubst, *syntax.ProcSubst:
			subst = true
		}
		return true
	})
	return writers, subst, true
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
		writers, subst, ok := oracleFindings(cmd)
		if !ok {
			t.Fatalf("Classify(%q) = %s %q, but the command does not parse", cmd, v.Intent, v.Reasons)
		}
		if len(writers) > 0 {
			t.Fatalf("Classify(%q) = %s %q, but it runs the writer %q", cmd, v.Intent, v.Reasons, writers[0])
		}
		if subst {
			t.Fatalf("Classify(%q) = %s %q despite a command or process substitution", cmd, v.Intent, v.Reasons)
		}
	})
}
