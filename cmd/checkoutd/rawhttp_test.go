package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/openapi"
)

// rawExchange sends raw bytes to addr over a new TCP connection and reads
// one HTTP response. The request is written while the response is read: the
// server may answer (and close) before it has read all of a huge request.
func rawExchange(t *testing.T, addr, raw string) *http.Response {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, guard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(guard))
	go io.WriteString(conn, raw) // an error shows as no response
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to %q: %v", short(raw), err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil && len(body) == 0 {
		t.Fatalf("response to %q: reading the body: %v", short(raw), err)
	}
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	return resp
}

func short(s string) string {
	if len(s) > 80 {
		return s[:60] + "..."
	}
	return s
}

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{32}$`)

// Go's HTTP server answers a few malformed requests itself, before any
// handler runs: those answers are plain text without Request-Id, as
// docs/api.md and the OpenAPI document say. Every request that reaches a
// handler, however wrong, is answered in the envelope with a Request-Id.
// The requests go over raw TCP to checkoutd serve, with its real
// http.Server settings (64 KiB of headers, which Go stretches by 4 KiB).
func TestServeAnswersBeforeAnyHandlerArePlainText(t *testing.T) {
	db := newDatabase(t, "sqlite")
	base, _, _ := startServe(t, db)
	addr := strings.TrimPrefix(base, "http://")
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	k := createKey(t, vars{}, db.flags, "--store", s.ID)
	checkouts := "/v1/stores/" + s.ID + "/checkouts"
	auth := "Authorization: Bearer " + k.Secret + "\r\n"

	plain := []struct {
		name   string
		raw    string
		status int
	}{
		{"headers over 68 KiB", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 69<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"a request line over 68 KiB", "GET /healthz?" + strings.Repeat("a", 69<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"a malformed request line", "GARBAGE\r\n\r\n", http.StatusBadRequest},
		{"a malformed HTTP version", "GET /healthz HTTP/x\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"two Host headers", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", http.StatusBadRequest},
		{"no Host in HTTP/1.1", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		{"a malformed header line", "GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", http.StatusBadRequest},
		{"a malformed percent-escape in the path", "GET /v1/%zz HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"a malformed Content-Length", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", http.StatusBadRequest},
		{"an unsupported HTTP version", "GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported},
		{"an unsupported transfer coding", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented},
		{"an unknown expectation", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\n" + auth + "Expect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", http.StatusExpectationFailed},
	}
	for _, c := range plain {
		t.Run(c.name, func(t *testing.T) {
			resp := rawExchange(t, addr, c.raw)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status {
				t.Errorf("status %d %q; want %d", resp.StatusCode, body, c.status)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") && len(body) > 0 {
				t.Errorf("Content-Type %q; Go's server answers in plain text", ct)
			}
			if id := resp.Header.Get("Request-Id"); id != "" {
				t.Errorf("Request-Id %q: a handler answered; this list is of what Go's server answers itself", id)
			}
			if json.Valid(body) && len(body) > 0 {
				t.Errorf("body %q is JSON; want Go's plain text", body)
			}
		})
	}

	// docs/api.md and the OpenAPI document's description name every status
	// Go's server answers itself.
	var doc struct {
		Info struct {
			Description string `json:"description"`
		} `json:"info"`
	}
	if err := json.Unmarshal(openapi.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	apiDoc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plain {
		n := strconv.Itoa(c.status)
		if !strings.Contains(doc.Info.Description, "`"+n+"`") {
			t.Errorf("the OpenAPI document's description does not name %s (%s), which Go's server answers itself", n, c.name)
		}
		if !strings.Contains(string(apiDoc), "`"+n+"`") {
			t.Errorf("docs/api.md does not name %s (%s), which Go's server answers itself", n, c.name)
		}
	}

	enveloped := []struct {
		name   string
		raw    string
		status int
		code   string
	}{
		{"no such route", "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound, "not_found"},
		{"another method", "DELETE " + checkouts + " HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusMethodNotAllowed, "method_not_allowed"},
		{"no credentials", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", http.StatusUnauthorized, "authentication_required"},
		{"a body over 64 KiB", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 70000\r\n\r\n" + strings.Repeat(" ", 70000), http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"a chunked body over 64 KiB", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n11170\r\n" + strings.Repeat(" ", 70000) + "\r\n0\r\n\r\n", http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"bad JSON", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Type: application/json\r\nContent-Length: 6\r\n\r\n{\"a\":}", http.StatusBadRequest, "invalid_json"},
		{"no content type", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 2\r\n\r\n{}", http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"a malformed store id", "GET /v1/stores/acme/checkouts/cs_0 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", http.StatusBadRequest, "validation_failed"},
		{"headers just under 64 KiB", "GET /v1/nope HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 60<<10) + "\r\n\r\n", http.StatusNotFound, "not_found"},
		{"headers of 66 KiB (Go allows 4 KiB beyond the limit)", "GET /v1/nope HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 66<<10) + "\r\n\r\n", http.StatusNotFound, "not_found"},
		{"HTTP/1.0 without Host", "GET /v1/nope HTTP/1.0\r\n\r\n", http.StatusNotFound, "not_found"},
		{"an absolute URI", "GET http://x/v1/nope HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusNotFound, "not_found"},
		{"Expect: 100-continue", "POST " + checkouts + " HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", http.StatusUnauthorized, "authentication_required"},
	}
	for _, c := range enveloped {
		t.Run(c.name, func(t *testing.T) {
			resp := rawExchange(t, addr, c.raw)
			body, _ := io.ReadAll(resp.Body)
			var env struct {
				OK    *bool `json:"ok"`
				Error *struct {
					Code      string `json:"code"`
					RequestID string `json:"request_id"`
				} `json:"error"`
			}
			if resp.StatusCode != c.status {
				t.Errorf("status %d %q; want %d", resp.StatusCode, body, c.status)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q; want application/json", ct)
			}
			id := resp.Header.Get("Request-Id")
			if !requestIDPattern.MatchString(id) {
				t.Errorf("Request-Id %q; want req_ and 32 hex", id)
			}
			if err := json.Unmarshal(body, &env); err != nil || env.OK == nil || *env.OK || env.Error == nil {
				t.Fatalf("body %q; want the error envelope", body)
			}
			if env.Error.Code != c.code || env.Error.RequestID != id {
				t.Errorf("error %+v; want code %s and request_id %s", *env.Error, c.code, id)
			}
		})
	}
}
