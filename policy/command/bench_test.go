package command

import (
	"testing"

	"github.com/vigilops/vigil/policy/command/sqlcheck"
)

// benchCommands is the whole labelled corpus, plus the shared one when it
// is present.
func benchCommands(b *testing.B, files []string) []string {
	b.Helper()
	var cmds []string
	for _, file := range files {
		for _, r := range mustLoad(b, "testdata/commands/"+file) {
			cmds = append(cmds, r.command)
		}
	}
	shared, _ := sharedCorpusPath()
	if rows, err := loadCorpus(shared); err == nil {
		for _, r := range rows {
			cmds = append(cmds, r.command)
		}
	}
	return cmds
}

// BenchmarkClassifyCorpus classifies the shell corpus one command per
// operation, so ns/op and allocs/op are per command, averaged over the
// corpus. SQL clients are measured apart (BenchmarkClassifySQLClients):
// their SQL goes through real grammars, which only they pay for.
func BenchmarkClassifyCorpus(b *testing.B) {
	benchCorpus(b, corpusFiles)
}

// BenchmarkClassifySQLClients is the SQL-client corpus (psql, mysql,
// sqlite3 with the SQL they carry), steady state.
func BenchmarkClassifySQLClients(b *testing.B) {
	benchCorpus(b, []string{sqlCorpus})
}

// BenchmarkClassifyFirstCorpus is the corpus as it was before the
// adversarial rows (the first-generation classifier's), for comparing
// builds on the same commands.
func BenchmarkClassifyFirstCorpus(b *testing.B) {
	benchCorpus(b, corpusFiles[:3])
}

func benchCorpus(b *testing.B, files []string) {
	cmds := benchCommands(b, files)
	// One pass first: the first PostgreSQL check in a process compiles
	// libpg_query's WebAssembly module (sqlcheck's BenchmarkPostgresFirstCall
	// reports that cost); this benchmark measures the steady state. Warm
	// compiles it even when no corpus command reaches PostgreSQL.
	sqlcheck.Warm()
	for _, cmd := range cmds {
		_ = Classify(cmd)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_ = Classify(cmds[i%len(cmds)])
	}
	b.ReportMetric(float64(len(cmds)), "commands")
}

// BenchmarkClassifyTypical is one everyday read: a pipeline of readers.
func BenchmarkClassifyTypical(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Classify("ps aux | grep nginx | head -n 5")
	}
}
