package dendrite_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/vigilops/vigil/internal/testenv/dendrite"
)

func TestStartAndRegister(t *testing.T) {
	srv := dendrite.Start(t)
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q is not loopback", srv.URL())
	}
	userID, token := srv.Register(t, "alice", "correct-horse", false)
	if userID != "@alice:"+dendrite.ServerName {
		t.Fatalf("user ID = %q", userID)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL()+"/_matrix/client/v3/account/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var who struct {
		UserID string `json:"user_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&who); err != nil {
		t.Fatal(err)
	}
	if who.UserID != userID {
		t.Fatalf("whoami = %q, want %q", who.UserID, userID)
	}
	if admin, _ := srv.Register(t, "root", "root-password", true); admin != "@root:"+dendrite.ServerName {
		t.Fatalf("admin user ID = %q", admin)
	}
}
