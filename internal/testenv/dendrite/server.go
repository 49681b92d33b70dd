package dendrite

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/template"
	"time"
)

// ServerName is the homeserver's name: user IDs look like @alice:localhost.
const ServerName = "localhost"

// Options tune a test homeserver.
type Options struct {
	// RateLimit turns Dendrite's client rate limiting on with a tiny
	// threshold, so tests can see M_LIMIT_EXCEEDED. Off by default.
	RateLimit bool
}

// Server is a running Dendrite on loopback.
type Server struct {
	url    string
	secret string
	dir    string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process exits
	client *http.Client

	mu       sync.Mutex
	waitErr  error
	logPath  string
	stopOnce sync.Once
}

// Start builds the binaries if needed (a build failure fails the test, it
// is never skipped), starts a fresh homeserver in a temp dir on a free
// loopback port, waits until it answers and stops it in t.Cleanup.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith is Start with options.
func StartWith(t testing.TB, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin, err := EnsureBinaries(ctx, t.Logf)
	if err != nil {
		t.Fatalf("dendrite: cannot build the homeserver binaries (needs the Go module proxy on first run; "+
			"prebuild with `make dendrite`): %v", err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between probe and bind
		s, err := start(t, bin, opts)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("dendrite: start: %v", lastErr)
	return nil
}

func start(t testing.TB, bin string, opts Options) (*Server, error) {
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	secret := randomHex(16)

	keyPath := filepath.Join(dir, "matrix_key.pem")
	if out, err := exec.Command(filepath.Join(bin, "generate-keys"), "-private-key", keyPath).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("generate-keys: %w: %s", err, out)
	}
	cfgPath := filepath.Join(dir, "dendrite.yaml")
	if err := writeConfig(cfgPath, configData{Dir: dir, Key: keyPath, Secret: secret, RateLimit: opts.RateLimit}); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "dendrite.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(filepath.Join(bin, "dendrite"), "-config", cfgPath, "-http-bind-address", addr)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start dendrite: %w", err)
	}
	s := &Server{
		url:     "http://" + addr,
		secret:  secret,
		dir:     dir,
		cmd:     cmd,
		done:    make(chan struct{}),
		client:  &http.Client{Timeout: 30 * time.Second},
		logPath: logPath,
	}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		s.mu.Lock()
		s.waitErr = err
		s.mu.Unlock()
		close(s.done)
	}()
	if err := s.waitReady(60 * time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w\n--- dendrite log ---\n%s", err, s.logTail(3000))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- dendrite log (tail) ---\n%s", s.logTail(4000))
		}
		s.stop()
	})
	return s, nil
}

// URL is the client-server API base URL, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return s.url }

// Dir is the server's temp directory (config, databases, log).
func (s *Server) Dir() string { return s.dir }

func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			s.mu.Lock()
			defer s.mu.Unlock()
			return fmt.Errorf("dendrite exited during start-up: %v", s.waitErr)
		default:
		}
		resp, err := s.client.Get(s.url + "/_matrix/client/versions")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("dendrite did not answer /_matrix/client/versions within %s", limit)
}

func (s *Server) stop() {
	s.stopOnce.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

func (s *Server) logTail(n int) string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return tail(string(b), n)
}

// Register creates an account through the shared-secret registration API
// and returns its user ID and an access token.
func (s *Server) Register(t testing.TB, localpart, password string, admin bool) (userID, accessToken string) {
	t.Helper()
	userID, accessToken, err := s.register(localpart, password, admin)
	if err != nil {
		t.Fatalf("dendrite: register %s: %v", localpart, err)
	}
	return userID, accessToken
}

func (s *Server) register(localpart, password string, admin bool) (string, string, error) {
	endpoint := s.url + "/_synapse/admin/v1/register"
	var nonce struct {
		Nonce string `json:"nonce"`
	}
	if err := s.doJSON(http.MethodGet, endpoint, nil, &nonce); err != nil {
		return "", "", fmt.Errorf("nonce: %w", err)
	}
	role := "notadmin"
	if admin {
		role = "admin"
	}
	mac := hmac.New(sha1.New, []byte(s.secret))
	mac.Write([]byte(nonce.Nonce + "\x00" + localpart + "\x00" + password + "\x00" + role))
	req := map[string]any{
		"nonce":    nonce.Nonce,
		"username": localpart,
		"password": password,
		"admin":    admin,
		"mac":      hex.EncodeToString(mac.Sum(nil)),
	}
	var resp struct {
		UserID      string `json:"user_id"`
		AccessToken string `json:"access_token"`
	}
	if err := s.doJSON(http.MethodPost, endpoint, req, &resp); err != nil {
		return "", "", err
	}
	if resp.UserID == "" || resp.AccessToken == "" {
		return "", "", fmt.Errorf("incomplete registration response %+v", resp)
	}
	return resp.UserID, resp.AccessToken, nil
}

func (s *Server) doJSON(method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, url, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type configData struct {
	Dir, Key, Secret string
	RateLimit        bool
}

func writeConfig(path string, d configData) error {
	var buf bytes.Buffer
	if err := configTemplate.Execute(&buf, d); err != nil {
		return fmt.Errorf("render dendrite config: %w", err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

// configTemplate is a minimal single-process Dendrite: SQLite files in the
// temp dir, in-memory JetStream, no federation, no outbound lookups.
var configTemplate = template.Must(template.New("dendrite.yaml").Parse(`version: 2
global:
  server_name: ` + ServerName + `
  private_key: {{.Dir}}/matrix_key.pem
  key_validity_period: 168h0m0s
  cache:
    max_size_estimated: 64mb
    max_age: 1h
  trusted_third_party_id_servers: []
  disable_federation: true
  presence:
    enable_inbound: false
    enable_outbound: false
  report_stats:
    enabled: false
  server_notices:
    enabled: false
  jetstream:
    addresses: []
    in_memory: true
    storage_path: {{.Dir}}
    topic_prefix: Dendrite
  metrics:
    enabled: false
  dns_cache:
    enabled: false
app_service_api:
  config_files: []
client_api:
  registration_disabled: true
  guests_disabled: true
  registration_shared_secret: "{{.Secret}}"
  enable_registration_captcha: false
  rate_limiting:
{{- if .RateLimit}}
    enabled: true
    threshold: 3
    cooloff_ms: 300
{{- else}}
    enabled: false
    threshold: 20
    cooloff_ms: 500
{{- end}}
federation_api:
  database:
    connection_string: file:{{.Dir}}/federationapi.db
  send_max_retries: 1
  disable_tls_validation: true
  key_perspectives: []
key_server:
  database:
    connection_string: file:{{.Dir}}/keyserver.db
media_api:
  database:
    connection_string: file:{{.Dir}}/mediaapi.db
  base_path: {{.Dir}}/media
  max_file_size_bytes: 10485760
  dynamic_thumbnails: false
  max_thumbnail_generators: 1
mscs:
  database:
    connection_string: file:{{.Dir}}/mscs.db
  mscs: []
relay_api:
  database:
    connection_string: file:{{.Dir}}/relayapi.db
room_server:
  database:
    connection_string: file:{{.Dir}}/roomserver.db
sync_api:
  database:
    connection_string: file:{{.Dir}}/syncapi.db
  search:
    enabled: false
    index_path: {{.Dir}}/searchindex
    language: en
user_api:
  bcrypt_cost: 4
  account_database:
    connection_string: file:{{.Dir}}/userapi.db
tracing:
  enabled: false
logging:
  - type: std
    level: warn
`))
