package changes

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The host part of a timeline comes from one read-only command vigil
// builds itself (hostScript): the machine's UTC offset, boot time, package
// history (dpkg's log, or rpm's install times) and the systemd journal's
// unit state changes, each section after a marker line. The command is
// classified by policy like any read and runs in the read sandbox.

// Section markers in the host script's output.
const (
	markTZ      = "@@vigil-tz"
	markBtime   = "@@vigil-btime"
	markDpkg    = "@@vigil-dpkg"
	markRpm     = "@@vigil-rpm"
	markJournal = "@@vigil-journal"
)

// Journal catalog message IDs of the changes the timeline shows
// (systemd's catalog, /usr/lib/systemd/catalog/systemd.catalog).
var journalKinds = map[string]string{
	"39f53479d3a045ac8e11786248231fbf": "unit_started",
	"be02cf6855d2428ba40df7e9d022f03d": "unit_failed",
	"d9b373ed55a64feb8242e02dbe79a49c": "unit_failed",
	"9d1aaa27d60140bd96365438aad20286": "unit_stopped",
	"7b05ebc668384222baa8881179cfda54": "unit_reloaded",
	"5eb03494b6584870a536b337290809b3": "unit_restart_scheduled",
	"fe6faa94e7774663a0da52717891d8ef": "oom_kill",
	"b07a249cd024414a82dd00cd181378ff": "boot",
	"98268866d1d54a499c4e98921d93bc40": "shutdown",
}

// journalIDs lists journalKinds' IDs in a fixed order.
var journalIDs = []string{
	"39f53479d3a045ac8e11786248231fbf", "be02cf6855d2428ba40df7e9d022f03d", "d9b373ed55a64feb8242e02dbe79a49c",
	"9d1aaa27d60140bd96365438aad20286", "7b05ebc668384222baa8881179cfda54", "5eb03494b6584870a536b337290809b3",
	"fe6faa94e7774663a0da52717891d8ef", "b07a249cd024414a82dd00cd181378ff", "98268866d1d54a499c4e98921d93bc40",
}

// Bounds of the host script's sections.
const (
	maxJournal  = 300
	maxPackages = 300
)

// hostScript is the command that reads a host's changes over the last
// window. unit, when set (a service target), limits the journal to it; it
// must already be a validated unit name.
func hostScript(window time.Duration, unit string) string {
	since := "-" + strconv.Itoa(int(window.Minutes())) + "m"
	j := "journalctl --no-pager -q -r -o json --output-fields=MESSAGE,MESSAGE_ID,UNIT,JOB_RESULT --since " + since +
		" -n " + strconv.Itoa(maxJournal)
	if unit != "" {
		j += " -u " + unit
	}
	for _, id := range journalIDs {
		j += " MESSAGE_ID=" + id
	}
	return strings.Join([]string{
		"echo " + markTZ, "date +%z",
		"echo " + markBtime, "grep '^btime' /proc/stat",
		"echo " + markDpkg,
		"grep -hE ' (install|upgrade|remove|purge) ' /var/log/dpkg.log /var/log/dpkg.log.1 2>/dev/null | tail -n " + strconv.Itoa(maxPackages),
		"echo " + markRpm,
		"rpm -qa --qf '%{INSTALLTIME} %{NAME}-%{VERSION}-%{RELEASE}.%{ARCH}\\n' 2>/dev/null | sort -rn | head -n " + strconv.Itoa(maxPackages),
		"echo " + markJournal,
		j,
	}, "; ")
}

// hostReport is what the host script's output held.
type hostReport struct {
	events   []Event
	statuses []SourceStatus
}

// parseHost reads the host script's output. Missing sections (a command
// absent on the machine) are reported, not fatal.
func parseHost(out string) hostReport {
	sections := map[string][]string{}
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "@@vigil-") {
			cur = strings.TrimSpace(line)
			sections[cur] = []string{}
			continue
		}
		if cur != "" && strings.TrimSpace(line) != "" {
			sections[cur] = append(sections[cur], line)
		}
	}
	var r hostReport
	loc := time.UTC
	if tz := sections[markTZ]; len(tz) == 1 {
		if t, err := time.Parse("-0700", strings.TrimSpace(tz[0])); err == nil {
			loc = t.Location()
		}
	}

	var boots []Event
	if bt := sections[markBtime]; len(bt) == 1 {
		if f := strings.Fields(bt[0]); len(f) == 2 {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				boots = append(boots, Event{At: time.Unix(n, 0).UTC(), Source: "boot", Kind: "boot", Subject: "system",
					Detail: "the running system booted (kernel boot time)"})
			}
		}
	}

	pkgs, pst := parseDpkg(sections[markDpkg], loc)
	rpms := parseRpm(sections[markRpm])
	pst.Events += len(rpms)
	if len(rpms) > 0 {
		pst.Status, pst.Note = "ok", ""
	}
	r.events = append(r.events, pkgs...)
	r.events = append(r.events, rpms...)
	if _, ok := sections[markDpkg]; !ok {
		pst = SourceStatus{Source: "packages", Status: "failed", Note: "the script's output was cut before the package history"}
	}
	r.statuses = append(r.statuses, pst)

	lines, ok := sections[markJournal]
	js := SourceStatus{Source: "journal", Status: "ok"}
	if !ok {
		js = SourceStatus{Source: "journal", Status: "failed", Note: "no journal section in the output"}
	}
	var journal []Event
	bad := 0
	for _, l := range lines {
		e, ok := parseJournalLine(l)
		if !ok {
			bad++
			continue
		}
		journal = append(journal, e)
	}
	if bad > 0 {
		js.Status, js.Note = "partial", fmt.Sprintf("%d journal lines could not be read (output cut, or not journal JSON)", bad)
	}
	if len(lines) >= maxJournal {
		js.Note = strings.TrimPrefix(js.Note+fmt.Sprintf("; only the newest %d unit changes were read", maxJournal), "; ")
	}
	js.Events = len(journal)
	// The kernel's boot time and the journal's start-up-finished entry
	// describe the same boot; keep the journal's, which says more.
	for _, b := range boots {
		dup := false
		for _, j := range journal {
			if j.Kind == "boot" && !j.At.Before(b.At) && j.At.Sub(b.At) < 15*time.Minute {
				dup = true
			}
		}
		if !dup {
			r.events = append(r.events, b)
		}
	}
	r.events = append(r.events, journal...)
	r.statuses = append(r.statuses, js)
	return r
}

// parseDpkg reads dpkg.log lines: "2026-03-01 11:02:03 upgrade nginx:amd64
// 1.22.1-9 1.22.1-9+deb12u1". dpkg writes local time without a zone; loc
// is the host's offset.
func parseDpkg(lines []string, loc *time.Location) ([]Event, SourceStatus) {
	st := SourceStatus{Source: "packages", Status: "ok"}
	var out []Event
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		at, err := time.ParseInLocation("2006-01-02 15:04:05", f[0]+" "+f[1], loc)
		if err != nil {
			continue
		}
		kind := map[string]string{"install": "package_install", "upgrade": "package_upgrade", "remove": "package_remove", "purge": "package_remove"}[f[2]]
		if kind == "" {
			continue
		}
		detail := f[2]
		switch {
		case f[2] == "upgrade" && len(f) >= 6:
			detail = "upgraded from " + f[4] + " to " + f[5]
		case f[2] == "install" && len(f) >= 6:
			detail = "installed " + f[5]
		case len(f) >= 5:
			detail = f[2] + "d " + f[4]
		}
		out = append(out, Event{At: at.UTC(), Source: "packages", Kind: kind, Subject: f[3], Detail: detail})
	}
	st.Events = len(out)
	if len(lines) == 0 {
		st.Note = "no dpkg history (not a Debian-family host, or nothing logged)"
	}
	return out, st
}

// parseRpm reads "<install time> <name-version-release.arch>" lines.
func parseRpm(lines []string) []Event {
	var out []Event
	for _, l := range lines {
		ts, pkg, ok := strings.Cut(strings.TrimSpace(l), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			continue
		}
		out = append(out, Event{At: time.Unix(n, 0).UTC(), Source: "packages", Kind: "package_install", Subject: pkg,
			Detail: "installed or upgraded (rpm install time)"})
	}
	return out
}

// parseJournalLine reads one line of journalctl -o json.
func parseJournalLine(line string) (Event, bool) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &raw); err != nil {
		return Event{}, false
	}
	str := func(k string) string {
		var s string
		if v, ok := raw[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		// journalctl writes a field that is not valid UTF-8 as an array of
		// byte values.
		var bs []byte
		var ns []int
		if v, ok := raw[k]; ok && json.Unmarshal(v, &ns) == nil {
			for _, n := range ns {
				bs = append(bs, byte(n))
			}
			return strings.ToValidUTF8(string(bs), "?")
		}
		return ""
	}
	us, err := strconv.ParseInt(str("__REALTIME_TIMESTAMP"), 10, 64)
	if err != nil {
		return Event{}, false
	}
	kind, ok := journalKinds[str("MESSAGE_ID")]
	if !ok {
		return Event{}, false
	}
	e := Event{At: time.UnixMicro(us).UTC(), Source: "journal", Kind: kind, Subject: str("UNIT"), Detail: str("MESSAGE")}
	switch kind {
	case "boot", "shutdown":
		e.Source, e.Subject = "boot", "system"
	case "unit_failed":
		if r := str("JOB_RESULT"); r != "" && !strings.Contains(e.Detail, r) {
			e.Detail += " (result: " + r + ")"
		}
	}
	if e.Subject == "" {
		e.Subject = "systemd"
	}
	return e, true
}
