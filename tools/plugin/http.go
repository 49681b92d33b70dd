package plugin

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectHTTP reaches a running MCP server over streamable HTTP. The
// read-only rules are the same as for a started one: only the tools in
// ReadOnlyTools are reads. Every response body is bounded by the frame
// limit, as stdio frames are; the standalone event stream is not opened,
// so the server speaks only in answer to vigil's requests.
func connectHTTP(ctx context.Context, cfg Config, log *slog.Logger) (*Plugin, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("%w: plugin %s: url must be an http:// or https:// URL without credentials", ErrInvalidConfig, cfg.Name)
	}
	limit := frameLimit(cfg.MaxResponse)
	base := http.DefaultTransport.(*http.Transport).Clone()
	transport := &mcp.StreamableClientTransport{
		Endpoint:             cfg.URL,
		HTTPClient:           &http.Client{Transport: boundedBody{next: base, limit: int64(limit)}},
		DisableStandaloneSSE: true,
		MaxEventSize:         limit,
		MaxRetries:           -1,
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "vigil", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: connect to %s: %w", cfg.Name, u.Redacted(), err)
	}
	return start(ctx, &Plugin{cfg: cfg, session: session, log: log, exited: make(chan struct{})})
}

// boundedBody fails a response body read past limit.
type boundedBody struct {
	next  http.RoundTripper
	limit int64
}

func (b boundedBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{r: io.LimitReader(resp.Body, b.limit+1), c: resp.Body, limit: b.limit}
	return resp, nil
}

type limitedBody struct {
	r     io.Reader
	c     io.Closer
	n     int64
	limit int64
}

func (l *limitedBody) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		return n, fmt.Errorf("plugin reply larger than %d bytes (16 × plugins[].max_response, at least 1 MiB)", l.limit)
	}
	return n, err
}

func (l *limitedBody) Close() error { return l.c.Close() }
