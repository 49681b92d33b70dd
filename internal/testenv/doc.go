// Package testenv groups what only tests use: fakes of the outside world
// and fixtures, none of which ships in the vigil binary.
//
//	modeltest   a scripted OpenAI-compatible HTTP server (the model's side)
//	slackfake   Slack's Web API and Socket Mode, speaking the real wire format
//	dendrite    a real Matrix homeserver, built once and started per test
//	sshdtest    a real OpenSSH sshd on loopback for the SSH transport
//	redistest   real redis-servers: the shared one, private ones (crash,
//	            freeze, thaw), a Redis Cluster and Sentinels
//	obsbin      real Prometheus and Alertmanager servers
//	testkit     wiring a whole vigil (app, console, chat) for end-to-end tests
//	golden      golden-file comparison with an -update flag
//
// Production code never imports these packages; the demo's scripted model
// (internal/demo) is product, not a fake, and lives outside this tree.
package testenv
