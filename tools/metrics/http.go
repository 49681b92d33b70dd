package metrics

import (
	"fmt"
	"io"
	"net/http"

	promconfig "github.com/prometheus/common/config"
)

// MaxBody bounds a datasource response vigil reads: a summary is made from
// it, and a server that answers with more is cut off rather than exhaust
// memory.
const MaxBody = 32 << 20

// ErrTooLarge is returned by a read past MaxBody.
var ErrTooLarge = fmt.Errorf("response larger than %d MiB", MaxBody>>20)

// NewHTTPClient builds a datasource's client from prometheus/common's
// HTTPClientConfig (authentication, TLS and client certificates, proxy,
// headers such as X-Scope-OrgID, as Prometheus builds its own) and bounds
// every response body to MaxBody. vigil builds its Alertmanager client
// with it too.
func NewHTTPClient(cfg promconfig.HTTPClientConfig, name string) (*http.Client, error) {
	hc, err := promconfig.NewClientFromConfig(cfg, name, promconfig.WithUserAgent("vigil"))
	if err != nil {
		return nil, err
	}
	hc.Transport = &boundedBody{next: hc.Transport}
	return hc, nil
}

// boundedBody fails a read past MaxBody instead of returning a silently
// cut document.
type boundedBody struct{ next http.RoundTripper }

func (b *boundedBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{r: io.LimitReader(resp.Body, MaxBody+1), c: resp.Body}
	return resp, nil
}

type limitedBody struct {
	r io.Reader
	c io.Closer
	n int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if b.n > MaxBody {
		return n, ErrTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.c.Close() }
