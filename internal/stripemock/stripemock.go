// Package stripemock builds and runs stripe-mock, Stripe's own mock of its
// API, for the benchmark (which measures checkoutd beside it) and for the
// tests of the Stripe connector (which send it every request the connector
// makes). stripe-mock validates each request against Stripe's OpenAPI
// document and answers a fixture, keeping and writing nothing.
//
// It is built from the Go module proxy at a pinned version when first
// asked for, into the user's cache directory, never vendored and never a
// dependency of checkoutd's module.
package stripemock

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The pinned stripe-mock.
const (
	Module  = "github.com/stripe/stripe-mock"
	Version = "v0.203.0"
)

// Key is a key stripe-mock accepts: any test-mode secret key that looks
// like one.
const Key = "sk_test_123"

// StartTimeout bounds how long stripe-mock may take to load its OpenAPI
// document and print its address.
const StartTimeout = 30 * time.Second

// Bin is where the built stripe-mock is kept, under the user's cache
// directory; the version is in the path, so that a new pin builds anew.
func Bin() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "checkoutd", "stripe-mock-"+Version, "stripe-mock"), nil
}

// Build returns the cached stripe-mock binary, building it first with go
// install when it is not there, and saying so on log. It builds into a
// directory of its own and renames the binary into place, so that two
// runs building at once never see half a file.
func Build(ctx context.Context, log io.Writer) (string, error) {
	bin, err := Bin()
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
	fmt.Fprintf(log, "building stripe-mock %s into %s (once; later runs use it)\n", Version, dir)
	cmd := exec.CommandContext(ctx, gobin, "install", Module+"@"+Version)
	// Outside any module and workspace, so that neither checkoutd's go.mod
	// nor a vendor directory takes part.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s", err, LastLines(out, 5))
	}
	if err := os.Rename(filepath.Join(tmp, "stripe-mock"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// Server is a running stripe-mock.
type Server struct {
	// Addr is its HTTP address (host:port), URL its base URL.
	Addr, URL string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// Start runs bin with its HTTP and HTTPS listeners on loopback ports the
// system picks (both: a listener left out would take its default port on
// every interface), and reads the HTTP address from what it prints. Its
// output, a line or more per request, is drained and discarded from then
// on. Close stops it.
func Start(ctx context.Context, bin string) (*Server, error) {
	cmd := exec.CommandContext(ctx, bin, "-http-addr", "127.0.0.1:0", "-https-addr", "127.0.0.1:0")
	out, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return nil, err
	}
	s := &Server{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
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
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case addr, ok := <-found:
		if !ok {
			<-s.exited
			return nil, fmt.Errorf("it exited (%v) without listening: %s", cmd.ProcessState, LastLines(seen.Bytes(), 5))
		}
		s.Addr, s.URL = addr, "http://"+addr
		return s, nil
	case <-timer.C:
		err = fmt.Errorf("no HTTP address printed within %v", StartTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.Close()
	return nil, err
}

// Close stops stripe-mock and waits for it to exit.
func (s *Server) Close() error {
	s.cmd.Process.Kill()
	<-s.exited
	return nil
}

// LastLines returns the last n lines of out, on one line.
func LastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	lines = lines[max(len(lines)-n, 0):]
	return strings.Join(lines, " / ")
}
