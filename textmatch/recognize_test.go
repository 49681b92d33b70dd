package textmatch

import (
	"slices"
	"strings"
	"testing"
)

// corpusInventory is a homelab plus a Kubernetes cluster, with the names
// people shorten, misspell and say without @.
var corpusInventory = []Candidate{
	{ID: "delly", Names: []string{"delly"}},
	{ID: "pve2", Names: []string{"pve2"}},
	{ID: "media-server", Names: []string{"media-server", "mediabox"}},
	{ID: "jellyfin", Names: []string{"jellyfin"}},
	{ID: "homepage-docker", Names: []string{"homepage-docker"}},
	{ID: "checkout-api", Names: []string{"checkout-api"}},
	{ID: "checkout-db", Names: []string{"checkout-db"}},
	{ID: "cart-api", Names: []string{"cart-api"}},
	{ID: "payments", Names: []string{"payments"}},
	{ID: "payments-pod", Names: []string{"payments-7d9f8b6c5d-x2x9z"}},
	{ID: "web1", Names: []string{"web1"}},
	{ID: "web2", Names: []string{"web2"}},
	{ID: "node-01", Names: []string{"node-01"}},
	{ID: "grafana", Names: []string{"grafana"}},
	{ID: "postgres-main", Names: []string{"postgres-main", "pg-main"}},
	{ID: "redis-cache", Names: []string{"redis-cache"}},
	{ID: "backup", Names: []string{"backup"}},
	{ID: "localhost", Names: []string{"localhost"}},
}

// The corpus: phrasings that name resources without @ (true matches,
// ambiguous ones listed for the model) and phrasings that must name
// nothing, or not a given resource (false matches).
var corpus = []struct {
	text string
	// want are the resources recognised for sure.
	want []string
	// ambiguous are the sets of resources one stretch names equally well.
	ambiguous [][]string
}{
	// Exact names, any case, any punctuation around them.
	{text: "the delly node is at 100% cpu", want: []string{"delly"}},
	{text: "is jellyfin down?", want: []string{"jellyfin"}},
	{text: "checkout-api pods crashlooping", want: []string{"checkout-api"}},
	{text: "CHECKOUT-API is slow", want: []string{"checkout-api"}},
	{text: "how much disk does media-server have", want: []string{"media-server"}},
	{text: "payments-7d9f8b6c5d-x2x9z is in CrashLoopBackOff", want: []string{"payments-pod"}},
	{text: "web1 is not responding", want: []string{"web1"}},
	{text: "compare web1 and web2", want: []string{"web1", "web2"}},
	{text: "node-01 has disk pressure", want: []string{"node-01"}},
	{text: "grafana dashboards are blank", want: []string{"grafana"}},
	{text: "pve2 is rebooting", want: []string{"pve2"}},
	{text: "delly's memory is full", want: []string{"delly"}},
	{text: "(jellyfin) logs please", want: []string{"jellyfin"}},
	{text: "look at homepage-docker, jellyfin and grafana", want: []string{"homepage-docker", "jellyfin", "grafana"}},
	{text: "is localhost ok", want: []string{"localhost"}},
	{text: "why did payments fail", want: []string{"payments"}},
	{text: "grafana's graph shows cpu at 90%", want: []string{"grafana"}},
	{text: "checkout-api and checkout-db both slow", want: []string{"checkout-api", "checkout-db"}},
	{text: "the redis-cache pod", want: []string{"redis-cache"}},
	{text: "Delly is unreachable", want: []string{"delly"}},
	{text: "payments pod keeps restarting", want: []string{"payments"}},
	// Aliases.
	{text: "mediabox is full", want: []string{"media-server"}},
	{text: "pg-main replication lag", want: []string{"postgres-main"}},
	// Names written as words.
	{text: "jelly fin logs", want: []string{"jellyfin"}},
	{text: "restart checkout api", want: []string{"checkout-api"}},
	{text: "the checkout db is slow", want: []string{"checkout-db"}},
	{text: "media server is full", want: []string{"media-server"}},
	{text: "redis cache evictions", want: []string{"redis-cache"}},
	{text: "cart api errors", want: []string{"cart-api"}},
	// Parts and prefixes of hyphenated and long names.
	{text: "homepage is broken", want: []string{"homepage-docker"}},
	{text: "check the jelly container", want: []string{"jellyfin"}},
	{text: "postgres is slow", want: []string{"postgres-main"}},
	{text: "redis keeps evicting keys", want: []string{"redis-cache"}},
	{text: "web1s are all slow", want: []string{"web1"}},
	// Typos.
	{text: "grafanna is down", want: []string{"grafana"}},
	{text: "chekout-api latency", want: []string{"checkout-api"}},
	{text: "jellyfinn transcoding", want: []string{"jellyfin"}},
	{text: "homepage-dockr returns 502", want: []string{"homepage-docker"}},
	// A name that is an everyday word counts next to a word for a machine.
	{text: "the backup host is out of space", want: []string{"backup"}},
	// Ambiguous: listed for the model, resolved for neither.
	{text: "why is checkout slow", ambiguous: [][]string{{"checkout-api", "checkout-db"}}},
	{text: "checkouts are failing", ambiguous: [][]string{{"checkout-api", "checkout-db"}}},
	// @mentions are the exact resolver's; the rest of the text still counts.
	{text: "@delly and jellyfin", want: []string{"jellyfin"}},
	// Nothing named.
	{text: "the backup failed last night"},
	{text: "restart the web server"},
	{text: "node is down"},
	{text: "node-02 is down"},
	{text: "web3 is slow"},
	{text: "what is the load on the cluster"},
	{text: "check disk usage everywhere"},
	{text: "the api is slow"},
	{text: "hello"},
	{text: "the docker daemon is stuck"},
	{text: "main database is slow"},
	{text: "deli counter"},
	{text: "fin"},
	{text: "pay me later"},
	{text: "carts are empty"},
	{text: "ping pve"},
	{text: "everything is slow since the deploy"},
	{text: ""},
}

func TestRecognizeCorpus(t *testing.T) {
	if len(corpus) < 50 {
		t.Fatalf("the corpus has %d phrasings, want at least 50", len(corpus))
	}
	r := NewRecognizer(corpusInventory)
	for _, tc := range corpus {
		t.Run(tc.text, func(t *testing.T) {
			var sure []string
			var amb [][]string
			for _, m := range r.Recognize(tc.text, DefaultThreshold) {
				if m.Confidence < DefaultThreshold || m.Confidence > 1 {
					t.Errorf("match %+v has confidence out of range", m)
				}
				if !strings.Contains(tc.text, m.Text) {
					t.Errorf("match text %q is not in the text", m.Text)
				}
				if m.Ambiguous {
					amb = append(amb, m.IDs)
					continue
				}
				sure = append(sure, m.IDs[0])
			}
			want := slices.Clone(tc.want)
			slices.Sort(want)
			slices.Sort(sure)
			if !slices.Equal(sure, want) {
				t.Errorf("recognised %v, want %v", sure, want)
			}
			if len(amb) != len(tc.ambiguous) {
				t.Fatalf("ambiguous %v, want %v", amb, tc.ambiguous)
			}
			for i := range amb {
				if !slices.Equal(amb[i], tc.ambiguous[i]) {
					t.Errorf("ambiguous %v, want %v", amb[i], tc.ambiguous[i])
				}
			}
		})
	}
}

// A higher threshold drops the weaker kinds of match.
func TestRecognizeThreshold(t *testing.T) {
	r := NewRecognizer(corpusInventory)
	if got := r.Recognize("check the jelly container", 0.9); len(got) != 0 {
		t.Fatalf("a prefix match passed a 0.9 threshold: %+v", got)
	}
	got := r.Recognize("check jellyfin", 0.9)
	if len(got) != 1 || got[0].Confidence != 1 || got[0].Names[0] != "jellyfin" || got[0].Text != "jellyfin" {
		t.Fatalf("exact match: %+v", got)
	}
}

func FuzzRecognize(f *testing.F) {
	for _, tc := range corpus {
		f.Add(tc.text)
	}
	r := NewRecognizer(corpusInventory)
	f.Fuzz(func(t *testing.T, text string) {
		for _, m := range r.Recognize(text, DefaultThreshold) {
			if m.Start < 0 || m.Start+len(m.Text) > len(text) || text[m.Start:m.Start+len(m.Text)] != m.Text {
				t.Fatalf("match %+v does not point into the text", m)
			}
			if len(m.IDs) == 0 || len(m.IDs) != len(m.Names) || m.Ambiguous != (len(m.IDs) > 1) {
				t.Fatalf("inconsistent match %+v", m)
			}
		}
	})
}
