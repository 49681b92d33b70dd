package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
	"github.com/vigilops/vigil/tools/unidiff"
)

// A file_edit card shows a write or append as a unified diff against the
// file as it is when the run stops for approval, read by the tool's own
// read action through policy like any read (Previewer). The approval binds
// the file's SHA-256 as its basis, and Execute changes nothing unless the
// file still has it: what runs is the change the approver read.

var _ tools.PreviewerOf[FileEditArgs] = (*FileEditTool)(nil)

// Labels of a file_edit card's preview lines (beside FileNewContentLabel
// and FileAppendedLabel).
const (
	FileDiffLabel   = "change (unified diff against the file as it is now: - removed, + added)"
	FileCreateLabel = "content of the new file (there is no file at this path now)"
	FileNoDiffLabel = "no diff"
)

// Bounds of a file_edit card's diff. Beyond them the card shows the
// diff's beginning, says how much is left out, and adds the whole new
// content, so nothing that runs is hidden. A card too long for its
// platform is attached whole (bot.ApprovalCard.FullChange).
const (
	diffContext  = 3
	diffMaxLines = 1500
	diffMaxBytes = 64 << 10
	diffMaxHunks = 100
)

// maxBasisBytes bounds how much of a file Execute hashes to compare it
// with the basis. A basis comes from a read that returned the whole file,
// so a file larger than any read returns has changed.
const maxBasisBytes = 64 << 20

// errNoSuchFile is the message of cat (and of the C library) for a path
// that does not exist.
const errNoSuchFile = "No such file or directory"

// Preview implements Previewer: a write or append as a diff against the
// file's current content.
func (t *FileEditTool) Preview(ctx context.Context, a FileEditArgs, p tools.Proposal, read tools.ReadFunc) tools.Preview {
	if a.Action != FileWrite && a.Action != FileAppend {
		return tools.Preview{Details: p.Details}
	}
	raw, err := json.Marshal(FileEditArgs{Action: FileRead, Target: a.Target, Path: a.Path})
	if err != nil {
		return filePreview(a, fileState{why: "its read could not be built: " + err.Error()})
	}
	r := read(ctx, raw)
	st := fileState{at: r.At}
	if r.Refused != "" {
		st.why = "the read was refused: " + r.Refused
	} else {
		st = readFileState(r.Result.Envelope, r.At)
	}
	return filePreview(a, st)
}

// fileState is what vigil knows of a file: absent, its content, or why
// neither is known.
type fileState struct {
	at      time.Time
	absent  bool
	content string
	// why says why the content is unknown; "" when it is known.
	why string
}

// readFileState is the state of a file as a `cat path` result shows it.
func readFileState(env tools.Envelope, at time.Time) fileState {
	st := fileState{at: at}
	data, _ := env.Data.(CommandData)
	switch {
	case env.OK && data.Truncated:
		st.why = "it is larger than a read may return"
	case env.OK:
		st.content = data.Output
	case data.ExitCode > 0 && strings.Contains(data.Stderr, errNoSuchFile):
		st.absent = true
	case env.Error != nil && env.Error.Blocked:
		st.why = "the read was refused: " + env.Error.Message
	case env.Error != nil:
		st.why = "the read failed: " + env.Error.Message
	default:
		st.why = "the read returned nothing"
	}
	return st
}

// isBinary reports content a diff must not dump: NUL bytes or invalid UTF-8.
func isBinary(s string) bool { return strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) }

// filePreview is the card's change lines for a against st.
func filePreview(a FileEditArgs, st fileState) tools.Preview {
	whole := policy.ChangeDetail{Label: FileNewContentLabel, Value: a.Content}
	what := "new content"
	if a.Action == FileAppend {
		whole.Label, what = FileAppendedLabel, "appended text"
	}
	switch {
	case st.why != "":
		return tools.Preview{Details: []policy.ChangeDetail{
			{Label: FileNoDiffLabel, Value: fmt.Sprintf("the file's current content could not be read (%s), so the whole %s is shown", st.why, what)},
			whole,
		}}
	case st.absent:
		return tools.Preview{Details: []policy.ChangeDetail{{Label: FileCreateLabel, Value: a.Content}}, Basis: fileBasis(st)}
	case isBinary(st.content):
		return tools.Preview{Details: []policy.ChangeDetail{
			{Label: FileNoDiffLabel, Value: fmt.Sprintf("the file holds %s of binary content now, which is not shown; the whole %s is", tools.FormatSize(int64(len(st.content))), what)},
			whole,
		}, Basis: fileBasis(st)}
	}
	after := a.Content
	if a.Action == FileAppend {
		after = st.content + a.Content
	}
	d := unidiff.Unified(st.content, after, unidiff.Options{
		Context: diffContext, MaxLines: diffMaxLines, MaxBytes: diffMaxBytes, MaxHunks: diffMaxHunks,
		OldName: a.Path, NewName: a.Path,
	})
	if d.Equal() {
		return tools.Preview{Details: []policy.ChangeDetail{
			{Label: FileDiffLabel, Value: "none: the new content is the file's current content, byte for byte"},
		}, Basis: fileBasis(st)}
	}
	details := []policy.ChangeDetail{{Label: FileDiffLabel, Value: d.Text}}
	if d.Cut() {
		details = append(details, whole)
	}
	return tools.Preview{Details: details, Basis: fileBasis(st)}
}

// timeLayout is how a basis writes the time of its read.
const timeLayout = "2006-01-02 15:04:05 UTC"

// fileBasis is the basis line of a file read at st.at: its SHA-256, or
// that there was none.
func fileBasis(st fileState) string {
	at := st.at.UTC().Format(timeLayout)
	if st.absent {
		return fmt.Sprintf("no file (none at this path when read at %s); the change runs only if there is still none", at)
	}
	sum := sha256.Sum256([]byte(st.content))
	return fmt.Sprintf("the file as read at %s, sha256 %s; the change runs only if the file is still exactly this", at, hex.EncodeToString(sum[:]))
}

// fileDigest is a file's state as a basis records it: absent, or the
// SHA-256 of its content.
type fileDigest struct {
	absent bool
	sum    string // hex
}

// parseFileBasis reads back what fileBasis wrote.
func parseFileBasis(s string) (fileDigest, error) {
	if strings.HasPrefix(s, "no file (") {
		return fileDigest{absent: true}, nil
	}
	_, rest, ok := strings.Cut(s, ", sha256 ")
	if !ok || len(rest) < sha256.Size*2 {
		return fileDigest{}, errors.New("it names no SHA-256")
	}
	sum := rest[:sha256.Size*2]
	if _, err := hex.DecodeString(sum); err != nil || strings.ToLower(sum) != sum {
		return fileDigest{}, errors.New("its SHA-256 is not lowercase hex")
	}
	return fileDigest{sum: sum}, nil
}

// checkBasis refuses the call (a non-nil Result) unless the file is as the
// approval card showed it: the compare half of a compare-and-set, run
// immediately before the write. The file is read the way the write
// reaches it: directly on this machine, with `cat` elsewhere.
func (t *FileEditTool) checkBasis(ctx context.Context, p tools.Proposal, res inventory.Resource, a FileEditArgs) *tools.Result {
	refuse := func(msg string) *tools.Result {
		return &tools.Result{Envelope: tools.FailedWith(policy.CodeExecutionFailed, "nothing was written: "+msg,
			"read the file again and propose the change against what it holds now; the new approval card will show that diff",
			map[string]any{"file_changed": true})}
	}
	want, err := parseFileBasis(p.Basis)
	if err != nil {
		return refuse(fmt.Sprintf("the approval's record of the file it was shown against cannot be read (%v)", err))
	}
	var now fileDigest
	if res.Reach.Local {
		now, err = localDigest(a.Path)
	} else {
		now, err = t.remoteDigest(ctx, p, res, a)
	}
	if err != nil {
		return refuse(fmt.Sprintf("%s could not be checked against the file the approval card showed (%v)", a.Path, err))
	}
	if now != want {
		return refuse(fmt.Sprintf("%s changed since the approval card showed it: it was %s, and now %s", a.Path, describe(want, true), describe(now, false)))
	}
	return nil
}

// describe words a file's state for a refusal: then (was) or now (is).
func describe(d fileDigest, then bool) string {
	switch {
	case d.absent && then:
		return "absent"
	case d.absent:
		return "it exists no more"
	case d.sum == "":
		return "larger than a read returns"
	default:
		return "sha256 " + d.sum
	}
}

// localDigest is the state of path on this machine, symlinks followed as
// cat and writeLocal follow them.
func localDigest(path string) (fileDigest, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileDigest{absent: true}, nil
	}
	if err != nil {
		return fileDigest{}, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fileDigest{}, err
	} else if fi.IsDir() {
		return fileDigest{}, fmt.Errorf("%s is a directory", path)
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxBasisBytes+1))
	if err != nil {
		return fileDigest{}, fmt.Errorf("read %s: %w", path, err)
	}
	if n > maxBasisBytes {
		return fileDigest{}, nil // larger than any basis: changed
	}
	return fileDigest{sum: hex.EncodeToString(h.Sum(nil))}, nil
}

// remoteDigest is the state of a's path on res, read with cat as the
// preview read it.
func (t *FileEditTool) remoteDigest(ctx context.Context, p tools.Proposal, res inventory.Resource, a FileEditArgs) (fileDigest, error) {
	spec := specOf(p, "cat "+transport.ShellQuote(a.Path))
	spec.Write = false // it reads
	r := runCommand(ctx, t.x, res, a.Target, spec, nil)
	st := readFileState(r.Envelope, time.Time{})
	switch {
	case st.absent:
		return fileDigest{absent: true}, nil
	case r.Envelope.OK && st.why != "":
		return fileDigest{}, nil // truncated: larger than the basis's read
	case st.why != "":
		return fileDigest{}, errors.New(st.why)
	}
	sum := sha256.Sum256([]byte(st.content))
	return fileDigest{sum: hex.EncodeToString(sum[:])}, nil
}
