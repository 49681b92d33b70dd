package plugin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigilops/vigil/policy"
	"github.com/vigilops/vigil/tools"
)

// startHTTPServer runs the echo server process serving streamable HTTP on
// a free loopback port and returns its MCP endpoint.
func startHTTPServer(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(echoServer, "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("echo server did not print its URL: %v", err)
	}
	return strings.TrimSpace(line)
}

// A plugin reached over streamable HTTP offers the same tools as over
// stdio, with the same rule: only read_only_tools are reads, whatever the
// server's readOnlyHint says; calls work and a too-large reply is refused.
func TestStreamableHTTPPlugin(t *testing.T) {
	endpoint := startHTTPServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	p, err := Connect(ctx, Config{Name: "remote", URL: endpoint, ReadOnlyTools: []string{"echo"}}, nil)
	if err != nil {
		t.Fatalf("Connect over HTTP: %v", err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	reg, err := tools.NewRegistry(p.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	var reads []string
	for _, tl := range p.Tools() {
		args := `{"text":"x"}`
		if tl.Spec().Name == "remote_write_file" {
			args = `{"path":"/nonexistent/x","text":"x"}`
		}
		prop, b := reg.Propose(tl.Spec().Name, []byte(args))
		if b != nil {
			t.Fatalf("%s: %v", tl.Spec().Name, b)
		}
		if prop.Kind == policy.KindRead {
			reads = append(reads, tl.Spec().Name)
		}
	}
	if fmt.Sprint(reads) != "[remote_echo]" {
		t.Errorf("reads over HTTP = %v, want [remote_echo] (readOnlyHint must not count)", reads)
	}
	var echo tools.Tool
	for _, tl := range p.Tools() {
		if tl.Spec().Name == "remote_echo" {
			echo = tl
		}
	}
	prop, b := echo.Propose([]byte(`{"text":"over http"}`))
	if b != nil {
		t.Fatal(b)
	}
	env := echo.Execute(t.Context(), prop).Envelope
	if !env.OK || !strings.Contains(fmt.Sprint(env.Data), "over http") {
		t.Fatalf("echo over HTTP: %s", env.JSON())
	}
	// A reply over the frame limit (1 MiB by default; huge sends 17 MiB)
	// is not read whole.
	for _, tl := range p.Tools() {
		if tl.Spec().Name != "remote_huge" {
			continue
		}
		prop, b := tl.Propose([]byte(`{}`))
		if b != nil {
			t.Fatal(b)
		}
		if env := tl.Execute(t.Context(), prop).Envelope; env.OK || env.Error.Code != policy.CodeExecutionFailed {
			t.Fatalf("17 MiB reply over HTTP: %.300s", env.JSON())
		}
	}
}

func TestStreamableHTTPConfigErrors(t *testing.T) {
	for cfg, want := range map[*Config]string{
		{Name: "x", URL: "ftp://h/mcp"}:                    "http:// or https://",
		{Name: "x", URL: "http://u:pw@h/mcp"}:              "without credentials",
		{Name: "x", Command: "/bin/true", URL: "http://h"}: "both set",
		{Name: "x"}: "or url",
	} {
		_, err := Connect(t.Context(), *cfg, nil)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", *cfg, err, want)
		}
	}
	// Nothing listening: the error names the plugin and the URL.
	_, err := Connect(t.Context(), Config{Name: "gone", URL: "http://127.0.0.1:1/mcp", Timeout: 5 * time.Second}, nil)
	if err == nil || !strings.Contains(err.Error(), "plugin gone") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("unreachable plugin: %v", err)
	}
}
