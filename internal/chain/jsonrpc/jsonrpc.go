package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
)

// maxResponse bounds a response body: a block with its transactions is a
// few megabytes.
const maxResponse = 64 << 20

// Client calls one node.
type Client struct {
	url      string
	node     string // scheme://host, what errors call the node
	user     string
	password string
	http     *http.Client
	id       atomic.Int64
}

// New returns a client of the node at rawURL. user and password, when
// user is not empty, go in HTTP basic authentication. httpClient may be
// nil for http.DefaultClient; its timeout, or the context's deadline,
// bounds each call.
func New(rawURL, user, password string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The parse error would quote the URL, which may hold a key.
		return nil, errors.New("node URL must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, errors.New("node URL must not hold a user or password: configure them apart")
	}
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{url: rawURL, node: u.Scheme + "://" + u.Host, user: user, password: password, http: httpClient}, nil
}

// Node names the node in messages: its scheme and host, nothing secret.
func (c *Client) Node() string { return c.node }

// Error is an error a node answered a call with.
type Error struct {
	Method  string
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: node error %d: %s", e.Method, e.Code, e.Message)
}

// IsCode reports whether err is an Error with the given code.
func IsCode(err error, code int) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Call calls method at path (appended to the node's URL; "" for none)
// with params (a list, or a map of named parameters; nil for none) and
// decodes the result into result (nil to ignore it).
func (c *Client) Call(ctx context.Context, path, method string, params, result any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", c.id.Add(1), method, params})
	if err != nil {
		return fmt.Errorf("%s: encode the request: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: make the request to %s", method, c.node)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// A *url.Error quotes the whole URL; keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%s: node at %s unreachable: %w", method, c.node, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("%s: read the answer of %s: %w", method, c.node, err)
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("%s: node at %s refused the credentials (HTTP %d): check the RPC user and password", method, c.node, resp.StatusCode)
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: node at %s answered HTTP %d without JSON-RPC: is the URL the node's RPC address?", method, c.node, resp.StatusCode)
	}
	if r.Error != nil {
		return &Error{Method: method, Code: r.Error.Code, Message: r.Error.Message}
	}
	if result == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(r.Result))
	d.UseNumber()
	if err := d.Decode(result); err != nil {
		return fmt.Errorf("%s: decode the answer of %s: %w", method, c.node, err)
	}
	return nil
}
