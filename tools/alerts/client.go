package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The Alertmanager API v2 shapes the tool reads and writes: the five
// endpoints it uses, typed here rather than through the generated OpenAPI
// client, which would bring a second HTTP stack for five calls. The real
// Alertmanager in the tests holds these types to the server's truth.

// Alert is one alert as GET /api/v2/alerts returns it.
type Alert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	UpdatedAt    time.Time         `json:"updatedAt"`
	Fingerprint  string            `json:"fingerprint"`
	GeneratorURL string            `json:"generatorURL"`
	Receivers    []struct {
		Name string `json:"name"`
	} `json:"receivers"`
	Status struct {
		State       string   `json:"state"`
		SilencedBy  []string `json:"silencedBy"`
		InhibitedBy []string `json:"inhibitedBy"`
	} `json:"status"`
}

// Group is one alert group as GET /api/v2/alerts/groups returns it.
type Group struct {
	Labels   map[string]string `json:"labels"`
	Receiver struct {
		Name string `json:"name"`
	} `json:"receiver"`
	Alerts []Alert `json:"alerts"`
}

// Silence is one silence as GET /api/v2/silences returns it.
type Silence struct {
	ID       string    `json:"id"`
	Matchers []Matcher `json:"matchers"`
	StartsAt time.Time `json:"startsAt"`
	EndsAt   time.Time `json:"endsAt"`
	// UpdatedAt is when the silence last changed.
	UpdatedAt time.Time `json:"updatedAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
	Status    struct {
		State string `json:"state"`
	} `json:"status"`
}

// NewSilence is the body of POST /api/v2/silences.
type NewSilence struct {
	Matchers  []Matcher `json:"matchers"`
	StartsAt  time.Time `json:"startsAt"`
	EndsAt    time.Time `json:"endsAt"`
	CreatedBy string    `json:"createdBy"`
	Comment   string    `json:"comment"`
}

// Client calls one Alertmanager's API v2.
type Client struct {
	base *url.URL
	http *http.Client
}

// NewClient returns a client for the Alertmanager at baseURL (its API is
// under /api/v2), using hc for every request.
func NewClient(baseURL string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("alertmanager url %q is not an http(s) URL", baseURL)
	}
	return &Client{base: u, http: hc}, nil
}

// APIError is a non-2xx answer.
type APIError struct {
	Status int
	// Message is the server's explanation (its JSON string or text body).
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("alertmanager answered %d: %s", e.Status, e.Message)
}

// maxErrorBody bounds the error text kept from a refusal.
const maxErrorBody = 2048

func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, into any) error {
	if c.base == nil || c.http == nil {
		return errors.New("alertmanager client not configured (use NewClient)")
	}
	u := *c.base
	u.Path += "/api/v2" + path
	u.RawQuery = q.Encode()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		msg := strings.TrimSpace(string(raw))
		var s string
		if json.Unmarshal(raw, &s) == nil {
			msg = s
		}
		return &APIError{Status: resp.StatusCode, Message: msg}
	}
	if into == nil {
		_, err := io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

func filterQuery(ms []Matcher) url.Values {
	q := url.Values{}
	for _, m := range ms {
		q.Add("filter", m.String())
	}
	return q
}

// Alerts lists alerts matching ms, active, silenced and inhibited alike.
func (c *Client) Alerts(ctx context.Context, ms []Matcher) ([]Alert, error) {
	q := filterQuery(ms)
	for _, k := range []string{"active", "silenced", "inhibited", "unprocessed"} {
		q.Set(k, strconv.FormatBool(true))
	}
	var out []Alert
	return out, c.do(ctx, http.MethodGet, "/alerts", q, nil, &out)
}

// Groups lists alert groups whose alerts match ms.
func (c *Client) Groups(ctx context.Context, ms []Matcher) ([]Group, error) {
	q := filterQuery(ms)
	for _, k := range []string{"active", "silenced", "inhibited"} {
		q.Set(k, "true")
	}
	var out []Group
	return out, c.do(ctx, http.MethodGet, "/alerts/groups", q, nil, &out)
}

// Silences lists silences whose matchers match ms.
func (c *Client) Silences(ctx context.Context, ms []Matcher) ([]Silence, error) {
	var out []Silence
	return out, c.do(ctx, http.MethodGet, "/silences", filterQuery(ms), nil, &out)
}

// Silence reads one silence.
func (c *Client) Silence(ctx context.Context, id string) (Silence, error) {
	var out Silence
	return out, c.do(ctx, http.MethodGet, "/silence/"+url.PathEscape(id), nil, nil, &out)
}

// CreateSilence creates a silence and returns its ID.
func (c *Client) CreateSilence(ctx context.Context, s NewSilence) (string, error) {
	var out struct {
		SilenceID string `json:"silenceID"`
	}
	if err := c.do(ctx, http.MethodPost, "/silences", nil, s, &out); err != nil {
		return "", err
	}
	if out.SilenceID == "" {
		return "", errors.New("alertmanager created a silence but returned no ID")
	}
	return out.SilenceID, nil
}

// ExpireSilence expires a silence now.
func (c *Client) ExpireSilence(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/silence/"+url.PathEscape(id), nil, nil, nil)
}
