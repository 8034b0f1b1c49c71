package chaintest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv names the variable that makes a missing node program fail the
// tests instead of skipping them (set in CI).
const RequireEnv = "CHECKOUTD_TEST_REQUIRE_CHAINS"

// StartTimeout bounds a node's start, until its RPC answers.
const StartTimeout = 2 * time.Minute

// missing skips t, or fails it under CHECKOUTD_TEST_REQUIRE_CHAINS=1,
// because a node program is not installed.
func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + " (required: " + RequireEnv + "=1)")
	}
	t.Skip(msg)
}

// lookPath returns the program env names, or the first of names found on
// PATH or as a file.
func lookPath(env string, names ...string) (string, error) {
	if p := os.Getenv(env); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w", env, p, err)
		}
		return path, nil
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a node process, in a process group of its own so that a kill
// reaches any children (ganache runs under node).
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process exited
	err  error         // its exit status, once done is closed
}

func startProc(name, path string, args []string, logPath string) (*proc, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to end.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// kill ends the process group at once and waits for the process.
func (p *proc) kill() {
	if p.exited() {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// tail returns the end of the process's output, for failure messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// tempDir makes a directory removed when t ends, after the node stopped
// (cleanups run last-in first-out, so it is registered first).
func tempDir(t testing.TB, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Clean(dir)
}

// waitUntil polls ready until it returns nil, p exits, or the deadline.
func waitUntil(p *proc, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ready()
		if err == nil {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s exited (%v): %s", p.name, p.err, p.tail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v: %v; output: %s", p.name, timeout, err, p.tail())
		}
		select {
		case <-tick.C:
		case <-p.done:
		}
	}
}
