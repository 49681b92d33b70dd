package audit

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A record of a call made with a person's identity names both identities,
// they are part of the chain (an edit breaks it), they survive the audit
// file, and records without them keep the hash they always had.
func TestRecordNamesBothIdentities(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	plain := Record{Time: at, Actor: "U0ALICE", Action: Executed, Tool: "kube", Target: "k8s_deployment:prod:shop/checkout"}
	first := Chain(nil, plain)
	acted := plain
	acted.ActedAs, acted.Identity = "k8s user bob, groups sre", "U0BOB"
	second := Chain(&first, acted)
	if second.ComputeHash() == Chain(&first, plain).ComputeHash() {
		t.Fatal("the identities are not part of the hash")
	}
	if err := VerifyChain([]Record{first, second}); err != nil {
		t.Fatal(err)
	}
	edited := second
	edited.ActedAs = "k8s user vigil, no groups"
	if err := VerifyChain([]Record{first, edited}); !errors.Is(err, ErrChain) {
		t.Fatalf("an edited acted_as verified: %v", err)
	}

	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Append(plain); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Append(acted); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[1].ActedAs != "k8s user bob, groups sre" || recs[1].Identity != "U0BOB" || recs[0].ActedAs != "" {
		t.Fatalf("read back %+v", recs)
	}
	if err := VerifyChain(recs); err != nil {
		t.Fatal(err)
	}
}
