package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/logtest"
)

// guard bounds how long the test waits for what should happen quickly; it
// is never what the test waits for.
const guard = 30 * time.Second

// startServe runs "checkoutd serve" on an ephemeral port until the test
// ends, and returns its base URL and a function that stops it and returns
// what serve returned.
func startServe(t *testing.T, db database, extra ...string) (base string, logs *logtest.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs = &logtest.Buffer{}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--log-format", "json"}, db.flags...)
	args = append(args, extra...)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, vars{}.getenv, io.Discard, logs) }()

	stopped := false
	var serveErr error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			select {
			case serveErr = <-done:
			case <-time.After(guard):
				t.Fatalf("serve did not return after its context ended; log:\n%s", logs)
			}
		}
		return serveErr
	}
	t.Cleanup(func() { stop() })

	// The "listening" line names the address bound.
	deadline := time.Now().Add(guard)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if addr := listeningAddr(logs.String()); addr != "" {
			base = "http://" + addr
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve returned %v before listening; log:\n%s", err, logs)
		case <-time.After(delay):
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log its address; log:\n%s", logs)
		}
	}
	// It answers /healthz.
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /healthz never answered 200 (last: %v); log:\n%s", err, logs)
		}
		time.Sleep(delay)
	}
	return base, logs, stop
}

// listeningAddr finds the addr of the "listening" line in serve's JSON log.
func listeningAddr(log string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			return line.Addr
		}
	}
	return ""
}

type apiEnvelope struct {
	OK   bool `json:"ok"`
	Data struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		Title       string `json:"title"`
		Currency    string `json:"currency"`
		TotalAmount int64  `json:"total_amount"`
		CheckoutURL string `json:"checkout_url"`
		Merchant    struct {
			ID string `json:"id"`
		} `json:"merchant"`
	} `json:"data"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func call(t *testing.T, method, url, secret, body string) (int, http.Header, apiEnvelope) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var env apiEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		t.Fatalf("%s %s = %d %s: not the envelope: %v", method, url, resp.StatusCode, raw, err)
	}
	return resp.StatusCode, resp.Header, env
}

// TestServe runs the whole binary's serve command: it starts on port 0,
// serves a store and key made by the admin commands while it runs, and
// shuts down cleanly when its context ends.
func TestServe(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		base, logs, stop := startServe(t, db)

		s := createStore(t, vars{}, db.flags, "--name", "Acme Games", "--currency", "EUR")
		k := createKey(t, vars{}, db.flags, "--store", s.ID)
		checkouts := base + "/v1/stores/" + s.ID + "/checkouts"

		status, hdr, created := call(t, "POST", checkouts, k.Secret, `{"items":[{"name":"Sword","amount":1500,"quantity":2}]}`)
		if status != http.StatusCreated || !created.OK {
			t.Fatalf("POST %s = %d %+v; want 201", checkouts, status, created)
		}
		if !strings.HasPrefix(hdr.Get("Request-Id"), "req_") {
			t.Errorf("Request-Id = %q", hdr.Get("Request-Id"))
		}
		d := created.Data
		if d.Status != "open" || d.Title != "Acme Games" || d.Currency != "EUR" || d.TotalAmount != 3000 || d.Merchant.ID != s.ID {
			t.Errorf("created %+v", d)
		}
		// The payment page is on the address actually bound, not on port 0.
		if want := base + "/invoice/" + d.ID; d.CheckoutURL != want {
			t.Errorf("checkout_url = %q; want %q", d.CheckoutURL, want)
		}

		status, _, got := call(t, "GET", checkouts+"/"+d.ID, k.Secret, "")
		if status != http.StatusOK || got.Data.ID != d.ID || got.Data.Status != "open" {
			t.Errorf("GET the session = %d %+v; want 200 and the session", status, got)
		}
		status, _, got = call(t, "GET", checkouts+"/"+d.ID, "", "")
		if status != http.StatusUnauthorized || got.Error == nil || got.Error.Code != "authentication_required" {
			t.Errorf("GET without a key = %d %+v; want 401 authentication_required", status, got)
		}

		if err := stop(); err != nil {
			t.Errorf("serve returned %v after its context ended; want nil (graceful shutdown)", err)
		}
		if !strings.Contains(logs.String(), `"msg":"stopped"`) {
			t.Errorf("serve did not log that it stopped; log:\n%s", logs)
		}
		if _, err := http.Get(base + "/healthz"); err == nil {
			t.Errorf("GET /healthz after shutdown answered")
		}
	})
}

// A SQLite database is served by one process: a second serve on the same
// file refuses to start, saying why, while the first serves on and the
// commands work beside it; once the first stops, serve starts again.
// (PostgreSQL's nodes share one database: TestTwoProcessesShareDeliveries.)
func TestServeSQLiteOnce(t *testing.T) {
	db := newDatabase(t, "sqlite")
	base, _, stop := startServe(t, db)
	var stderr strings.Builder
	err := run(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0"}, db.flags...), vars{}.getenv, io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), "another checkoutd serve has this SQLite database open") {
		t.Fatalf("a second serve on the file = %v; want it refused, naming the other serve", err)
	}
	s := createStore(t, vars{}, db.flags, "--name", "Acme Games", "--currency", "EUR")
	k := createKey(t, vars{}, db.flags, "--store", s.ID)
	if status, _, _ := call(t, "POST", base+"/v1/stores/"+s.ID+"/checkouts", k.Secret, `{"items":[{"name":"Sword","amount":1500}]}`); status != http.StatusCreated {
		t.Errorf("the first serve, after the second was refused: create = %d; want 201", status)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	startServe(t, db)
}

// A request in flight when shutdown begins is answered, not cut off.
func TestServeFinishesRequestsInFlight(t *testing.T) {
	db := newDatabase(t, "sqlite")
	base, _, stop := startServe(t, db)
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	k := createKey(t, vars{}, db.flags, "--store", s.ID)

	// Send the headers and part of the body, so the request is in flight.
	// With Expect: 100-continue the client sends no body before the
	// handler asks for it, so once the first write below returns the
	// server is inside the handler, reading. A client of its own: an idle
	// keep-alive connection would be closed by the shutdown, as it should.
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: guard}}
	defer client.CloseIdleConnections()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", base+"/v1/stores/"+s.ID+"/checkouts", pr)
	req.Header.Set("Authorization", "Bearer "+k.Secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	type result struct {
		status int
		err    error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			res <- result{0, err}
			return
		}
		resp.Body.Close()
		res <- result{resp.StatusCode, nil}
	}()
	body := `{"items":[{"name":"Sword","amount":1500}]}`
	fmt.Fprint(pw, body[:10])

	stopErr := make(chan error, 1)
	go func() { stopErr <- stop() }()
	// The server stops accepting new connections; the request in flight
	// goes on. Wait until it has (GET /healthz refused), then finish it.
	deadline := time.Now().Add(guard)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Get(base + "/healthz")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("serve kept accepting connections after its context ended")
		}
		time.Sleep(delay)
	}
	fmt.Fprint(pw, body[10:])
	pw.Close()
	select {
	case r := <-res:
		if r.err != nil || r.status != http.StatusCreated {
			t.Errorf("the request in flight = %d, %v; want 201", r.status, r.err)
		}
	case <-time.After(guard):
		t.Fatal("the request in flight never finished")
	}
	if err := <-stopErr; err != nil {
		t.Errorf("serve = %v; want nil", err)
	}
}
