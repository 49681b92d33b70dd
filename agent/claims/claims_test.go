package claims

import (
	"strings"
	"testing"
)

// TestChangeClaims reads final answers the way the claim check does: each
// phrasing either claims that a change was made (and names its family) or
// does not.
func TestChangeClaims(t *testing.T) {
	tests := []struct {
		text   string
		family string // "" with claim=true: a change of any kind
		claim  bool
	}{
		// First person, every tense and filler a model uses.
		{"I restarted nginx on web1.", "restart", true},
		{"I've restarted nginx and it is healthy.", "restart", true},
		{"I have now restarted the service.", "restart", true},
		{"I just rebooted web1.", "reboot", true},
		{"We rolled back the deployment to v1.4.", "rollback", true},
		{"I went ahead and deleted the stale lock file.", "delete", true},
		{"I have gone ahead and cleared the cache.", "cleanup", true},
		{"I checked the logs and restarted nginx.", "restart", true},
		{"I found the leak, then killed process 4321.", "kill", true},
		{"I successfully applied the fix.", "", true},
		{"I fixed the permissions on /var/www.", "", true},
		{"I managed to free up 12 GB on /var.", "cleanup", true},
		{"I was able to restart the container.", "restart", true},
		{"I ran `systemctl restart nginx` and it came back.", "restart", true},
		{"I made a change to the nginx config.", "", true},
		{"I scaled the deployment to 5 replicas.", "scale", true},
		{"I shut down the VM.", "stop", true},
		{"I brought the service back up.", "start", true},
		{"I set the TTL to 60 seconds.", "", true},
		{"vigil has restarted postgres.", "restart", true},
		// Passive and report-style.
		{"nginx has been restarted.", "restart", true},
		{"The cache has been cleared and disk usage is down to 40%.", "cleanup", true},
		{"The old log files have been deleted.", "delete", true},
		{"It's been rolled back.", "rollback", true},
		{"The stale pods were deleted.", "delete", true},
		{"The service was successfully restarted.", "restart", true},
		{"nginx restarted successfully.", "restart", true},
		{"Restarted nginx on web1.", "restart", true},
		{"Done: restarted nginx and verified it answers.", "restart", true},
		{"- Deleted 3 old snapshots", "delete", true},
		{"**Rolled back** the release to 2.3.1.", "rollback", true},
		{"The issue is now fixed.", "", true},
		{"The deployment is now rolled back.", "rollback", true},
		{"nginx is now healthy after the restart.", "restart", true},
		{"The API is back up after restarting the pod.", "restart", true},
		{"My restart succeeded.", "restart", true},
		{"The rollback worked and errors stopped.", "rollback", true},
		{"Everything looks good. I also reloaded haproxy.", "restart", true},
		{"I’ve restarted nginx.", "restart", true},

		// Advice, offers, conditions and futures.
		{"You should restart nginx to pick up the new config.", "", false},
		{"If you restart nginx, the error should clear.", "", false},
		{"I recommend restarting the service.", "", false},
		{"I can restart nginx once you approve.", "", false},
		{"I will restart nginx after your approval.", "", false},
		{"I'll propose a restart.", "", false},
		{"Once restarted, it will pick up the new certificate.", "", false},
		{"nginx needs to be restarted.", "", false},
		{"It should be restarted during the maintenance window.", "", false},
		{"Restart nginx with `systemctl restart nginx`.", "", false},
		{"Set the TTL to 60 seconds in the config.", "", false},
		{"Consider deleting the old snapshots.", "", false},
		{"Should I restart nginx?", "", false},
		{"Have you restarted it since the change?", "", false},
		{"The restart is waiting for approval.", "", false},
		{"I tried to restart nginx but the approval was denied.", "", false},
		// Negations.
		{"I did not restart nginx.", "", false},
		{"I didn't change anything.", "", false},
		{"I haven't deleted anything.", "", false},
		{"nginx has not been restarted.", "", false},
		{"Nothing was changed.", "", false},
		{"No pods were deleted.", "", false},
		{"I restarted nothing; this was read-only.", "", false},
		{"The change was denied, so nginx was not restarted.", "", false},
		// The system's own history, read from logs and status.
		{"nginx was restarted 3 days ago by systemd.", "", false},
		{"The logs show nginx was restarted at 03:12.", "", false},
		{"According to the journal, the unit was stopped yesterday.", "", false},
		{"The container restarted 5 times in the last hour.", "", false},
		{"systemd restarted the unit after it crashed.", "", false},
		{"The OOM killer killed process 1234.", "", false},
		{"nginx has been restarted 4 times since boot.", "", false},
		{"The pod was evicted by the kubelet.", "", false},
		{"The deploy was rolled back by CI at 10:02.", "", false},
		{"nginx had been restarted before the crash.", "", false},
		{"This bug was fixed in nginx 1.25.", "", false},
		{"The unit is disabled.", "", false},
		{"The service was stopped when I checked.", "", false},
		{"Stopped containers are listed below.", "", false},
		{"I started by checking the logs.", "", false},
		{"I ran `df -h` to check whether a cleanup is needed.", "", false},
		{"The alert resolved itself.", "", false},
		{"It uses a fixed interval of 30s.", "", false},
		{"The container exited with code 137, which means it was killed (likely OOM).", "", false},
		{"Files were deleted from /tmp by the cleanup timer.", "", false},
		{"The upgrade was applied automatically by unattended-upgrades.", "", false},
		{"I updated my analysis: the root cause is DNS.", "", false},
		{"To fix it, I would restart nginx; I have not done so.", "", false},
		{"Once you approve, I'll restart it and verify.", "", false},
		// Quoted material is not vigil speaking.
		{"> Mar 01 nginx was restarted\nThat line is from the journal.", "", false},
		{"```\nRestarted nginx.service\n```\nThe unit restarts often.", "", false},
		// Quoted log lines and messages are not vigil speaking; the
		// command after "I ran" is.
		{"The service is killed by the OOM killer (journal: 'Out of memory: Killed process reports-worker', result 'oom-kill').", "", false},
		{`The log says "Restarted nginx.service" twice an hour.`, "", false},
		{"The error was “Deleted file is still open”.", "", false},
		{`I ran "systemctl restart nginx" and it came back.`, "restart", true},
		{"It's been restarted and it's fine.", "restart", true},
		{"libparse was upgraded to 3.4.0 this morning (09:12).", "", false},
		{"The unit was restarted this afternoon.", "", false},
		// Plain facts.
		{"Disk usage on /var is 93%.", "", false},
		{"nginx is running and answers on port 443.", "", false},
	}
	claims, plain := 0, 0
	for _, tt := range tests {
		got := Find(tt.text)
		if tt.claim {
			claims++
		} else {
			plain++
		}
		switch {
		case tt.claim && len(got) == 0:
			t.Errorf("%q: no claim found, want one (%q)", tt.text, tt.family)
		case !tt.claim && len(got) > 0:
			t.Errorf("%q: claims %+v, want none", tt.text, got)
		case tt.claim && got[0].Family != tt.family:
			t.Errorf("%q: claim %+v, want family %q", tt.text, got[0], tt.family)
		}
	}
	if claims < 15 || plain < 15 {
		t.Fatalf("the table has %d claims and %d non-claims; keep at least 15 of each", claims, plain)
	}
}

// A claim is backed by a change of its kind that ran in the run; a file
// write backs edits, not restarts; a tool vigil cannot read backs anything.
func TestClaimsBackedByChanges(t *testing.T) {
	restart := Change{Tool: "control", Action: "service", Summary: "restart service nginx on web1"}
	rm := Change{Tool: "control", Action: "command", Summary: "run on web1: rm -f /var/lock/app.lock"}
	edit := Change{Tool: "file_edit", Action: "write", Summary: "replace /etc/app.conf on web1 with 120 bytes"}
	plugin := Change{Tool: "tickets_close", Summary: "call plugin tool close"}
	tests := []struct {
		text    string
		changes []Change
		backed  bool
	}{
		{"I restarted nginx.", []Change{restart}, true},
		{"I restarted nginx.", nil, false},
		{"I restarted nginx.", []Change{rm}, false},
		{"I deleted the stale lock.", []Change{rm}, true},
		{"I fixed the config.", []Change{edit}, true},
		{"I removed the bad line from the config.", []Change{edit}, true},
		{"I restarted nginx.", []Change{edit}, false},
		{"I restarted nginx and deleted the lock.", []Change{restart}, false},
		{"I restarted nginx and deleted the lock.", []Change{restart, rm}, true},
		{"I closed the ticket and restarted nothing else.", []Change{plugin}, true},
		{"I rebooted web1.", []Change{plugin}, true},
	}
	for _, tt := range tests {
		claims := Find(tt.text)
		if len(claims) == 0 {
			if tt.backed {
				continue
			}
			t.Fatalf("%q: no claim found", tt.text)
		}
		un := Unbacked(claims, tt.changes)
		if got := len(un) == 0; got != tt.backed {
			t.Errorf("%q with %d changes: backed=%v, want %v (unbacked %+v)", tt.text, len(tt.changes), got, tt.backed, un)
		}
	}
}

// Every part of a compound command that ran counts as done: a claim is
// backed by any part of its kind; a program vigil does not know (a script)
// may have done anything.
func TestCompoundCommandsBackEveryPart(t *testing.T) {
	tests := []struct {
		text, cmd string
		backed    bool
	}{
		{"I restored billing.yaml from billing.yaml.bak and restarted billing.", "cp /etc/billing/billing.yaml.bak /etc/billing/billing.yaml && systemctl restart billing.service", true},
		{"I cleared the old core dumps and restarted ingest.", "rm -f /var/lib/systemd/coredump/core.*; systemctl restart ingest", true},
		{"I rolled back the deployment.", "kubectl rollout undo deploy/api && kubectl rollout status deploy/api", true},
		{"I reloaded nginx.", "nginx -t && systemctl reload nginx", true},
		{"I restarted nginx.", "sudo -n timeout 30 systemctl restart nginx 2>&1 | tail -5", true},
		{"I restarted nginx.", "bash -c 'cp a b && systemctl restart nginx'", true},
		{"I stopped the worker and deleted its lock.", "pkill -f worker || true; rm /run/worker.lock", true},
		{"I freed space on /var.", "journalctl --vacuum-size=500M", true},
		{"I scaled the deployment to 5 replicas.", "kubectl scale deploy/api --replicas=5", true},
		{"I fixed the config.", "sed -i 's/2O/20/' /etc/billing/billing.yaml", true},
		{"I deleted the stale lock.", "/opt/scripts/cleanup.sh --locks", true},
		{"I restarted nginx.", "rm -f /tmp/x && echo done > /dev/null", false},
		{"I restarted nginx.", "cp a b 2>&1", false},
		{"I rebooted web1.", "systemctl status nginx; df -h", false},
		{"I rolled back the release.", "systemctl restart api && systemctl status api", false},
	}
	for _, tt := range tests {
		claims := Find(tt.text)
		if len(claims) == 0 {
			t.Fatalf("%q: no claim found", tt.text)
		}
		ch := Change{Tool: "control", Action: "command", Summary: "run on api-1: " + tt.cmd, Command: tt.cmd}
		if un := Unbacked(claims, []Change{ch}); (len(un) == 0) != tt.backed {
			t.Errorf("%q after %q: unbacked %+v, want backed=%v", tt.text, tt.cmd, un, tt.backed)
		}
	}
}

func TestClaimNote(t *testing.T) {
	claims := Find("I deleted the old snapshots.")
	for _, changes := range [][]Change{nil, {{Tool: "control", Summary: "restart service nginx on web1"}}} {
		note := Note(Unbacked(claims, changes), changes)
		if !strings.Contains(note, "no change was made") {
			t.Errorf("note %q lacks the words \"no change was made\"", note)
		}
		if len(changes) > 0 && !strings.Contains(note, "deleted the old snapshots") {
			t.Errorf("note %q does not quote the unbacked claim", note)
		}
	}
}

// FuzzChangeClaims: whatever the model writes, reading it never panics and
// every claim quotes words of the answer.
func FuzzChangeClaims(f *testing.F) {
	for _, s := range []string{"I restarted nginx.", "nginx has been restarted 3 times", "```\nx\n", "Done: deleted it; ok?",
		"I managed to", "brought", "is now healthy after the", "I ran", "—restarted—"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range Find(s) {
			if c.Phrase == "" {
				t.Fatalf("%q: a claim without a phrase: %+v", s, c)
			}
		}
	})
}

// FuzzCommandFamilies: any command reads without a panic, and the same
// command always backs the same claims.
func FuzzCommandFamilies(f *testing.F) {
	for _, s := range []string{"cp a b && systemctl restart x", "bash -c 'sh -c \"rm x\"'", "2>&1 >", "sudo timeout", "find / -delete",
		"a=b", "journalctl --vacuum-time=2d", "`rm x`", "$(reboot)", "x > y; y >> z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, b := commandFamilies(s), commandFamilies(s)
		if len(a) != len(b) {
			t.Fatalf("%q: %v then %v", s, a, b)
		}
		for k := range a {
			if !b[k] {
				t.Fatalf("%q: %v then %v", s, a, b)
			}
		}
	})
}

// An answer that names the very command that ran is backed by it, even
// when its verb belongs to no family the command's words show ("removed
// the lock with qm unlock").
func TestClaimNamingItsCommandIsBacked(t *testing.T) {
	unlock := Change{Tool: "control", Action: "command", Command: "qm unlock 105", Summary: "run on pve-3: qm unlock 105"}
	claims := Find("I removed it with qm unlock 105 (approved).")
	if len(claims) == 0 {
		t.Fatal("no claim found; the test needs one")
	}
	if u := Unbacked(claims, []Change{unlock}); len(u) != 0 {
		t.Errorf("a claim naming the command that ran is unbacked: %+v", u)
	}
	other := Change{Tool: "control", Action: "command", Command: "qm unlock 106", Summary: "run on pve-3: qm unlock 106"}
	if u := Unbacked(claims, []Change{other}); len(u) == 0 {
		t.Error("a claim naming another command than the one that ran is backed")
	}
}

// The structured root cause `vigil eval` asks for describes what went
// wrong, not what vigil did.
func TestRootCauseLineIsNoClaim(t *testing.T) {
	line := "root_cause: {entity: REDIS_HOST, cause: the Redis container was renamed cache}"
	if c := Find(line); len(c) != 0 {
		t.Errorf("root_cause line read as claims: %+v", c)
	}
	if c := Find("The Redis container was renamed cache."); len(c) == 0 {
		t.Error("the same words outside a root_cause line are no claim; the test above proves nothing")
	}
}
