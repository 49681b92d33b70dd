package builtin

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/policy/command"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// pgURL is the PostgreSQL these tests use: the one on 127.0.0.1:5432 that
// the development machine runs (trust authentication, database test).
const pgHost, pgPort, pgDB = "127.0.0.1", 5432, "test"

// requirePostgres fails, saying how to get one, without that server.
func requirePostgres(t *testing.T) {
	t.Helper()
	out, err := exec.Command("psql", "-h", pgHost, "-p", fmt.Sprint(pgPort), "-d", pgDB, "-Atc", "select 1").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("these tests need PostgreSQL on %s:%d with a database %q this user may reach (trust authentication) and psql "+
			"(apt-get install postgresql postgresql-client; createdb test): %v %s", pgHost, pgPort, pgDB, err, out)
	}
}

// pgTable is a table name no other test run uses, dropped when the test
// ends.
func pgTable(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("vigil_ro_probe_%d_%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		_ = exec.Command("psql", "-h", pgHost, "-d", pgDB, "-c", "drop table if exists "+name).Run()
	})
	return name
}

func pgTableExists(t *testing.T, name string) bool {
	t.Helper()
	out, err := exec.Command("psql", "-h", pgHost, "-d", pgDB, "-Atc", "select to_regclass('"+name+"') is not null").CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v %s", err, out)
	}
	return strings.TrimSpace(string(out)) == "t"
}

// TestReadEnvPostgresIsReadOnly: a psql write that reaches the read path
// (the classifier's verdict set aside) is refused by PostgreSQL itself,
// confined or not; the same command as an approved change runs.
func TestReadEnvPostgresIsReadOnly(t *testing.T) {
	requirePostgres(t)
	inv := inventory.Default()
	router := transport.NewRouter(inv, transport.RouterOptions{})
	res, _ := inv.Lookup("localhost")
	table := pgTable(t)
	create := fmt.Sprintf("psql -X -h %s -p %d -d %s -c 'create table %s (x int)'", pgHost, pgPort, pgDB, table)
	reads := map[string]policy.Execution{
		"confined read":   {Confine: policy.ConfineRequired, Network: true, Ports: []int{pgPort}},
		"unconfined read": {Confine: policy.ConfineNone, Why: "policy.read_sandbox is off"},
	}
	for name, e := range reads {
		t.Run(name, func(t *testing.T) {
			e.Shell = command.DialectBash
			out, err := router.Run(t.Context(), res, transport.RunSpec{Command: create, Execution: e}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if out.ExitCode == 0 || !strings.Contains(out.Stderr, "cannot execute CREATE TABLE in a read-only transaction") {
				t.Errorf("exit %d, stdout %q, stderr %q; want PostgreSQL's read-only refusal", out.ExitCode, out.Stdout, out.Stderr)
			}
			if pgTableExists(t, table) {
				t.Fatalf("the read created %s", table)
			}
			sel, err := router.Run(t.Context(), res, transport.RunSpec{Command: "psql -X -h 127.0.0.1 -d test -Atc 'select 40 + 2'", Execution: e}, nil)
			if err != nil || sel.ExitCode != 0 || sel.Stdout != "42\n" {
				t.Errorf("a real read: %+v, %v", sel, err)
			}
		})
	}
	out, err := router.Run(t.Context(), res, transport.RunSpec{Command: create, Execution: policy.Execution{
		Confine: policy.ConfineNone, Why: "a change runs unconfined", Write: true, Shell: command.DialectBash,
	}}, nil)
	if err != nil || out.ExitCode != 0 || !pgTableExists(t, table) {
		t.Errorf("the approved change did not create %s: %+v, %v", table, out, err)
	}
}

// TestSSHDReadEnv: reads over SSH, inside bwrap, get the read environment
// too; changes do not.
func TestSSHDReadEnv(t *testing.T) {
	requireBwrap(t)
	requirePostgres(t)
	f := startSSHD(t)
	inv := f.inventory(t, "", "")
	router := transport.NewRouter(inv, transport.RouterOptions{})
	far := lookup(t, inv, "far")
	table := pgTable(t)
	create := fmt.Sprintf("printf '%%s\\n' \"$PGOPTIONS\"; psql -X -h %s -p %d -d %s -c 'create table %s (x int)'", pgHost, pgPort, pgDB, table)
	read := policy.Execution{Confine: policy.ConfineRequired, Network: true, Ports: []int{pgPort}}
	out, err := router.Run(t.Context(), far, transport.RunSpec{Command: create, Execution: read}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out.Sandbox.Mechanism != tools.SandboxBwrap || out.Stdout != "-c default_transaction_read_only=on\n" ||
		!strings.Contains(out.Stderr, "read-only transaction") || pgTableExists(t, table) {
		t.Errorf("read over SSH: sandbox %v, stdout %q, stderr %q; want bwrap, PGOPTIONS set and PostgreSQL's refusal", out.Sandbox, out.Stdout, out.Stderr)
	}
	out, err = router.Run(t.Context(), far, transport.RunSpec{Command: create, Execution: policy.Execution{Confine: policy.ConfineNone, Write: true}}, nil)
	if err != nil || out.ExitCode != 0 || out.Stdout != "\nCREATE TABLE\n" || !pgTableExists(t, table) {
		t.Errorf("change over SSH: %+v, %v; want PGOPTIONS unset and the table created", out, err)
	}
}
