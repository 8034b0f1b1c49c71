package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// stripe-mock is Stripe's own mock of its API: it validates each request
// against Stripe's OpenAPI document and answers a fixture, keeping and
// writing nothing. It is what a new user would hold checkoutd against, so
// the bench measures it beside bare, under the same load. It is built from
// the Go module proxy at a pinned version when first asked for, never
// vendored and never a dependency of checkoutd's module.
const (
	stripeMockModule  = "github.com/stripe/stripe-mock"
	stripeMockVersion = "v0.203.0"
)

// stripeMockKey is the key stripe-mock accepts: any test-mode secret key
// that looks like one.
const stripeMockKey = "sk_test_123"

// stripeMockCreateBody is createBody in Stripe's terms: a payment-mode
// checkout session with the same two items (one with an image), the
// customer's email, the same metadata and both URLs. Stripe has no session
// title or customer name at creation; the order number goes in
// client_reference_id.
var stripeMockCreateBody = url.Values{
	"mode":                                   {"payment"},
	"currency":                               {"usd"},
	"client_reference_id":                    {"1042"},
	"customer_email":                         {"buyer@example.com"},
	"metadata[order_id]":                     {"1042"},
	"metadata[cart]":                         {"c_9f2"},
	"success_url":                            {"https://shop.example.com/thanks"},
	"cancel_url":                             {"https://shop.example.com/cart"},
	"line_items[0][price_data][currency]":    {"usd"},
	"line_items[0][price_data][unit_amount]": {"1500"},
	"line_items[0][price_data][product_data][name]":      {"AK-47 | Redline (Field-Tested)"},
	"line_items[0][price_data][product_data][images][0]": {"https://cdn.example.com/items/ak47-redline.png"},
	"line_items[0][quantity]":                            {"2"},
	"line_items[1][price_data][currency]":                {"usd"},
	"line_items[1][price_data][unit_amount]":             {"300"},
	"line_items[1][price_data][product_data][name]":      {"Gift wrap"},
	"line_items[1][quantity]":                            {"1"},
}.Encode()

// stripeMockStartTimeout bounds how long stripe-mock may take to load its
// OpenAPI document and answer.
const stripeMockStartTimeout = 30 * time.Second

// startStripeMock runs stripe-mock (cfg.stripeMock, or the binary built
// into the cache) on loopback ports of the system's choosing and waits until
// it answers. When it cannot be built or started, the target is skipped.
func (t *target) startStripeMock(ctx context.Context, cfg *config, stderr io.Writer) error {
	bin, how := cfg.stripeMock, "given by -stripe-mock"
	if bin == "" {
		var err error
		if bin, err = buildStripeMock(ctx, stderr); err != nil {
			return skipError{fmt.Sprintf("cannot build stripe-mock %s (pass a binary with -stripe-mock PATH): %v", stripeMockVersion, err)}
		}
		how = "built by go install " + stripeMockModule + "@" + stripeMockVersion
	}
	addr, err := t.runStripeMock(ctx, bin)
	if err != nil {
		return skipError{fmt.Sprintf("cannot start stripe-mock at %s: %v", bin, err)}
	}
	t.url = "http://" + addr
	t.createURL = t.url + "/v1/checkout/sessions"
	t.secret = stripeMockKey
	t.createBody, t.createType = stripeMockCreateBody, "application/x-www-form-urlencoded"
	t.created = http.StatusOK
	t.sessionID = func(body []byte) string {
		var s struct {
			ID string `json:"id"`
		}
		json.Unmarshal(body, &s)
		return s.ID
	}
	if err := waitAnswers(ctx, t); err != nil {
		return skipError{fmt.Sprintf("stripe-mock at %s does not answer: %v", addr, err)}
	}
	t.note = fmt.Sprintf("stripe-mock: %s (%s), HTTP/1.1 at %s; validates each request against Stripe's OpenAPI document, "+
		"answers a fixture, keeps nothing; its log of each request goes to a pipe the bench discards", bin, how, addr)
	return nil
}

// stripeMockBin is where the built stripe-mock is kept, under the user's
// cache directory; the version is in the path, so that a new pin builds
// anew.
func stripeMockBin() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "checkoutd-bench", "stripe-mock-"+stripeMockVersion, "stripe-mock"), nil
}

// buildStripeMock returns the cached stripe-mock binary, building it first
// with go install when it is not there. It builds into a directory of its
// own and renames the binary into place, so that two runs building at once
// never see half a file.
func buildStripeMock(ctx context.Context, stderr io.Writer) (string, error) {
	bin, err := stripeMockBin()
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(stderr, "bench: building stripe-mock %s into %s (once; later runs use it)\n", stripeMockVersion, dir)
	cmd := exec.CommandContext(ctx, gobin, "install", stripeMockModule+"@"+stripeMockVersion)
	// Outside any module and workspace, so that neither checkoutd's go.mod
	// nor a vendor directory takes part.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s", err, lastLines(out, 5))
	}
	if err := os.Rename(filepath.Join(tmp, "stripe-mock"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// runStripeMock starts bin with its HTTP and HTTPS listeners on loopback
// ports the system picks (both: a listener left out would take its default
// port on every interface), reads the HTTP address from what it prints, and
// kills it when the target closes. Its output, a line or more per request,
// is drained and discarded from then on.
func (t *target) runStripeMock(ctx context.Context, bin string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	out, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return "", err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.onClose(func() error {
		cmd.Process.Kill()
		<-exited
		return nil
	})
	// found has the HTTP address, or is closed when the output ends (it
	// exited) without one.
	found := make(chan string, 1)
	var seen bytes.Buffer // what it printed before its address, for the error
	go func() {
		defer out.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "Listening for HTTP at address: "); ok {
				found <- strings.TrimSpace(addr)
				io.Copy(io.Discard, out)
				return
			}
			if seen.Len() < 2000 {
				seen.WriteString(sc.Text() + "\n")
			}
		}
		close(found)
	}()
	timer := time.NewTimer(stripeMockStartTimeout)
	defer timer.Stop()
	select {
	case addr, ok := <-found:
		if !ok {
			<-exited
			return "", fmt.Errorf("it exited (%v) without listening: %s", cmd.ProcessState, lastLines(seen.Bytes(), 5))
		}
		return addr, nil
	case <-timer.C:
		return "", fmt.Errorf("no HTTP address printed within %v", stripeMockStartTimeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// waitAnswers creates one session on t, retrying until it succeeds or
// stripeMockStartTimeout passes: the listener may be printed before it
// serves.
func waitAnswers(ctx context.Context, t *target) error {
	client := newClient(1)
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(stripeMockStartTimeout)
	for {
		_, err := createOne(ctx, client, t)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lastLines returns the last n lines of out, on one line.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	lines = lines[max(len(lines)-n, 0):]
	return strings.Join(lines, " / ")
}
