package redact

import (
	"strings"
	"testing"
)

// secretCorpus is every form of secret redaction must catch, as tools print
// them: env files and exports, YAML, JSON, INI/TOML, XML, command-line
// flags, client-specific flags, URLs, directives and prose. secret is the
// part that must not survive.
var secretCorpus = []struct{ name, in, secret string }{
	// env and shell
	{"env DB_PASS", "DB_PASS=Tr0ub4dor", "Tr0ub4dor"},
	{"env REDIS_AUTH", "REDIS_AUTH=foobared-7x", "foobared-7x"},
	{"env PGPASSWORD", "PGPASSWORD=pg-s3cret", "pg-s3cret"},
	{"env PGPASSWORD inline", "PGPASSWORD=pg-s3cret psql -h db -U app", "pg-s3cret"},
	{"export quoted", "export MYSQL_ROOT_PASSWORD=\"r00t pw\"", "r00t pw"},
	{"env MYSQL_PWD", "MYSQL_PWD=m7sqlpw", "m7sqlpw"},
	{"env API token", "CLOUDFLARE_API_TOKEN=cf_9a8b7c6d5e4f", "cf_9a8b7c6d5e4f"},
	{"env secret key", "DJANGO_SECRET_KEY='dj-2f9#kq!x'", "dj-2f9#kq!x"},
	{"env auth token", "NPM_AUTH_TOKEN=n9m8x7", "n9m8x7"},
	{"env basic auth", "BASIC_AUTH=admin:hunter22", "admin:hunter22"},
	{"env credentials", "GOOGLE_CREDENTIALS=eyJhY2NvdW50Ijoi", "eyJhY2NvdW50Ijoi"},
	{"env private key", "SSH_PRIVATE_KEY=b3BlbnNzaC1rZXk", "b3BlbnNzaC1rZXk"},
	{"env apikey run together", "SENDGRIDAPIKEY=SG.abc.def", "SG.abc.def"},
	{"env password run together", "ADMINPASSWORD=adm1n!", "adm1n!"},
	{"env rootpass", "ROOTPASS=r00tr00t", "r00tr00t"},
	{"env secret value form", "JWT_SECRET_B64=c2VjcmV0c2VjcmV0", "c2VjcmV0c2VjcmV0"},
	{"env docker password", "DOCKER_PASSWORD=dckr_pat_x1", "dckr_pat_x1"},
	{"powershell", `$env:DB_PASSWORD = "ps-s3cret"`, "ps-s3cret"},
	// YAML
	{"yaml pass", "  pass: yaml-s3cret", "yaml-s3cret"},
	{"yaml password quoted", `  password: 'two words here'`, "two words here"},
	{"yaml client secret", "client_secret: cs-1a2b3c4d", "cs-1a2b3c4d"},
	{"yaml auth", "auth: s3cr3t-auth", "s3cr3t-auth"},
	{"yaml redis requirepass key", "requirepass: redispw1", "redispw1"},
	{"yaml spring", "spring.datasource.password=spr1ng", "spr1ng"},
	{"yaml token", "token: tkn-0a1b2c", "tkn-0a1b2c"},
	{"yaml secret_key_base (weak key, credential value)", "secret_key_base: 8f3a9c2e7b1d4f6a0c5e8b2d7f1a3c6e", "8f3a9c2e7b1d4f6a0c5e8b2d7f1a3c6e"},
	{"yaml password hash", "password_hash: $2y$10$abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"},
	// JSON
	{"json pass", `{"pass": "json-s3cret"}`, "json-s3cret"},
	{"json db_password", `{"db_password":"dbpw-9"}`, "dbpw-9"},
	{"json apiKey camel", `{"apiKey": "ak-12345"}`, "ak-12345"},
	{"json accessToken", `{"accessToken":"at.998877"}`, "at.998877"},
	{"json refresh_token", `{"refresh_token": "rt-abcdef"}`, "rt-abcdef"},
	{"json credentials", `{"credentials": "c-0000xyz"}`, "c-0000xyz"},
	{"json escaped in string", `{"env": "DB_PASS=inner-s3cret"}`, "inner-s3cret"},
	{"json auth", `{"auth": "dXNlcjpwYXNz"}`, "dXNlcjpwYXNz"},
	// INI / TOML / conf
	{"ini password", "password = ini-s3cret", "ini-s3cret"},
	{"ini pass", "pass=ini-pass-2", "ini-pass-2"},
	{"toml token", `auth_token = "toml-t0k"`, "toml-t0k"},
	{"pgbouncer", "admin_password = pgb-pw", "pgb-pw"},
	{"redis requirepass", "requirepass foobared99", "foobared99"},
	{"redis masterauth", "masterauth m4ster", "m4ster"},
	{"netrc", "machine api.example.com login bob password n3trc-pw", "n3trc-pw"},
	// XML
	{"xml password", "<password>xml-s3cret</password>", "xml-s3cret"},
	{"xml apiKey", "<apiKey>xk-778899</apiKey>", "xk-778899"},
	// command-line flags
	{"flag --password space", "mysqldump --password S3cr3tpw db", "S3cr3tpw"},
	{"flag --password equals", "app --password=eq-pw", "eq-pw"},
	{"flag --db-password", "migrate --db-password dbflag-pw", "dbflag-pw"},
	{"flag --token", "vault login --token hvs.CAESIJ", "hvs.CAESIJ"},
	{"flag --auth-token", "ngrok --auth-token 2abcDEF", "2abcDEF"},
	{"flag --client-secret", "az login --client-secret azcs-1", "azcs-1"},
	{"flag single dash", "app -password sdash-pw", "sdash-pw"},
	{"flag at line start", "--password linestart-pw", "linestart-pw"},
	{"mysql -p glued", "mysql -uroot -pSECRETpw -e 'select 1'", "SECRETpw"},
	{"mysqldump -p glued", "mysqldump -u root -pDumpPw9 app", "DumpPw9"},
	{"sshpass", "sshpass -p 'sshp4ss' ssh root@web1", "sshp4ss"},
	{"redis-cli -a", "redis-cli -h cache -a r3dis-pw ping", "r3dis-pw"},
	{"docker login -p", "docker login -u bob -p dckrpw registry.example.com", "dckrpw"},
	{"ldapsearch -w", "ldapsearch -x -D cn=admin -w ldappw1 -b dc=x", "ldappw1"},
	{"smbclient", "smbclient //srv/share -U bob%smbpw1", "smbpw1"},
	{"openssl pass:", "openssl rsa -in k.pem -passin pass:opensslpw", "opensslpw"},
	{"curl -u", "curl -u admin:curlpw1 https://x", "curlpw1"},
	{"SQL identified by", "CREATE USER app IDENTIFIED BY 'sqlpw-1';", "sqlpw-1"},
	{"SQL with password", "ALTER ROLE app WITH PASSWORD 'pgrole-pw';", "pgrole-pw"},
	// URLs
	{"url postgres", "postgres://app:urlpw1@db:5432/app", "urlpw1"},
	{"url mongodb+srv", "mongodb+srv://svc:m0ng0pw@cluster0.x.mongodb.net/db", "m0ng0pw"},
	{"url redis no user", "redis://:r3dispw@cache:6379/0", "r3dispw"},
	{"url https basic", "https://deploy:gh-pw-77@git.example.com/org/repo.git", "gh-pw-77"},
	{"url query password", "jdbc:mysql://db/app?user=app&password=qpw1", "qpw1"},
	{"url query access_token", "https://api.example.com/v1?access_token=qtok99&x=1", "qtok99"},
	{"url query apikey", "https://maps.example.com/geo?apikey=geo-k3y", "geo-k3y"},
	{"url query auth", "https://x.example.com/cb?auth=a9b8c7d6", "a9b8c7d6"},
	// prose
	{"prose admin password", "The admin password is hunter2.", "hunter2"},
	{"prose password for", "the root password for db1 is S3cr3t!x", "S3cr3t!x"},
	{"prose token was", "The deploy token was dt-5544 until today", "dt-5544"},
	{"prose password quoted", `the password is "correct horse battery"`, "correct horse battery"},
	{"prose password plain word", "the wifi password is swordfish", "swordfish"},
	{"prose api key", "Your API key is ak_live_1234", "ak_live_1234"},
	// headers
	{"header x-auth-token", "X-Auth-Token: xat-5566", "xat-5566"},
	{"header vault", "X-Vault-Token: hvs.vaulttok", "hvs.vaulttok"},
}

// lookAlikes look like secrets and are not: they must come back unchanged.
var lookAlikes = []string{
	"password_policy: strict",
	"token_count=5",
	"auth: none",
	"auth: basic",
	"auth_type: ldap",
	"author: alice",
	"authority=ca.example.com",
	"authentication: required",
	"oauth_enabled: true",
	"passive=true",
	"bypass=1",
	"passthrough: true",
	"compass_heading=270",
	"max_tokens: 4096",
	"prompt_tokens=35",
	"tokenizer: bpe",
	"token_type: bearer",
	"token_endpoint: https://auth.example.com/oauth/token",
	"token_ttl: 3600",
	"secret_name: tls-cert",
	"secretName: db-creds",
	"secrets: 3",
	"credentials_file: /etc/app/creds.json",
	"password_file: /run/secrets/db_password",
	"DB_PASSWORD_FILE=/run/secrets/db",
	"private_ip: 10.0.0.12",
	"private: false",
	"private_key: /etc/ssl/private/server.key",
	"public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5",
	"api_key_id: key-prod",
	"signature: valid",
	"design=flat",
	"require_password=true",
	"PasswordAuthentication no",
	"PasswordAuthentication=no",
	"password: ${DB_PASSWORD}",
	"password: |",
	"--password-stdin",
	"docker login --password-stdin -u bob registry.example.com",
	"psql --no-password -h db app",
	"psql -h db -p 5432 -U app",
	"mysql -u root -p app",
	"redis-cli -h cache ping",
	"the password is incorrect",
	"the token is expired",
	"the password is stored in vault",
	"The password was changed yesterday.",
	"Passwords are rotated monthly.",
	"password reset requested for alice",
	"auth.log rotated",
	"/var/log/auth.log: 12 failed logins",
	"Mar 01 12:00:01 web1 sshd[88]: Accepted password for bob from 10.0.0.5 port 50022 ssh2",
	"sshd: Failed password for invalid user admin from 203.0.113.9",
	"tokens used: 1200",
	"secret_key_base: <%= ENV['SECRET_KEY_BASE'] %>",
	"pwd=/srv/app",
	"passwd: files systemd",
	"commit 3f2a1b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
	"git@github.com:org/repo.git",
	"https://example.com:8443/path?q=1&page=2",
}

func TestRedactCorpus(t *testing.T) {
	if len(secretCorpus) < 60 || len(lookAlikes) < 40 {
		t.Fatalf("corpus has %d secrets and %d look-alikes; keep at least 60 and 40", len(secretCorpus), len(lookAlikes))
	}
	for _, tc := range secretCorpus {
		t.Run(tc.name, func(t *testing.T) { checkRedacted(t, tc.in, tc.secret) })
	}
	for _, in := range lookAlikes {
		if got := String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

// checkRedacted checks that String removes secret from in, leaves a marker,
// is idempotent, and that Suspect sees it.
func checkRedacted(t *testing.T, in, secret string) {
	t.Helper()
	if !strings.Contains(in, secret) {
		t.Fatalf("bad case: %q does not hold %q", in, secret)
	}
	got := String(in)
	if strings.Contains(got, secret) {
		t.Errorf("String(%q)\n= %q: the secret survived", in, got)
	}
	if !strings.Contains(got, redactedMarker) && !strings.Contains(got, "***") {
		t.Errorf("String(%q) = %q: no redaction marker", in, got)
	}
	if again := String(got); again != got {
		t.Errorf("not idempotent: %q → %q", got, again)
	}
	if !Suspect(in) {
		t.Errorf("Suspect(%q) = false for a secret", in)
	}
}

// The key classes are the heart of keyed redaction; spell out the cases.
func TestClassifyKey(t *testing.T) {
	tests := []struct {
		key  string
		want keyClass
	}{
		{"DB_PASS", keyStrong}, {"REDIS_AUTH", keyStrong}, {"PGPASSWORD", keyStrong}, {"client_secret", keyStrong},
		{"X-Api-Key", keyStrong}, {"AccountKey", keyStrong}, {"apiKey", keyStrong}, {"password_hash", keyStrong},
		{"masterauth", keyStrong}, {"dbpass", keyStrong}, {"credentials", keyStrong}, {"x-amz-signature", keyStrong},
		{"password_policy", keyWeak}, {"token_count", keyWeak}, {"secret_name", keyWeak}, {"auth_type", keyWeak},
		{"secret_key_base", keyWeak}, {"api_key_id", keyWeak}, {"DB_PASSWORD_FILE", keyWeak},
		{"author", keyNone}, {"bypass", keyNone}, {"max_tokens", keyNone}, {"tokenizer", keyNone}, {"oauth", keyNone},
		{"public_key", keyNone}, {"ssh_key", keyNone}, {"design", keyNone}, {"private", keyNone}, {"secrets", keyNone},
	}
	for _, tt := range tests {
		if got := classifyKey(tt.key); got != tt.want {
			t.Errorf("classifyKey(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
}

// Suspect's promise holds for text JSON-decoded from what it saw: no
// trigger holds a character JSON escapes, and every trigger is lower case
// (the scanner matches without regard to ASCII case).
func TestTriggersSurviveJSON(t *testing.T) {
	for _, ru := range builtinRedactRules {
		for _, tr := range ru.triggers {
			if strings.ContainsAny(tr, "\"\\<>&\u2028\u2029") {
				t.Errorf("trigger %q holds a character JSON escapes", tr)
			}
			for _, c := range tr {
				if c < 0x20 {
					t.Errorf("trigger %q holds a control character", tr)
				}
			}
			if tr != strings.ToLower(tr) {
				t.Errorf("trigger %q is not lowercase", tr)
			}
		}
	}
	if Suspect("Mar 01 12:00:00 web1 nginx[1]: GET /index.html 200") {
		t.Error("Suspect is true for a clean log line")
	}
}

// FuzzRedactText: redaction never panics, is idempotent, never grows a
// clean text, and keeps every line a redaction of some line (line count
// only drops when a private key block, or one in base64, is cut).
func FuzzRedactText(f *testing.F) {
	for _, tc := range secretCorpus {
		f.Add(tc.in)
	}
	for _, s := range lookAlikes {
		f.Add(s)
	}
	for _, tc := range shapeCorpus {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := String(in)
		if again := String(out); again != out {
			t.Fatalf("not idempotent:\n in %q\nout %q\nagain %q", in, out, again)
		}
		if !Suspect(in) && out != in {
			t.Fatalf("Suspect(%q) = false, yet String changed it to %q", in, out)
		}
		if !strings.Contains(in, "PRIVATE KEY") && !strings.Contains(in, "LS0tLS1CRUdJTi") &&
			strings.Count(out, "\n") != strings.Count(in, "\n") {
			t.Fatalf("line count changed: %q → %q", in, out)
		}
	})
}
