package jsonrpc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/chain/jsonrpc"
)

func TestCall(t *testing.T) {
	var gotAuth, gotPath string
	var gotBody map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath = r.URL.Path
		u, p, _ := r.BasicAuth()
		gotAuth = u + ":" + p
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &gotBody)
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"amount":0.00012345,"big":123456789012345678901234567890}}`)
	}))
	defer srv.Close()
	c, err := jsonrpc.New(srv.URL, "user", "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Amount json.Number `json:"amount"`
		Big    json.Number `json:"big"`
	}
	if err := c.Call(context.Background(), "/wallet/w", "m", []any{1, "x"}, &r); err != nil {
		t.Fatal(err)
	}
	if r.Amount != "0.00012345" || r.Big != "123456789012345678901234567890" {
		t.Errorf("numbers = %s, %s; want them as written", r.Amount, r.Big)
	}
	if gotAuth != "user:pw" || gotPath != "/wallet/w" || gotBody["method"] != "m" || gotBody["jsonrpc"] != "2.0" {
		t.Errorf("request: auth %q path %q body %v", gotAuth, gotPath, gotBody)
	}
}

func TestErrors(t *testing.T) {
	const secret = "pw-SECRET-123"
	tests := []struct {
		name, body string
		status     int
		want       string
		code       int
	}{
		{"unauthorized", "", 401, "refused the credentials", 0},
		{"rpc error", `{"result":null,"error":{"code":-5,"message":"Block not found"},"id":1}`, 500, "node error -5: Block not found", -5},
		{"not json-rpc", `<html>hello</html>`, 200, "without JSON-RPC", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			c, err := jsonrpc.New(srv.URL+"/key/"+secret, "u", secret, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Call(context.Background(), "", "m", nil, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), secret) {
				t.Errorf("Call = %v; want %q, without the secret", err, tt.want)
			}
			if tt.code != 0 && !jsonrpc.IsCode(err, tt.code) {
				t.Errorf("IsCode(%v, %d) = false", err, tt.code)
			}
		})
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8332", "ftp://h/", "http://u:SECRET@h:1/", "http://%zz/SECRET"} {
		_, err := jsonrpc.New(u, "", "", nil)
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("New(%q) = %v; want an error without the URL", u, err)
		}
	}
}
