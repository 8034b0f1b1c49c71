package server_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// Stoplight Prism, as a proxy in front of checkoutd with the served document,
// reports a request that breaks a text pattern and lives on. Prism puts each
// violation's message, pattern included, in its sl-violations response header,
// and Node refuses a character beyond ASCII there: with U+3000 and its kin
// written raw in the patterns, Prism 5.14 died on the first such request.
// Without --errors, Prism forwards the request, answers with the server's
// answer and adds the header, the way that crashed. The test runs when
// CHECKOUTD_TEST_PRISM names a prism command
// (npm install @stoplight/prism-cli@5.14.2; node_modules/.bin/prism).
func TestOpenAPIPrismProxyReportsPatternViolations(t *testing.T) {
	prism := os.Getenv("CHECKOUTD_TEST_PRISM")
	if prism == "" {
		t.Skip("CHECKOUTD_TEST_PRISM is not set: the path of Stoplight Prism's prism command runs this test")
	}
	h := newHarness(t, storetest.Open(t, "sqlite"))
	doc := h.do(request{method: "GET", path: "/v1/openapi.json"})
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, doc.Body, 0o644); err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	var out logtest.Buffer
	cmd := exec.Command(prism, "proxy", file, h.srv.URL, "--host", "127.0.0.1", "--port", port)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	alive := func() bool {
		select {
		case err := <-exited:
			exited <- err
			return false
		default:
			return true
		}
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if !alive() || time.Now().After(deadline) {
			t.Fatalf("prism proxy does not listen on %s:\n%s", addr, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	post := func(body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("POST", "http://"+addr+"/v1/stores/"+h.store.ID+"/checkouts", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s through prism: %v\nprism's output:\n%s", short(body), err, out.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	for _, c := range []struct {
		name, body, location string
	}{
		{"items[].name with NUL", withItems(`{"name":"Sw\u0000ord","amount":1500}`), `["request","body","items","0","name"]`},
		{"items[].name white space only", withItems(`{"name":" \u3000 ","amount":1500}`), `["request","body","items","0","name"]`},
		{"title with a tab inside", with(`"title":"A\tB"`), `["request","body","title"]`},
		{"title white space only", with(`"title":"\u2028\u2029"`), `["request","body","title"]`},
		{"description with U+0001", with(`"description":"a\u0001b"`), `["request","body","description"]`},
		{"description white space only", with(`"description":"\u1680\u200a"`), `["request","body","description"]`},
		{"customer.name with DEL", with(`"customer":{"name":"A\u007fda"}`), `["request","body","customer","name"]`},
		{"customer.name white space only", with(`"customer":{"name":"\u205f"}`), `["request","body","customer","name"]`},
	} {
		resp, body := post(c.body)
		violations := resp.Header.Get("Sl-Violations")
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"validation_failed"`) {
			t.Errorf("%s: prism answers %d %s; want the server's 400 validation_failed", c.name, resp.StatusCode, short(body))
		}
		if !strings.Contains(violations, `"location":`+c.location) || !strings.Contains(violations, `"code":"pattern"`) {
			t.Errorf("%s: sl-violations = %s; want a pattern violation at %s", c.name, short(violations), c.location)
		}
		if !alive() {
			t.Fatalf("%s: prism died:\n%s", c.name, out.String())
		}
	}

	// Text padded with white space keeps to the pattern, and passes.
	resp, body := post(withItems(`{"name":"\u3000Sword\u3000","amount":1500}`))
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Sl-Violations") != "" {
		t.Errorf("a name padded with U+3000: prism answers %d %s (sl-violations %s); want 201 without violations",
			resp.StatusCode, short(body), resp.Header.Get("Sl-Violations"))
	}
}
