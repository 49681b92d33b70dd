package changes

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Repo is a configuration repository on vigil's own machine whose commits
// belong on every timeline (changes.git_repos).
type Repo struct {
	Name string
	Path string
}

// maxCommits bounds the commits read from one repository.
const maxCommits = 100

// gitCommand reads a repository's commits over the window: fixed options
// that never run a pager, a signature program or take a lock, with the
// repository's own path trusted so an ownership mismatch does not refuse
// it. Fields are separated by the unit separator, which no commit subject
// holds.
func gitCommand(r Repo, window time.Duration) string {
	since := strconv.Itoa(int(window.Minutes())) + " minutes ago"
	return "git -C " + quote(r.Path) + " --no-pager --no-optional-locks -c safe.directory=" + quote(r.Path) +
		" log --no-show-signature --no-color " + quote("--since="+since) + " -n " + strconv.Itoa(maxCommits) +
		" " + quote("--format=%H%x1f%ct%x1f%an%x1f%s")
}

// quote makes s one POSIX shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// parseGit reads gitCommand's output.
func parseGit(repo string, out string) ([]Event, int) {
	var evs []Event
	bad := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f := strings.SplitN(l, "\x1f", 4)
		if len(f) != 4 || len(f[0]) < 7 {
			bad++
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			bad++
			continue
		}
		evs = append(evs, Event{At: time.Unix(n, 0).UTC(), Source: "git:" + repo, Kind: "commit", Subject: repo,
			Detail: fmt.Sprintf("%s by %s: %s", f[0][:10], f[2], f[3])})
	}
	return evs, bad
}
