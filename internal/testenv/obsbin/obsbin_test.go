package obsbin

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

func getJSON(t *testing.T, url string, into any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

func TestPrometheusServesItsAPI(t *testing.T) {
	p := Prometheus(t, "global:\n  scrape_interval: 1s\n")
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []any `json:"result"`
		} `json:"data"`
	}
	getJSON(t, p.URL+"/api/v1/query?query=vector(42)", &out)
	if out.Status != "success" || len(out.Data.Result) != 1 {
		t.Fatalf("query vector(42) = %+v, want one sample", out)
	}
}

func TestAlertmanagerServesItsAPI(t *testing.T) {
	a := Alertmanager(t, "route:\n  receiver: none\nreceivers:\n  - name: none\n")
	var out struct {
		Cluster struct {
			Status string `json:"status"`
		} `json:"cluster"`
		Config struct {
			Original string `json:"original"`
		} `json:"config"`
	}
	getJSON(t, a.URL+"/api/v2/status", &out)
	if out.Cluster.Status != "disabled" || !strings.Contains(out.Config.Original, "none") {
		t.Fatalf("status = %+v, want a lone Alertmanager running the test's config", out)
	}
}
