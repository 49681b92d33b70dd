package redact

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func jsonValid(s string) bool { return json.Valid([]byte(s)) }

// b64 is base64 of s, for corpus cases that need an encoded document.
func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// wrapped is base64 of s wrapped at 76 columns, as base64(1) prints it.
func wrapped(s string) string {
	e := b64(s)
	var lines []string
	for len(e) > 76 {
		lines = append(lines, e[:76])
		e = e[76:]
	}
	return strings.Join(append(lines, e), "\n")
}

// pemKey is a PEM private key whose body is long enough to wrap.
const pemKey = "-----BEGIN RSA PRIVATE KEY-----\n" +
	"MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" +
	"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n" +
	"-----END RSA PRIVATE KEY-----\n"

// wrappedKey is pemKey in base64 wrapped over lines; its second line must
// not survive.
var wrappedKey = wrapped(pemKey)

func secondLine(s string) string { return strings.Split(s, "\n")[1] }

// dockerConfig is a .dockerconfigjson value: base64 of JSON holding a
// registry's auth.
var dockerConfig = b64(`{"auths":{"registry.example.com":{"auth":"ZGVwbG95OnJlZzE1dHJ5LXB3"}}}`)

// shapeCorpus is issue 23's secret forms: secrets recognised by their shape
// (DSNs, .pgpass, hashes, cookies, issuers' tokens, an AWS secret beside
// its key ID, base64 that encodes a secret) and by structure (key paths
// through JSON and YAML, Kubernetes Secrets, name/value pairs, JSON inside
// strings, escaped quotes), as read, kube logs and plugins print them.
var shapeCorpus = []struct{ name, in, secret string }{
	// MySQL and Oracle DSNs
	{"go mysql dsn", "app:S3cretPw@tcp(db:3306)/app?parseTime=true", "S3cretPw"},
	{"dsn in env", "MYSQL_DSN=svc:Zx9!pq@tcp(10.0.0.5:3306)/orders", "Zx9!pq"},
	{"dsn unix socket", "root:Pw9xUnix@unix(/run/mysqld/mysqld.sock)/app", "Pw9xUnix"},
	{"dsn tcp6", "app:v6Secret@tcp6([::1]:3306)/app", "v6Secret"},
	{"dsn default host", "app:DefHost7@/appdb", "DefHost7"},
	{"dsn in yaml", `  dsn: "reporter:R3p0rt@tcp(mysql.svc:3306)/reports"`, "R3p0rt"},
	{"dsn in json", `{"dsn":"ro:ReadOnly1@tcp(db:3306)/x"}`, "ReadOnly1"},
	{"dsn in logfmt", `level=error msg="connect failed" dsn=etl:Etl-pass-9@tcp(db:3306)/dw err=timeout`, "Etl-pass-9"},
	{"sqlplus", "sqlplus scott/Tiger123@orcl", "Tiger123"},
	{"jdbc oracle thin", "jdbc:oracle:thin:hr/HrPass1@db:1521/XE", "HrPass1"},
	// .pgpass
	{"pgpass line", "db.example.com:5432:app:appuser:pgPa55", "pgPa55"},
	{"pgpass wildcards", "*:*:*:postgres:s3cr3t-star", "s3cr3t-star"},
	{"pgpass spaces in password", "localhost:6432:pgbouncer:admin:bouncer pw with spaces", "bouncer pw with spaces"},
	{"pgpass file", "# ~/.pgpass\nlocalhost:5432:*:replicator:Repl1cate\n10.0.0.9:5433:analytics:etl:An4lyt1cs\n", "Repl1cate"},
	{"pgpass second line", "localhost:5432:*:replicator:Repl1cate\n10.0.0.9:5433:analytics:etl:An4lyt1cs\n", "An4lyt1cs"},
	{"pgpass through grep", "/root/.pgpass:db1:5432:app:app:GrepPw1", "GrepPw1"},
	{"pgpass escaped colon", `db:5432:app:app:pa\:ss-word`, `pa\:ss-word`},
	{"pgpass other port", "warehouse.example.com:5439:dev:etl:Redsh1ft!", "Redsh1ft!"},
	// password hashes
	{"shadow sha512", "root:$6$xyzSALT1$KJH7ab8cd9ef0gh1ij2kl3mn4op5qr6st7uv8wx9yz0AB1CD2EF3GH4IJ5KL6MN7OP8QR9ST0UV1WX2YZ3abc.:19745:0:99999:7:::",
		"KJH7ab8cd9ef0gh1ij2kl3mn4op5qr6st7uv8wx9yz0AB1CD2EF3GH4IJ5KL6MN7OP8QR9ST0UV1WX2YZ3abc."},
	{"shadow yescrypt", "alice:$y$j9T$PaSsSaLt12345$AbCdEfGhIjKlMnOpQrStUvWxYz0123456789./ABCD:19800:0:99999:7:::",
		"AbCdEfGhIjKlMnOpQrStUvWxYz0123456789./ABCD"},
	{"shadow md5", "bob:$1$saltsalt$qwertyuiopasdfghjklzx1:19000:0:99999:7:::", "qwertyuiopasdfghjklzx1"},
	{"shadow sha256", "carl:$5$rounds=5000$usesomesillystri$KqJWpanXZHKq2BOB43TSaYhEWsQ1Lr5QNyPCDH/Tp.6:19000::::::", "KqJWpanXZHKq2BOB43TSaYhEWsQ1Lr5QNyPCDH/Tp.6"},
	{"htpasswd apr1", "admin:$apr1$r31.....$HqJZimcKQFAMYayBlzkrA/", "HqJZimcKQFAMYayBlzkrA/"},
	{"htpasswd bcrypt", "deploy:$2y$05$Y4pGdIIHHXDCJL8xaTbKouGu0a4Q8rCMjmHQp1Z4dSJ3e5m0yvQ9O", "Y4pGdIIHHXDCJL8xaTbKouGu0a4Q8rCMjmHQp1Z4dSJ3e5m0yvQ9O"},
	{"htpasswd sha", "ops:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=", "W6ph5Mm5Pz8GgiULbPgzG37mj9g="},
	{"ldap ssha", "userPassword: {SSHA}KpHy4fZQyGtYmZrTlz3Uq0W1Jc5lZ0pE", "KpHy4fZQyGtYmZrTlz3Uq0W1Jc5lZ0pE"},
	{"bcrypt in a sql dump", "INSERT INTO users VALUES (1,'bob','$2b$12$KIXQJ0mWQYh8yBvN3x1eO.Qh8zv3Yd8v6qgC9dH2p1L4sA0t8u5Gm');",
		"KIXQJ0mWQYh8yBvN3x1eO.Qh8zv3Yd8v6qgC9dH2p1L4sA0t8u5Gm"},
	{"argon2id", "hash=$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG", "RdescudvJCsgt3ub+b+dWRWJTmaaJObG"},
	{"django pbkdf2", "bob | pbkdf2_sha256$600000$Qw3rTy$kL9mN8bV7cX6zA5sD4fG3hJ2kL1qW0eR9tY8uI7oP6a=", "kL9mN8bV7cX6zA5sD4fG3hJ2kL1qW0eR9tY8uI7oP6a="},
	// cookies
	{"cookie header", "Cookie: sessionid=8f7e6d5c4b3a; csrftoken=x1y2z3", "8f7e6d5c4b3a"},
	{"cookie header second", "Cookie: sessionid=8f7e6d5c4b3a; csrftoken=x1y2z3", "x1y2z3"},
	{"set-cookie", "Set-Cookie: JSESSIONID=ABCDEF0123456789; Path=/; HttpOnly", "ABCDEF0123456789"},
	{"curl -b", "curl -b 'session=ck-secret-77' https://app/api", "ck-secret-77"},
	{"curl --cookie", `curl --cookie "auth_session=cc99xx" https://x`, "cc99xx"},
	{"cookie in json headers", `{"headers":{"Cookie":"sid=js0n-sid-1"}}`, "js0n-sid-1"},
	{"set-cookie json array", `{"set-cookie":["remember_token=rem-tok-5; Path=/; Expires=Wed, 21 Oct 2026 07:28:00 GMT"]}`, "rem-tok-5"},
	{"cookie in http trace", `send: b'GET / HTTP/1.1\r\nCookie: PHPSESSID=php5ess10n\r\n'`, "php5ess10n"},
	{"cookie in nginx log", `cookie="sid=ng1nx-sid-42" status=200`, "ng1nx-sid-42"},
	{"session cookie as env", "JSESSIONID=0A1B2C3D4E5F6A7B8C9D", "0A1B2C3D4E5F6A7B8C9D"},
	// Vault
	{"vault token env", "export VAULT_TOKEN=hvs.CAESIJ3kq9dLrT2z8XwYb1mNc4VpQ7sUe0fG", "hvs.CAESIJ3kq9dLrT2z8XwYb1mNc4VpQ7sUe0fG"},
	{"vault batch token", "batch: hvb.AAAAAQJ8x7Yk2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2hJ4kL6mN8pQ0rS2tU", "hvb.AAAAAQJ8x7Yk2mN4pQ6rS8tU0vW2xY4zA6bC8dE0fG2hJ4kL6mN8pQ0rS2tU"},
	{"vault legacy token", "vault login s.Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2", "s.Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"},
	{"vault legacy batch", "b.AAAAAQKHx2c5mP0qLg7TVb3kR8sWf1nJ4yZeU6oD9aC", "b.AAAAAQKHx2c5mP0qLg7TVb3kR8sWf1nJ4yZeU6oD9aC"},
	{"vault token lookup json", `{"data":{"id":"hvs.CAESIBpL0ngT0kenValue1234567890ab","policies":["default"]}}`, "hvs.CAESIBpL0ngT0kenValue1234567890ab"},
	{"vault unseal key", "Unseal Key 1: 4jYbl2CBIv6SpkKj6Hos9iD32k5RfGkLzlosrrq/JgOm", "4jYbl2CBIv6SpkKj6Hos9iD32k5RfGkLzlosrrq/JgOm"},
	{"vault recovery key", "Recovery Key 3: Rk3yRec0v3ryV4lu3AbCd", "Rk3yRec0v3ryV4lu3AbCd"},
	// issuers
	{"sendgrid env", "SENDGRID_API_KEY=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", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"},
	{"sendgrid bare", "using key SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg for mail", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefg"},
	{"sendgrid in json", `{"mail":{"provider":"sendgrid","creds":"SG.aaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}}`, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
	{"digitalocean", "doctl auth init -t dop_v1_" + strings.Repeat("a1b2c3d4", 8), "dop_v1_" + strings.Repeat("a1b2c3d4", 8)},
	{"stripe webhook secret", "endpoint secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
	{"stripe test key", "stripe login --api-key sk_test_51HxYz0123456789abcdefGHIJ", "sk_test_51HxYz0123456789abcdefGHIJ"},
	{"hugging face", "HF hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567"},
	{"docker hub pat", "docker login -u ci --password-stdin <<< dckr_pat_2b3e36beeb386dfdaacb9b46004", "dckr_pat_2b3e36beeb386dfdaacb9b46004"},
	{"shopify", "shop token shpat_" + strings.Repeat("0f", 16), "shpat_" + strings.Repeat("0f", 16)},
	{"grafana service account", "glsa_" + strings.Repeat("Ab", 16) + "_0a1b2c3d", "glsa_" + strings.Repeat("Ab", 16) + "_0a1b2c3d"},
	{"linear", "LINEAR=lin_api_" + strings.Repeat("Zq3", 13) + "x", "lin_api_" + strings.Repeat("Zq3", 13) + "x"},
	// an AWS secret key beside its key ID
	{"aws credentials csv", "User Name,Access Key ID,Secret Access Key\nci-bot,AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
	{"aws key pair on two lines", "AKIAI44QH8DHBEXAMPLE\nje7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"},
	{"aws key pair in a table", "| AKIAJ5DZ2EXAMPLEKEY1 | Zx9/aB8+cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX |", "Zx9/aB8+cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX"},
	// Kubernetes Secrets
	{"secret yaml data", "apiVersion: v1\ndata:\n  username: YWRtaW4=\n  db-url: cG9zdGdyZXM6Ly9kYg==\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\n", "cG9zdGdyZXM6Ly9kYg=="},
	{"secret yaml username", "apiVersion: v1\ndata:\n  username: YWRtaW4=\nkind: Secret\nmetadata:\n  name: app\n", "YWRtaW4="},
	{"secret stringData block", "kind: Secret\napiVersion: v1\nmetadata:\n  name: x\nstringData:\n  config.ini: |\n    [db]\n    host = db\n    user = app\n", "user = app"},
	{"secret in a list", "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    api: c2stbGl2ZS0xMjM=\n  kind: Secret\n  metadata:\n    name: a\nkind: List\n", "c2stbGl2ZS0xMjM="},
	{"secret second document", "apiVersion: v1\nkind: ConfigMap\ndata:\n  mode: fast\n---\napiVersion: v1\nkind: Secret\ndata:\n  conf: Y29uZi1zZWNyZXQ=\n", "Y29uZi1zZWNyZXQ="},
	{"secret json", "{\n  \"apiVersion\": \"v1\",\n  \"data\": {\n    \"token\": \"dG9r\",\n    \"user\": \"Ym9iLXVzZXI=\"\n  },\n  \"kind\": \"Secret\"\n}", "Ym9iLXVzZXI="},
	{"secret in last-applied annotation", "metadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"data\":{\"conn\":\"c2VjcmV0Y29ubg==\"},\"kind\":\"Secret\"}\n", "c2VjcmV0Y29ubg=="},
	{"secret flow data", "kind: Secret\ndata: {conn: ZmxvdzEyMw==}\n", "ZmxvdzEyMw=="},
	{"base64 private key", "tls.key: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVB"},
	{"base64 private key wrapped", "$ base64 key.pem\n" + wrappedKey + "\n$ ", secondLine(wrappedKey)},
	{"base64 private key in json", `{"client-key":"` + b64(pemKey) + `"}`, b64(pemKey)[20:60]},
	{"dockerconfigjson", "  .dockerconfigjson: " + dockerConfig, dockerConfig},
	// Kubernetes env entries and other name/value pairs
	{"env entry", "env:\n- name: DB_PASSWORD\n  value: hunter2-env\n", "hunter2-env"},
	{"env entry indented quoted", "    env:\n    - name: API_TOKEN\n      value: \"tok-env-42\"\n    - name: LOG_LEVEL\n      value: info\n", "tok-env-42"},
	{"env entry value first", "- value: rev-order-pw\n  name: ADMIN_PASS\n", "rev-order-pw"},
	{"env entry json", `{"env":[{"name":"STRIPE_SECRET","value":"whs-abc-123"}]}`, "whs-abc-123"},
	{"docker inspect env", `{"Config":{"Env":["POSTGRES_PASSWORD=dock3r-pg","PATH=/usr/bin"]}}`, "dock3r-pg"},
	{"helm extraEnv", "extraEnv:\n  - name: SMTP_PASSWORD\n    value: smtp-s3cret\n", "smtp-s3cret"},
	{"kubectl describe env", "    Environment:\n      REDIS_PASSWORD:  r3d1s-describe\n", "r3d1s-describe"},
	{"ssm parameter by name", `{"Parameter":{"Name":"/prod/db/password","Type":"String","Value":"ssm-pw-1"}}`, "ssm-pw-1"},
	{"ssm securestring", `{"Parameter":{"Name":"/prod/app/config","Type":"SecureString","Value":"ssm-config-val"}}`, "ssm-config-val"},
	{"cloudformation parameter", `[{"ParameterKey":"DbPassword","ParameterValue":"cfn-pw-7"}]`, "cfn-pw-7"},
	{"consul kv", `[{"Key":"service/api/token","Value":"Y29uc3VsLXRvaw=="}]`, "Y29uc3VsLXRvaw=="},
	{"label_values password", `{"label":"password","values":["lv-hunter2","lv-letmein"],"total":2}`, "lv-letmein"},
	{"label_values api_key yaml", "label: api_key\nvalues:\n  - lv-ak-1\n", "lv-ak-1"},
	// key paths through JSON and YAML
	{"json object under a secret key", `{"credentials":{"primary":"cred-primary-9","backup":["cred-backup-8"]}}`, "cred-backup-8"},
	{"yaml mapping under a secret key", "secrets:\n  db:\n    primary: yaml-deep-1\n", "yaml-deep-1"},
	{"json array under api_keys", `{"api_keys":["ak-arr-1","ak-arr-2"]}`, "ak-arr-2"},
	{"json number password", `{"user":"bob","password": 12345678}`, "12345678"},
	{"yaml block scalar", "password: |\n  blockpw-line\nuser: bob\n", "blockpw-line"},
	{"yaml folded scalar", "client_secret: >-\n  folded-secret-value\n", "folded-secret-value"},
	{"yaml flow sequence", "tokens: [tok-flow-1, tok-flow-2]\n", "tok-flow-2"},
	{"yaml list under key", "api_keys:\n  - abc123key\n  - def456key\nname: x\n", "def456key"},
	{"yaml list at key column", "passwords:\n- first-pw-1\n- second-pw-2\n", "second-pw-2"},
	{"json in a json string", `{"config": "{\"db\":{\"password\":\"nested-pw\"}}"}`, "nested-pw"},
	{"json in json in json", `{"a":"{\"b\":\"{\\\"token\\\":\\\"deep-tok-3\\\"}\"}"}`, "deep-tok-3"},
	{"yaml in a json string", `{"values": "db:\n  password: yaml-in-json\n"}`, "yaml-in-json"},
	{"json log line with timestamp", `2024-03-01T12:00:00Z {"level":"info","msg":"boot","config":{"secrets":["jl-sec-1"]}}`, "jl-sec-1"},
	{"json log line nested", `{"level":"debug","req":{"headers":{"authorization":"Bearer jl-bearer-77x"}}}`, "jl-bearer-77x"},
	// escaped quotes
	{"escaped quotes password", `body="{\"password\":\"esc-pw-1\"}"`, "esc-pw-1"},
	{"escaped quotes vault token", `vault_token=\"hvs.CAESIEsc4p3dT0k3nV4lu3xxyz\"`, "hvs.CAESIEsc4p3dT0k3nV4lu3xxyz"},
	{"escaped quotes api key", `\"api_key\": \"esc-api-2\"`, "esc-api-2"},
	{"escaped quotes logfmt", `msg="login" detail="password=\"esc-pw-3\" user=\"bob\""`, "esc-pw-3"},
}

// shapeLookAlikes look like issue 23's shapes and are not secrets.
var shapeLookAlikes = []string{
	"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  app.tar.gz",
	"d41d8cd98f00b204e9800998ecf8427e  empty.txt",
	"sha256sum: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"https://api.example.com/v1/orders/550e8400-e29b-41d4-a716-446655440000/items",
	"GET /users/123e4567-e89b-12d3-a456-426614174000 200 12ms",
	"Merge: 1a2b3c4 5d6e7f8",
	"9fceb02d0ae598e95dc970b74767f19372d61af8 fix token refresh",
	"image: registry.example.com/app@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"ca.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=",
	"apiVersion: v1\ndata:\n  LOG_LEVEL: info\n  config.json: eyJsb2ciOiJpbmZvIn0=\n  logo.png: iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB\nkind: ConfigMap\n",
	"env:\n- name: LOG_LEVEL\n  value: debug\n- name: DB_HOST\n  value: db.internal\n",
	"- name: TOKEN_TTL\n  value: \"3600\"\n",
	"- name: PASSWORD_MIN_LENGTH\n  value: \"12\"\n",
	"- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password\n",
	"volumes:\n- name: certs\n  secret:\n    secretName: tls-cert\n    defaultMode: 420\n",
	"imagePullSecrets:\n- name: regcred\n",
	"secrets:\n- name: builder-token-x7k2p\n",
	`{"label":"job","values":["api","node"],"total":2}`,
	`{"tokens":{"input":1200,"output":300}}`,
	`{"usage":{"prompt_tokens":35,"completion_tokens":12}}`,
	`{"password_policy":{"min_length":12,"require_digit":true}}`,
	`{"token_endpoint":"https://auth.example.com/oauth/token"}`,
	`{"secretKeyRef":{"name":"db","key":"password"}}`,
	`{"kind":"ConfigMap","data":{"mode":"fast","password_policy":"strict"}}`,
	"kind: SecretProviderClass\nspec:\n  provider: vault\n",
	"root:x:0:0:root:/root:/bin/bash",
	"docker:x:999:alice,bob",
	"daemon:*:19000:0:99999:7:::",
	"nobody:!:19000::::::",
	"db1:5432:app:reader",
	"postgres://db:5432/app",
	"Listening on 0.0.0.0:5432",
	"2024-03-01 12:00:00,123 INFO started",
	"fe80::1ff:fe23:4567:890a",
	"00:1a:2b:3c:4d:5e",
	"Cookies: 3 stored",
	"cookie_consent=accepted",
	"Set-Cookie header missing from the response",
	"curl -b cookies.txt https://example.com",
	"see docs.example.com for details",
	"echo $1$2",
	"tls:\n  secretName: web-tls\n",
	"msg.Sender is nil",
}

func TestShapeCorpus(t *testing.T) {
	if n := len(secretCorpus) + len(shapeCorpus); n < 150 {
		t.Fatalf("the corpora hold %d secret forms; keep at least 150", n)
	}
	if n := len(lookAlikes) + len(shapeLookAlikes); n < 60+40 {
		t.Fatalf("the corpora hold %d look-alikes; keep at least 100", n)
	}
	for _, tc := range shapeCorpus {
		t.Run(tc.name, func(t *testing.T) {
			checkRedacted(t, tc.in, tc.secret)
			// JSON-encoded (a tool result's stdout in an envelope), the
			// secret goes too and the document stays JSON.
			enc := `{"ok":true,"data":{"stdout":` + jsonQuote(tc.in) + `}}`
			if got := JSON(enc); strings.Contains(got, jsonQuote(tc.secret)[1:len(jsonQuote(tc.secret))-1]) {
				t.Errorf("JSON(%s)\n= %s: the secret survived", enc, got)
			} else if _, ok := parseJSON(got); !ok {
				t.Errorf("JSON(%s) = %s: not JSON any more", enc, got)
			}
		})
	}
	for _, in := range shapeLookAlikes {
		if got := String(in); got != in {
			t.Errorf("String(%q)\n= %q, want it unchanged", in, got)
		}
		enc := `{"stdout":` + jsonQuote(in) + `}`
		if got := JSON(enc); got != enc {
			t.Errorf("JSON(%s)\n= %s, want it unchanged", enc, got)
		}
	}
}

// The JSON walker masks by key path and leaves the layout alone.
func TestJSONKeepsLayout(t *testing.T) {
	in := "{\n  \"user\": \"bob\",\n  \"password\": \"hunter2\",\n  \"note\": \"caf\\u00e9\"\n}"
	want := "{\n  \"user\": \"bob\",\n  \"password\": \"[REDACTED:password]\",\n  \"note\": \"caf\\u00e9\"\n}"
	if got := String(in); got != want {
		t.Errorf("String(%q)\n got %q\nwant %q", in, got, want)
	}
}

// FuzzParseJSON: the parser accepts exactly what encoding/json accepts,
// and redacting a JSON document keeps it JSON.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2,{"b":[true,false,null]}]`, `"x\u00e9\n"`, `-0.5e+3`, `{"a":}`, `[1,]`,
		`{"password":"x","n":{"label":"token","values":["a"]}}`, `01`, `"\x"`, `{"a":"b" "c":1}`} {
		f.Add(s)
	}
	for _, tc := range shapeCorpus {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, ok := parseJSON(s)
		if valid := jsonValid(s); ok != valid {
			t.Fatalf("parseJSON(%q) ok = %v, encoding/json says valid = %v", s, ok, valid)
		}
		if ok {
			out := JSON(s)
			if !jsonValid(out) {
				t.Fatalf("JSON(%q) = %q: not JSON", s, out)
			}
			if again := JSON(out); again != out {
				t.Fatalf("not idempotent: %q → %q → %q", s, out, again)
			}
		}
	})
}
