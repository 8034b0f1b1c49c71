package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// setupURL finds the setup link in serve's JSON log.
func setupURL(log string) string {
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		var line struct {
			SetupURL string `json:"setup_url"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.SetupURL != "" {
			return line.SetupURL
		}
	}
	return ""
}

// Without an account, serve logs a setup link that opens the setup form;
// with one, it logs none.
func TestServeLogsSetupLink(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		base, logs, stop := startServe(t, db)
		var link string
		deadline := time.Now().Add(guard)
		for delay := time.Millisecond; link == ""; delay = min(2*delay, 100*time.Millisecond) {
			if link = setupURL(logs.String()); link == "" {
				if time.Now().After(deadline) {
					t.Fatalf("no setup link logged; log:\n%s", logs)
				}
				time.Sleep(delay)
			}
		}
		token, ok := strings.CutPrefix(link, base+"/dashboard/setup?token=")
		if !ok || len(token) != 43 {
			t.Fatalf("setup link %q; want %s/dashboard/setup?token= and 43 characters", link, base)
		}
		if n := strings.Count(logs.String(), token); n != 1 {
			t.Errorf("the setup token appears %d times in the log; want once", n)
		}
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Create the first account") {
			t.Errorf("GET the setup link = %d: %s", resp.StatusCode, body)
		}
		if strings.Count(logs.String(), token) != 1 {
			t.Error("opening the setup link wrote its token to the log")
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}

		if _, errOut, err := cliIn(t, vars{}, testPassword+"\n", append([]string{"accounts", "create", "--email", "ann@example.com", "--password-stdin"}, db.flags...)...); err != nil {
			t.Fatalf("accounts create: %v %s", err, errOut)
		}
		_, logs, stop = startServe(t, db)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(logs.String(), "setup") {
			t.Errorf("serve with an account logged a setup link:\n%s", logs)
		}
	})
}
