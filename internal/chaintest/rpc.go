package chaintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// callTimeout bounds one RPC call of a helper. Mining and wallet calls on
// regtest take milliseconds; a loaded machine may take seconds.
const callTimeout = time.Minute

// rpcClient is the helpers' own JSON-RPC client, kept apart from the
// adapters under test.
type rpcClient struct {
	url, user, password string
	http                *http.Client
}

// RPCError is an error a node answered with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// call sends one request; params is a list, or a map for named
// parameters.
func (c *rpcClient) call(ctx context.Context, path, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", c.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %.200q", method, resp.StatusCode, b)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, r.Error)
	}
	return r.Result, nil
}

// decode reads a result keeping numbers exact.
func decode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}
