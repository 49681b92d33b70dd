package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
	"github.com/vigilops/vigil/tools/inventory"
	"github.com/vigilops/vigil/tools/transport"
)

// FileEditAction is the file_edit tool's action.
type FileEditAction string

const (
	FileRead   FileEditAction = "read"
	FileWrite  FileEditAction = "write"
	FileAppend FileEditAction = "append"
)

func (FileEditAction) EnumValues() []string { return []string{"read", "write", "append"} }

// maxFileContent bounds what one write or append may carry.
const maxFileContent = 1 << 20

// FileEditArgs are the file_edit tool's arguments (SPEC T2).
type FileEditArgs struct {
	Action  FileEditAction `json:"action" jsonschema:"read: print the whole file (up to the output cap). write: replace the file's content with content (created if missing; mode and owner kept). append: add content to the end of the file (created if missing)."`
	Target  string         `json:"target" jsonschema:"the resource holding the file: its inventory name, alias or ID (the container or guest where the application runs, not its host)"`
	Path    string         `json:"path" jsonschema:"absolute path of the file"`
	Content string         `json:"content,omitempty" jsonschema:"write and append: the text to write, exactly (include the final newline); at most 1 MiB"`
}

func (a *FileEditArgs) Validate() error {
	if err := checkTarget("target", a.Target); err != nil {
		return err
	}
	if err := checkPath("path", a.Path); err != nil {
		return err
	}
	if strings.HasSuffix(a.Path, "/") {
		return tools.FieldErrorf("path", "names a directory; give a file")
	}
	switch a.Action {
	case FileRead:
		return tools.NotUsed("content", string(a.Action), a.Content != "")
	case FileWrite, FileAppend:
		if a.Content == "" {
			return tools.FieldErrorf("content", "required for action %s", a.Action)
		}
		if len(a.Content) > maxFileContent {
			return tools.FieldErrorf("content", "is %d bytes; the limit is %d", len(a.Content), maxFileContent)
		}
		if strings.IndexByte(a.Content, 0) >= 0 {
			return tools.FieldErrorf("content", "must be text (no NUL bytes)")
		}
	}
	return nil
}

// FileEditTool is the `file_edit` tool: read is a read, write and append are
// writes. Content never passes through a shell: on the local machine the
// file is written directly (write goes through a temporary file and a rename,
// keeping mode and owner); elsewhere the content is sent on stdin to
// `cat > path` with the path quoted.
type FileEditTool struct {
	inv  *inventory.Inventory
	x    transport.Executor
	spec tools.Spec
}

var _ tools.ToolOf[FileEditArgs] = (*FileEditTool)(nil)

// NewFileEditTool returns the file_edit tool over inv, running commands with x.
func NewFileEditTool(inv *inventory.Inventory, x transport.Executor) tools.Tool {
	return tools.Typed[FileEditArgs](&FileEditTool{inv: inv, x: x, spec: fileEditToolSpec()})
}

func (t *FileEditTool) Spec() tools.Spec { return t.spec }

// fileEditToolSpec describes the tool; its schema is derived once, when the tool
// is built.
func fileEditToolSpec() tools.Spec {
	return tools.Spec{
		Name: "file_edit",
		Description: "Read a whole file, or replace or append to its content, on a resource. Reading is a read; write and " +
			"append are writes that may need approval and must be verified afterwards (read the file back). Target the " +
			"resource where the file lives: for an application in a container, the container, not its host.",
		Kinds: policy.ActionKinds{Actions: map[string]policy.Kind{
			string(FileRead): policy.KindRead, string(FileWrite): policy.KindWrite, string(FileAppend): policy.KindWrite,
		}},
	}
}

func (t *FileEditTool) Plan(a FileEditArgs) (tools.Proposal, *policy.Block) {
	p := tools.Proposal{
		Action: policy.Action{Tool: "file_edit", Name: string(a.Action), Target: a.Target, Path: a.Path},
	}
	res, b := t.inv.ResolveTarget("target", a.Target)
	if b != nil {
		return p, b
	}
	p.Command, p.Summary, p.Dialect = fileEditCommand(a), fileEditSummary(a, res), res.ShellOrDefault()
	p.Details = fileEditDetails(a)
	return p, nil
}

// Labels of a file_edit card's change lines.
const (
	FileNewContentLabel = "new content (replaces the whole file, or creates it)"
	FileAppendedLabel   = "appended text"
)

// fileEditDetails is what a write or append shows before its file is
// read: the exact bytes the call carries (the whole new content, or the
// text appended), which the approval's call hash binds. When the call
// stops for approval, Preview replaces them with the change against the
// file as it is then.
func fileEditDetails(a FileEditArgs) []policy.ChangeDetail {
	switch a.Action {
	case FileWrite:
		return []policy.ChangeDetail{{Label: FileNewContentLabel, Value: a.Content}}
	case FileAppend:
		return []policy.ChangeDetail{{Label: FileAppendedLabel, Value: a.Content}}
	}
	return nil
}

// fileEditCommand is the proposal's command: the exact command for read, and
// a readable statement for write and append, whose content goes on stdin.
func fileEditCommand(a FileEditArgs) string {
	switch a.Action {
	case FileWrite:
		return fmt.Sprintf("write %d bytes to %s", len(a.Content), a.Path)
	case FileAppend:
		return fmt.Sprintf("append %d bytes to %s", len(a.Content), a.Path)
	default:
		return "cat " + transport.ShellQuote(a.Path)
	}
}

func fileEditSummary(a FileEditArgs, res inventory.Resource) string {
	switch a.Action {
	case FileWrite:
		return fmt.Sprintf("replace %s on %s with %d bytes", a.Path, res.Name, len(a.Content))
	case FileAppend:
		return fmt.Sprintf("append %d bytes to %s on %s", len(a.Content), a.Path, res.Name)
	default:
		return fmt.Sprintf("read %s on %s", a.Path, res.Name)
	}
}

// FileEditData is the envelope data of a write or append.
type FileEditData struct {
	Target  string `json:"target"`
	Path    string `json:"path"`
	Action  string `json:"action"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created,omitempty"`
}

func (t *FileEditTool) Run(ctx context.Context, a FileEditArgs, p tools.Proposal) tools.Result {
	if fileEditCommand(a) != p.Command {
		return tools.BadProposal("file_edit", p, "command differs from the one the arguments produce")
	}
	res, b := t.inv.ResolveTarget("target", a.Target)
	if b != nil {
		return tools.Result{Envelope: tools.Blocked(b)}
	}
	if a.Action == FileRead {
		return runCommand(ctx, t.x, res, a.Target, specOf(p, p.Command), nil)
	}
	if p.Basis != "" {
		// Approved against the file as its card showed it: only that file.
		if r := t.checkBasis(ctx, p, res, a); r != nil {
			return *r
		}
	}
	data := FileEditData{Target: a.Target, Path: a.Path, Action: string(a.Action), Bytes: len(a.Content)}
	if res.Reach.Local {
		created, err := writeLocal(ctx, a.Path, a.Content, a.Action == FileAppend)
		if err != nil {
			return tools.Result{Envelope: execFailed(data, err)}
		}
		data.Created = created
		return tools.Result{Envelope: tools.OK(data)}
	}
	op := " > "
	if a.Action == FileAppend {
		op = " >> "
	}
	r := runCommand(ctx, t.x, res, a.Target, specOf(p, "cat"+op+transport.ShellQuote(a.Path)), strings.NewReader(a.Content))
	if r.Envelope.OK {
		r.Envelope.Data = data
	}
	return r
}

// writeLocal writes or appends content to path on this machine. A write
// replaces the file atomically (temporary file in the same directory, then
// rename) and keeps an existing file's mode and, where permitted, owner; a
// symlink is followed, so the link stays a link. It reports whether the file
// was created.
func writeLocal(ctx context.Context, path, content string, appendMode bool) (created bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		created = true
	case err != nil:
		return false, fmt.Errorf("stat %s: %w", path, err)
	case fi.IsDir():
		return false, fmt.Errorf("%s is a directory", path)
	}

	if appendMode {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return false, fmt.Errorf("open %s: %w", path, err)
		}
		if _, err := f.WriteString(content); err != nil {
			f.Close()
			return false, fmt.Errorf("append to %s: %w", path, err)
		}
		return created, f.Close()
	}

	mode := fs.FileMode(0o644)
	if fi != nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".vigil-*")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.WriteString(content); err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if fi != nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			_ = os.Chown(tmp.Name(), int(st.Uid), int(st.Gid)) // only root may give files away
		}
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replace %s: %w", path, err)
	}
	return created, nil
}
