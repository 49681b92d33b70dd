package command

import "testing"

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

// BenchmarkClassifyCorpus classifies the corpus one command per operation,
// so ns/op and allocs/op are per command, averaged over the corpus.
func BenchmarkClassifyCorpus(b *testing.B) {
	benchCorpus(b, corpusFiles)
}

// BenchmarkClassifyFirstCorpus is the corpus as it was before the
// adversarial rows (the first-generation classifier's), for comparing
// builds on the same commands.
func BenchmarkClassifyFirstCorpus(b *testing.B) {
	benchCorpus(b, corpusFiles[:3])
}

func benchCorpus(b *testing.B, files []string) {
	cmds := benchCommands(b, files)
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
