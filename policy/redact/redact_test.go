package redact

import (
	"fmt"
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	// Fake credentials in the published formats of each issuer.
	const (
		ghp   = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
		ghPAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
		glpat = "glpat-" + "xYz123AbC456dEf789gH"
		xoxb  = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
		xapp  = "xapp-" + "1-A0123456789-1234567890123-abcdef0123456789"
		xoxe  = "xoxe.xoxp-" + "1-Mi0yLTEyMzQ1Njc4OTAx"
		jwt   = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
		aiza  = "AIza" + "SyA-1234567890abcdefghijklmnopqrstu"
	)
	tests := []struct {
		name, in, want string
	}{
		{"aws access key id", "key AKIAIOSFODNN7EXAMPLE used", "key [REDACTED:aws-access-key-id] used"},
		{"aws session key id", "AccessKeyId: ASIAY34FZKBOKMUTVV7A", "AccessKeyId: [REDACTED:aws-access-key-id]"},
		{"aws secret in config", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
			"aws_secret_access_key = [REDACTED:aws-secret-key]"},
		{"aws secret in sts json", `"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",`,
			`"SecretAccessKey": "[REDACTED:aws-secret-key]",`},
		{"aws session token", `"SessionToken": "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ"`,
			`"SessionToken": "[REDACTED:token]"`},
		{"gcp api key", "key=" + aiza, "key=[REDACTED:gcp-api-key]"},
		{"gcp oauth token", "ya29.a0AfH6SMBx7wQ-abcdefghijklmnopqrstuvwxyz", "[REDACTED:gcp-oauth]"},
		{"gcp service account key", `"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n",`,
			`"private_key": "[REDACTED:private-key]\n",`},
		{"azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure-key];EndpointSuffix=core.windows.net"},
		{"azure sas", "https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig=abcDEF123%2Bxyz456%3D&se=2030",
			"https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig=[REDACTED:azure-sas-signature]&se=2030"},
		{"github classic", "token " + ghp + " ok", "token [REDACTED:github-token] ok"},
		{"github oauth", "gho_" + strings.Repeat("a1", 18), "[REDACTED:github-token]"},
		{"github user-to-server", "ghu_" + strings.Repeat("B2", 18), "[REDACTED:github-token]"},
		{"github server-to-server", "ghs_" + strings.Repeat("c3", 18), "[REDACTED:github-token]"},
		{"github refresh", "ghr_" + strings.Repeat("d4", 18), "[REDACTED:github-token]"},
		{"github fine-grained", ghPAT, "[REDACTED:github-token]"},
		{"github in env", "GITHUB_TOKEN=" + ghp, "GITHUB_TOKEN=[REDACTED:github-token]"},
		{"gitlab", "PRIVATE-TOKEN: " + glpat, "PRIVATE-TOKEN: [REDACTED:gitlab-token]"},
		{"slack bot", "SLACK_BOT_TOKEN=" + xoxb, "SLACK_BOT_TOKEN=[REDACTED:slack-token]"},
		{"slack app", "app token " + xapp, "app token [REDACTED:slack-token]"},
		{"slack refresh", xoxe, "[REDACTED:slack-token]"},
		{"slack user", "xoxp-1234567890-0987654321-abcdef", "[REDACTED:slack-token]"},
		{"slack webhook", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
			"https://hooks.slack.com/services/[REDACTED:slack-webhook]"},
		{"openai key", "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345", "OPENAI_API_KEY=[REDACTED:api-key]"},
		{"private key block", "before\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter",
			"before\n[REDACTED:private-key]\nafter"},
		{"pgp private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
			"[REDACTED:private-key]"},
		{"truncated private key", "x\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\nmore", "x\n[REDACTED:private-key]"},
		{"jwt", "cookie: session=" + jwt + "; Path=/", "cookie: session=[REDACTED:jwt]; Path=/"},
		{"password=", "login password=hunter2 user=bob", "login password=[REDACTED:password] user=bob"},
		{"passwd:", "passwd: hunter2", "passwd: [REDACTED:password]"},
		{"pwd=", "pwd=hunter2&user=bob", "pwd=[REDACTED:password]&user=bob"},
		{"secret=", "client_secret=abc123def", "client_secret=[REDACTED:secret]"},
		{"token=", "https://x/cb?state=1&token=abc123&x=2", "https://x/cb?state=1&token=[REDACTED:token]&x=2"},
		{"api_key=", "api_key=0123456789abcdef", "api_key=[REDACTED:api-key]"},
		{"x-api-key header", "X-Api-Key: 0123456789abcdef", "X-Api-Key: [REDACTED:api-key]"},
		{"yaml", "db:\n  user: app\n  password: hunter2\n", "db:\n  user: app\n  password: [REDACTED:password]\n"},
		{"yaml quoted", `  password: "two words"`, `  password: "[REDACTED:password]"`},
		{"k8s secret data", "data:\n  password: aHVudGVyMg==\n", "data:\n  password: [REDACTED:password]\n"},
		{"env", "DB_PASSWORD=hunter2\nDB_USER=app", "DB_PASSWORD=[REDACTED:password]\nDB_USER=app"},
		{"env quoted", "export PGPASSWORD='hunter 2'", "export PGPASSWORD='[REDACTED:password]'"},
		{"json", `{"user":"bob","password":"hunter2"}`, `{"user":"bob","password":"[REDACTED:password]"}`},
		{"json escaped quote", `{"password": "a\"b"}`, `{"password": "[REDACTED:password]"}`},
		{"toml", `token = "abc123"`, `token = "[REDACTED:token]"`},
		{"flag with space", "vault login --token s.abc123 -x", "vault login --token [REDACTED:token] -x"},
		{"flag with equals", "psql --password=hunter2", "psql --password=[REDACTED:password]"},
		{"mysql -p", "mysql -uroot -phunter2 -e 'select 1'", "mysql -uroot -p[REDACTED:password] -e 'select 1'"},
		{"curl -u", "curl -u admin:hunter2 https://x", "curl -u admin:[REDACTED:password] https://x"},
		{"bearer header", "Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED:bearer-token]"},
		{"basic header", "curl -H 'Authorization: Basic dXNlcjpwYXNz' https://x", "curl -H 'Authorization: Basic [REDACTED:basic-auth]' https://x"},
		{"token scheme header", "authorization: token " + ghp, "authorization: token [REDACTED:github-token]"},
		{"bare header value", "Authorization: abc123secret", "Authorization: [REDACTED:authorization]"},
		{"json header", `"Authorization": "Bearer abc123def456"`, `"Authorization": "Bearer [REDACTED:bearer-token]"`},
		{"bearer in a log", "sent Bearer 9f8e7d6c5b4a3210 to upstream", "sent Bearer [REDACTED:bearer-token] to upstream"},
		{"url credentials", "postgres://admin:pa55w0rd@db:5432/app", "postgres://admin:***@db:5432/app"},
		{"url credentials, no user", "redis://:s3cret@cache:6379/0", "redis://:***@cache:6379/0"},
		{"url with @ in password", "amqp://guest:p@ss@mq:5672/", "amqp://guest:***@mq:5672/"},
		{"url in env", "DATABASE_URL=mysql://app:s3cret@db/app", "DATABASE_URL=mysql://app:***@db/app"},
		{"ado connection string", "Server=x;User Id=sa;Password=secret;Database=y", "Server=x;User Id=sa;Password=[REDACTED:password];Database=y"},
		{"several on a line", "user=a password=b token=c", "user=a password=[REDACTED:password] token=[REDACTED:token]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

func TestRedactKeepsOrdinaryText(t *testing.T) {
	keep := []string{
		"",
		"password",
		"Enter password:",
		"password:\n  hunter",
		"Password reset email sent",
		"PasswordAuthentication no",
		"#PermitEmptyPasswords no",
		"passwd:     files systemd",
		"root:x:0:0:root:/root:/bin/bash",
		"PWD=/home/alice\nOLDPWD=/root",
		"max_tokens=4096",
		`{"prompt_tokens": 35, "completion_tokens": 12, "total_tokens": 47}`,
		"token_type: bearer",
		"secretName: tls-cert",
		"Secrets: <none>",
		"kubectl get secret db-creds -o name",
		"password=$DB_PASSWORD",
		"password: ${DB_PASSWORD}",
		"password = <redacted>",
		"password: ********",
		"token: REDACTED",
		"require_password=true",
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
		"container 550e8400-e29b-41d4-a716-446655440000 started",
		"aGVsbG8gd29ybGQsIHRoaXMgaXMgaGFybWxlc3M=",
		"https://example.com:8443/path?q=1",
		"ssh://git@github.com:22/org/repo.git",
		"git@github.com:org/repo.git",
		"alice@example.com",
		"the API uses a bearer credential",
		"Authorization: $TOKEN",
		"curl -H \"Authorization: Bearer $TOKEN\" https://x",
		"journalctl -u nginx -n 200 --no-pager",
		"docker run -u 1000:1000 alpine",
		"ASIA/Tokyo and Asia/Kolkata",
		"tokenizer=bpe",
		"disk-usage-report-2024-01-01-abcdefghijklmn",
		"mysql -u root -p",
		"ghp_short",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
		"Mar 01 12:00:00 web1 nginx[123]: 10.0.0.1 GET /index.html 200",
	}
	for _, in := range keep {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestNewRedactorExtra(t *testing.T) {
	r, err := New(Pattern{Kind: "acme-key", Regexp: `acme_key_([a-f0-9]{16})`})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Redact("k=acme_key_0123456789abcdef ghp_x"), "k=acme_key_[REDACTED:acme-key] ghp_x"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := r.Redact("password=x"); got != "password=[REDACTED:password]" {
		t.Errorf("built-in rules lost: %q", got)
	}
	for _, bad := range []Pattern{{Kind: "x"}, {Regexp: "a"}, {Kind: "x", Regexp: "("}, {Kind: "x", Regexp: `a\nb`}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// benchOutput is 64 KiB of ordinary command output: logs, a process list,
// JSON. secrets adds a few credentials so the slow path is measured too.
func benchOutput(secrets bool) string {
	lines := []string{
		"Mar 01 12:00:00 web1 nginx[1234]: 10.0.0.1 - - \"GET /api/v1/items?page=2 HTTP/1.1\" 200 512 \"-\" \"curl/8.5.0\"",
		"root      1234  0.0  0.1 123456  7890 ?        Ss   Mar01   0:00 /usr/sbin/sshd -D",
		`{"level":"info","ts":"2024-03-01T12:00:00Z","msg":"request done","status":200,"duration_ms":12,"prompt_tokens":35}`,
		"Filesystem      Size  Used Avail Use% Mounted on\n/dev/sda1        40G   12G   26G  32% /",
		"CONTAINER ID   IMAGE          COMMAND                  CREATED       STATUS       NAMES",
		"3f2a1b4c5d6e   nginx:1.25     \"/docker-entrypoint.…\"   2 hours ago   Up 2 hours   web",
	}
	if secrets {
		lines = append(lines,
			"DB_PASSWORD=hunter2",
			"Authorization: Bearer abc123def456ghi789",
			"postgres://app:s3cret@db:5432/app",
		)
	}
	var b strings.Builder
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "%s\n", lines[i%len(lines)])
	}
	return b.String()[:64<<10]
}

// benchJSON is about 64 KiB of a Kubernetes pod list as JSON, the shape
// `kubectl get pods -o json` prints: no secret, but keys with trigger
// words (serviceAccountToken, secretName), so the structural pass reads it.
func benchJSON(secrets bool) string {
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"api-%d","namespace":"prod","labels":{"app":"api"}},` +
		`"spec":{"serviceAccountName":"api","automountServiceAccountToken":false,"containers":[{"name":"api",` +
		`"image":"registry.example.com/api:1.4.2","env":[{"name":"LOG_LEVEL","value":"info"},{"name":"DB_HOST","value":"db"}%s],` +
		`"volumeMounts":[{"name":"certs","mountPath":"/etc/certs","readOnly":true}]}],` +
		`"volumes":[{"name":"certs","secret":{"secretName":"api-tls","defaultMode":420}}]},` +
		`"status":{"phase":"Running","podIP":"10.0.3.%d","startTime":"2026-03-01T12:00:00Z"}}`
	extra := ""
	if secrets {
		extra = `,{"name":"DB_PASSWORD","value":"hunter2"}`
	}
	var b strings.Builder
	b.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	for i := 0; b.Len() < 64<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, pod, i, extra, i%250)
	}
	b.WriteString(`]}`)
	return b.String()
}

func BenchmarkRedact(b *testing.B) {
	for _, bc := range []struct {
		name string
		in   string
	}{
		{"clean-64KiB", benchOutput(false)}, {"secrets-64KiB", benchOutput(true)},
		{"json-clean-64KiB", benchJSON(false)}, {"json-secrets-64KiB", benchJSON(true)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				_ = String(bc.in)
			}
		})
	}
}
