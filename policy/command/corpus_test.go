package command

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// corpusFiles are the labelled shell corpora under testdata/commands that
// the corpus benchmark measures (BENCHMARKS.md compares builds on them).
var corpusFiles = []string{"mutating.tsv", "readonly.tsv", "bounded.tsv", "adversarial.tsv"}

// confidentialityCorpus is issue 22's corpus (TestCorpusConfidentiality).
const confidentialityCorpus = "confidentiality.tsv"

// sqlCorpus is the labelled corpus of SQL-client commands, whose SQL the
// real grammars decide (and whose cost is theirs, measured apart).
const sqlCorpus = "sql.tsv"

// allCorpusFiles are every labelled corpus, for properties every command
// must have.
var allCorpusFiles = append(append([]string(nil), corpusFiles...), confidentialityCorpus, sqlCorpus)

// corpusRow is one line of a labelled command corpus.
type corpusRow struct {
	command, expected, note string
	where                   string // file:line, for failure messages
}

// loadCorpus reads a tab-separated corpus: command, expected, note. Blank
// lines, lines starting with '#' and a header line starting with
// "command" are skipped. A command written as go:"..." is a Go string
// literal (for newlines and tabs).
func loadCorpus(path string) ([]corpusRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []corpusRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") || n == 1 && strings.HasPrefix(line, "command\t") {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) < 2 {
			return nil, fmt.Errorf("%s:%d: want command<TAB>expected[<TAB>note], got %q", path, n, line)
		}
		row := corpusRow{command: fields[0], expected: strings.TrimSpace(fields[1]), where: fmt.Sprintf("%s:%d", filepath.Base(path), n)}
		if len(fields) == 3 {
			row.note = fields[2]
		}
		if lit, ok := strings.CutPrefix(row.command, "go:"); ok {
			if row.command, err = strconv.Unquote(lit); err != nil {
				return nil, fmt.Errorf("%s:%d: bad go: literal: %v", path, n, err)
			}
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

func mustLoad(t testing.TB, path string) []corpusRow {
	t.Helper()
	rows, err := loadCorpus(path)
	if err != nil {
		t.Fatalf("load corpus: %v", err)
	}
	return rows
}

// labOptions is the deployment the labelled corpora are written for
// (SPEC R1: a read connects only to destinations vigil knows). Its
// inventory holds the hosts the rows name (web1, db1, cache, ...), its
// Prometheus and Alertmanager run on the loopback, one Kubernetes cluster
// is configured, the operator declared the Ceph monitors, the Argo CD
// server and the cloud APIs, and vigil's own Redis store runs on its own
// host. Public hosts (example.com, 8.8.8.8) are not declared: a row that
// reaches one is a write. Writes must stay writes under these options,
// which are the widest the corpora use (an option only ever widens what
// is read-only).
var labOptions = func() Options {
	var o Options
	for _, d := range []string{"web1", "web2", "web", "db", "db1", "db2", "cache", "host", "gateway",
		"api", "app", "app1", "node1", "mon1", "kafka-1:9092", "10.0.0.1", "10.0.0.5", "10.0.0.9",
		"192.168.1.10", "registry.internal:5000", "git.internal", "prometheus:9090", "alertmanager:9093",
		"x"} {
		o.Destinations = append(o.Destinations, mustDest(d))
	}
	o.Services = map[string][]Destination{
		"kubernetes":      {mustDest("kube-api.internal:6443")},
		"kubernetes/prod": {mustDest("kube-api.internal:6443")},
		"ceph":            {mustDest("mon1:3300"), mustDest("mon1:6789")},
		"argocd":          {mustDest("argocd.internal:443")},
		"aws":             {mustDest("*.amazonaws.com:443")},
		"gcloud":          {mustDest("*.googleapis.com:443")},
		"azure":           {mustDest("management.azure.com:443"), mustDest("login.microsoftonline.com:443")},
		"terraform":       {mustDest("*.amazonaws.com:443")},
	}
	o.Forbidden = []Destination{mustDest("redis-store.internal:6379")}
	o.Aliases = [][]string{{"db1", "10.0.0.5"}}
	return o
}()

func mustDest(s string) Destination {
	d, err := ParseDestination(s)
	if err != nil {
		panic(err)
	}
	return d
}

// checkIntentCorpus applies the safety rule to a labelled corpus: no
// command labelled write may come out read-only, and at least 95% of the
// commands labelled read must, under labOptions.
func checkIntentCorpus(t *testing.T, rows []corpusRow) (writes, reads int) {
	t.Helper()
	var misses []string
	readOK := 0
	for _, r := range rows {
		v := labOptions.Classify(r.command, DialectBash)
		switch {
		case r.expected == "write" || strings.HasPrefix(r.expected, "write"):
			writes++
			if v.ReadOnly() {
				t.Errorf("%s: MUTATING COMMAND CLASSIFIED READ-ONLY: %q -> %s %v (%s)", r.where, r.command, v.Intent, v.Reasons, r.note)
			}
		case strings.HasPrefix(r.expected, "read"):
			reads++
			if v.ReadOnly() {
				readOK++
			} else {
				misses = append(misses, fmt.Sprintf("%s: %q -> %s %v", r.where, r.command, v.Intent, v.Reasons))
			}
		default:
			t.Errorf("%s: unknown expected label %q (want write or read)", r.where, r.expected)
		}
	}
	for _, m := range misses {
		t.Logf("read-only command not allowed: %s", m)
	}
	if reads > 0 {
		rate := float64(readOK) / float64(reads)
		t.Logf("read-only commands allowed: %d/%d (%.1f%%); mutating commands: %d, all blocked unless reported above", readOK, reads, 100*rate, writes)
		if rate < 0.95 {
			t.Errorf("only %.1f%% of read-only commands allowed, want at least 95%%", 100*rate)
		}
	}
	return writes, reads
}

func TestCorpusMutating(t *testing.T) {
	writes, reads := checkIntentCorpus(t, mustLoad(t, "testdata/commands/mutating.tsv"))
	if writes < 170 || reads != 0 {
		t.Errorf("mutating.tsv: %d write rows and %d read rows, want at least 170 writes and no reads", writes, reads)
	}
}

// TestCorpusAdversarial is the second-generation review's corpus (issue
// 10): disguised writes of each class, and the daily reads the first
// classifier refused, each with a note naming its trick.
func TestCorpusAdversarial(t *testing.T) {
	rows := mustLoad(t, "testdata/commands/adversarial.tsv")
	writes, reads := checkIntentCorpus(t, rows)
	if writes < 200 || reads < 100 {
		t.Errorf("adversarial.tsv: %d write rows and %d read rows, want at least 200 and 100", writes, reads)
	}
	for _, r := range rows {
		if strings.TrimSpace(r.note) == "" {
			t.Errorf("%s: %q has no note naming its trick", r.where, r.command)
		}
	}
}

// TestCorpusConfidentiality is issue 22's corpus: network clients fed
// expansions or local data, unknown destinations, vigil's own store, and
// each allowlist (URLs, environment names, shell state, cloud
// operations, connection parameters), the audited reader tables and
// Kubernetes Secrets, with the daily reads that must stay allowed.
func TestCorpusConfidentiality(t *testing.T) {
	rows := mustLoad(t, "testdata/commands/"+confidentialityCorpus)
	writes, reads := checkIntentCorpus(t, rows)
	if writes < 200 || reads < 100 {
		t.Errorf("confidentiality.tsv: %d write rows and %d read rows, want at least 200 and 100", writes, reads)
	}
	for _, r := range rows {
		if strings.TrimSpace(r.note) == "" {
			t.Errorf("%s: %q has no note naming its trick", r.where, r.command)
		}
	}
}

func TestCorpusReadOnly(t *testing.T) {
	writes, reads := checkIntentCorpus(t, mustLoad(t, "testdata/commands/readonly.tsv"))
	if reads < 110 || writes != 0 {
		t.Errorf("readonly.tsv: %d read rows and %d write rows, want at least 110 reads and no writes", reads, writes)
	}
}

// TestCorpusSQL checks the SQL clients' rows: disguised writes through
// psql, mysql and sqlite3 (functions hidden by comments, client commands,
// meta-commands that run a shell) and the daily reads that must stay allowed.
func TestCorpusSQL(t *testing.T) {
	writes, reads := checkIntentCorpus(t, mustLoad(t, "testdata/commands/sql.tsv"))
	if writes < 40 || reads < 20 {
		t.Errorf("sql.tsv: %d write rows and %d read rows, want at least 40 writes and 20 reads", writes, reads)
	}
}

// sharedCorpusEnv names the shared corpus explicitly. .ci/run sets it, so
// CI always checks the corpus; when it is set the file must exist.
const sharedCorpusEnv = "VIGIL_SHARED_CORPUS"

// sharedCorpusPath is the shared corpus named by the environment, or else
// where a sibling checkout of ../shared keeps it.
func sharedCorpusPath() (path string, explicit bool) {
	if p := os.Getenv(sharedCorpusEnv); p != "" {
		return p, true
	}
	return filepath.Join("..", "..", "..", "shared", "corpus", "commands.tsv"), false
}

// TestSharedCorpus checks the corpus kept beside the repository in
// ../shared. A plain clone has no such folder: the test then says that it is
// not checking it, instead of failing a newcomer's `make test`.
func TestSharedCorpus(t *testing.T) {
	path, explicit := sharedCorpusPath()
	rows, err := loadCorpus(path)
	if errors.Is(err, fs.ErrNotExist) {
		abs, _ := filepath.Abs(path)
		if explicit {
			t.Fatalf("%s=%s: no such file (resolved %s)", sharedCorpusEnv, path, abs)
		}
		t.Skipf("NOT CHECKING the shared command corpus: %s does not exist (no ../shared beside this clone); set %s to check it", abs, sharedCorpusEnv)
	}
	if err != nil {
		t.Fatalf("shared corpus: %v", err)
	}
	if len(rows) == 0 {
		t.Fatalf("shared corpus %s has no rows", path)
	}
	writes, reads := checkIntentCorpus(t, rows)
	t.Logf("shared corpus %s: %d write rows, %d read rows", path, writes, reads)
}

func TestCorpusBoundedness(t *testing.T) {
	rows := mustLoad(t, "testdata/commands/bounded.tsv")
	blocked := 0
	for _, r := range rows {
		v := labOptions.Classify(r.command, DialectBash)
		want := BoundCategory(r.expected)
		if r.expected == "bounded" {
			want = BoundOK
		} else {
			blocked++
		}
		rewrite := strings.TrimSpace(r.note)
		if v.Category != want || v.Bounded != (want == BoundOK) {
			t.Errorf("%s: %q: bounded=%v category=%q, want category %q", r.where, r.command, v.Bounded, v.Category, want)
			continue
		}
		if v.SuggestedRewrite != rewrite {
			t.Errorf("%s: %q: rewrite %q, want %q", r.where, r.command, v.SuggestedRewrite, rewrite)
		}
	}
	if len(rows) < 35 || blocked < 20 {
		t.Errorf("bounded.tsv: %d rows (%d blocked), want at least 35 rows", len(rows), blocked)
	}
}
