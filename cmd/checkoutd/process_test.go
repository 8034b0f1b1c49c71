package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/webhook/webhooktest"
)

// These tests run the real checkoutd binary as separate processes: killed
// with SIGKILL, stopped with SIGTERM, two of them on one database.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds checkoutd once per test run.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "checkoutd-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "checkoutd")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("build checkoutd: %v\n%s", binErr, binPath)
	}
	return binPath
}

// proc is a running checkoutd serve.
type proc struct {
	cmd  *exec.Cmd
	addr string
	log  *logtest.Buffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// wait waits for the process to exit and returns its exit status.
func (p *proc) wait() error {
	<-p.done
	return p.err
}

var listeningLine = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startProcess starts checkoutd serve with args and waits until it listens.
func startProcess(t *testing.T, args ...string) *proc {
	t.Helper()
	return startProcessEnv(t, nil, args...)
}

// startProcessEnv starts checkoutd serve with args and the environment
// variables env (NAME=value) and waits until it listens.
func startProcessEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append([]string{"HOME=" + t.TempDir()}, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, log: &logtest.Buffer{}, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			p.log.Write([]byte(line + "\n"))
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				addr <- m[1]
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("checkoutd log:\n%s", p.log.String())
		}
	})
	select {
	case p.addr = <-addr:
	case <-p.done:
		t.Fatalf("checkoutd exited before listening: %v\n%s", p.err, p.log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("checkoutd did not start listening\n%s", p.log.String())
	}
	return p
}

// cliJSON runs a checkoutd command in-process and decodes its --json output.
func cliJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	getenv := func(string) string { return "" }
	if err := run(context.Background(), append(args, "--json"), getenv, &out, &errOut); err != nil {
		t.Fatalf("checkoutd %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	decodeOne(t, out.String(), v) // exactly one JSON object
}

// eventReceiver is an HTTPS receiver on loopback that counts deliveries per
// event id. While gate is closed it holds every request open.
type eventReceiver struct {
	url    string
	caFile string
	mu     sync.Mutex
	seen   map[string]int
	gate   chan struct{}
	once   sync.Once
	inHeld chan struct{}
	// dropped, once set by dropHeld, makes the requests that were held
	// count for nothing: they belonged to a process that was killed.
	dropped   bool
	abandoned map[string]int
}

func newEventReceiver(t *testing.T, held bool) *eventReceiver {
	t.Helper()
	n := webhooktest.NewNetwork(t)
	r := &eventReceiver{seen: map[string]int{}, abandoned: map[string]int{}, gate: make(chan struct{}), inHeld: make(chan struct{}, 1000)}
	if !held {
		close(r.gate)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var evt struct{ ID string }
		json.Unmarshal(body, &evt)
		held := false
		select {
		case <-r.gate:
		default:
			held = true
			r.inHeld <- struct{}{}
			<-r.gate
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if held && r.dropped {
			r.abandoned[evt.ID]++
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.seen[evt.ID]++
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{n.Certificate(t, "localhost", "127.0.0.1")}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r.url = "https://127.0.0.1:" + port + "/hook"
	r.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(r.caFile, n.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *eventReceiver) open() { r.once.Do(func() { close(r.gate) }) }

// dropHeld makes the requests held so far count as never received: their
// sender is dead, so only a later attempt can deliver their events.
func (r *eventReceiver) dropHeld() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped = true
}

func (r *eventReceiver) abandonedEvents() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.abandoned)
}

func (r *eventReceiver) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes: it waits for
// other processes, not for a schedule of our own.
func waitFor(t *testing.T, what string, deadline time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// setup creates a store, a test key and an endpoint for r on database db,
// and returns the store id and the key's secret.
func setupWebhooks(t *testing.T, db string, r *eventReceiver) (storeID, secret string) {
	t.Helper()
	var store struct{ ID string }
	cliJSON(t, &store, "stores", "create", "--database", db, "--name", "Acme Games", "--currency", "USD")
	var key struct{ Secret string }
	cliJSON(t, &key, "keys", "create", "--database", db, "--store", store.ID, "--mode", "test")
	var ep struct{ ID string }
	cliJSON(t, &ep, "webhooks", "create", "--database", db, "--store", store.ID, "--mode", "test", "--url", r.url,
		"--events", "all", "--webhook-allow-cidr", "127.0.0.0/8")
	return store.ID, key.Secret
}

// createSessions creates n sessions through p's API and returns the ids of
// their checkout.created events' sessions.
func createSessions(t *testing.T, p *proc, storeID, secret string, n int) {
	t.Helper()
	for range n {
		req, _ := http.NewRequest("POST", "http://"+p.addr+"/v1/stores/"+storeID+"/checkouts",
			strings.NewReader(`{"items":[{"name":"Sword","amount":1500}]}`))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("create = %d", resp.StatusCode)
		}
	}
}

func serveArgs(db string, r *eventReceiver) []string {
	return []string{"--database", db, "--webhook-allow-cidr", "127.0.0.0/8", "--webhook-ca-file", r.caFile,
		"--webhook-lease", "15s", "--rate-limit", "0"}
}

// eventDatabases returns the databases the process tests run on.
func eventDatabases(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "checkoutd.db") },
		"postgres": func(t *testing.T) string { return storetestPostgresURL(t) },
	}
}

func TestCrashLosesNoEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes and waits for a lease (15 s)")
	}
	for name, newDB := range eventDatabases(t) {
		t.Run(name, func(t *testing.T) {
			db := newDB(t)
			r := newEventReceiver(t, true)
			storeID, secret := setupWebhooks(t, db, r)
			p1 := startProcess(t, serveArgs(db, r)...)
			const sessions = 20
			createSessions(t, p1, storeID, secret, sessions)
			// Kill the process while attempts are in flight: the receiver holds
			// every request of the first process open, so none of them can
			// count, and the events only arrive if the second process
			// attempts them again.
			waitFor(t, "attempts in flight", 30*time.Second, func() bool { return len(r.inHeld) >= 2 })
			if err := p1.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			p1.wait()
			r.dropHeld()
			r.open()
			startProcess(t, serveArgs(db, r)...)
			waitFor(t, "every event delivered after the restart", 90*time.Second, func() bool { return len(r.counts()) == sessions })
			abandoned := r.abandonedEvents()
			if len(abandoned) < 2 {
				t.Fatalf("%d events were in flight at the kill; want at least 2", len(abandoned))
			}
			counts := r.counts()
			for id := range abandoned {
				if counts[id] == 0 {
					t.Errorf("event %s, in flight at the kill, was never delivered again", id)
				}
			}
			// The killed attempts recorded nothing: every delivery succeeded
			// at its first recorded attempt. The receiver has counted every
			// event, but the dispatcher records attempts in batches after
			// their answers: wait for the records (no delivery pending),
			// not for the receiver alone.
			var eps struct{ Data []struct{ ID string } }
			cliJSON(t, &eps, "webhooks", "list", "--database", db, "--store", storeID)
			type delivery struct {
				Status   string
				Attempts int
			}
			var list struct{ Data []delivery }
			waitFor(t, "every delivery's attempt recorded", 60*time.Second, func() bool {
				list.Data = nil
				cliJSON(t, &list, "webhooks", "deliveries", "--database", db, "--endpoint", eps.Data[0].ID, "--limit", "100")
				return len(list.Data) == sessions && !slices.ContainsFunc(list.Data, func(d delivery) bool { return d.Status == "pending" })
			})
			for _, d := range list.Data {
				if d.Status != "succeeded" || d.Attempts != 1 {
					t.Errorf("delivery %+v; want succeeded, 1 attempt", d)
				}
			}
		})
	}
}

func TestTwoProcessesShareDeliveries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	db := storetestPostgresURL(t)
	r := newEventReceiver(t, false)
	storeID, secret := setupWebhooks(t, db, r)
	p1 := startProcess(t, serveArgs(db, r)...)
	p2 := startProcess(t, serveArgs(db, r)...)
	const perNode = 30
	var wg sync.WaitGroup
	for _, p := range []*proc{p1, p2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			createSessions(t, p, storeID, secret, perNode)
		}()
	}
	wg.Wait()
	waitFor(t, "every event delivered", 60*time.Second, func() bool { return len(r.counts()) == 2*perNode })
	// Nothing crashed, so nothing may have been attempted twice.
	for id, n := range r.counts() {
		if n != 1 {
			t.Errorf("event %s delivered %d times; want once", id, n)
		}
	}
}

func TestShutdownFinishesDeliveriesInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real process")
	}
	db := filepath.Join(t.TempDir(), "checkoutd.db")
	r := newEventReceiver(t, true)
	storeID, secret := setupWebhooks(t, db, r)
	p := startProcess(t, serveArgs(db, r)...)
	createSessions(t, p, storeID, secret, 1)
	waitFor(t, "the attempt in flight", 30*time.Second, func() bool { return len(r.inHeld) >= 1 })
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Answer once the process is shutting down.
	waitFor(t, "shutdown to begin", 30*time.Second, func() bool { return strings.Contains(p.log.String(), "shutting down") })
	r.open()
	if err := p.wait(); err != nil {
		t.Fatalf("serve exited with %v", err)
	}
	var list struct {
		Data []struct {
			Status   string
			Attempts int
		}
	}
	var eps struct{ Data []struct{ ID string } }
	cliJSON(t, &eps, "webhooks", "list", "--database", db, "--store", storeID)
	cliJSON(t, &list, "webhooks", "deliveries", "--database", db, "--endpoint", eps.Data[0].ID)
	if len(list.Data) != 1 || list.Data[0].Status != "succeeded" || list.Data[0].Attempts != 1 {
		t.Errorf("deliveries after shutdown = %+v; want one, succeeded on its first attempt", list.Data)
	}
}

// serve takes its webhook options from the environment too, and each of
// them is what makes a delivery to a receiver on a private network work:
// without the allow-list the address is refused, without the CA file the
// receiver's certificate is not trusted.
func TestServeWebhookOptionsFromEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	r := newEventReceiver(t, false)
	for _, c := range []struct {
		name    string
		env     []string
		wantErr string // "" when the delivery must succeed
	}{
		{"both", []string{"CHECKOUTD_WEBHOOK_ALLOW_CIDR=127.0.0.0/8", "CHECKOUTD_WEBHOOK_CA_FILE=" + r.caFile}, ""},
		{"no allow-list", []string{"CHECKOUTD_WEBHOOK_CA_FILE=" + r.caFile}, "refusing to connect to 127.0.0.1: not a public address"},
		{"no CA file", []string{"CHECKOUTD_WEBHOOK_ALLOW_CIDR=127.0.0.0/8"}, "certificate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "checkoutd.db")
			storeID, secret := setupWebhooks(t, db, r)
			p := startProcessEnv(t, append([]string{"CHECKOUTD_DATABASE=" + db, "CHECKOUTD_RATE_LIMIT=0"}, c.env...))
			before := len(r.counts())
			createSessions(t, p, storeID, secret, 1)
			var eps struct{ Data []struct{ ID string } }
			cliJSON(t, &eps, "webhooks", "list", "--database", db, "--store", storeID)
			var list struct {
				Data []struct {
					Status      string
					LastError   string `json:"last_error"`
					AttemptList []struct {
						Error string
					} `json:"attempt_list"`
				}
			}
			// An attempt is listed from its start; wait for its outcome (the
			// delivery succeeded, or the attempt's error was recorded).
			waitFor(t, "the first attempt's outcome", 30*time.Second, func() bool {
				cliJSON(t, &list, "webhooks", "deliveries", "--database", db, "--endpoint", eps.Data[0].ID)
				return len(list.Data) == 1 && len(list.Data[0].AttemptList) > 0 &&
					(list.Data[0].Status != "pending" || list.Data[0].LastError != "")
			})
			d := list.Data[0]
			switch {
			case c.wantErr == "" && (d.Status != "succeeded" || len(r.counts()) != before+1):
				t.Errorf("delivery = %+v; want succeeded, received", d)
			case c.wantErr != "" && (d.Status != "pending" || !strings.Contains(d.LastError, c.wantErr) || len(r.counts()) != before):
				t.Errorf("delivery = %+v; want pending after an attempt failing with %q, nothing received", d, c.wantErr)
			}
		})
	}
}

// A webhook option serve cannot use stops it at start with the reason.
func TestServeRefusesBadWebhookOptions(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	for _, c := range []struct {
		env  vars
		want string
	}{
		{vars{"CHECKOUTD_WEBHOOK_ALLOW_CIDR": "10.0.0.0"}, `--webhook-allow-cidr: "10.0.0.0" is not a CIDR`},
		{vars{"CHECKOUTD_WEBHOOK_CA_FILE": filepath.Join(t.TempDir(), "missing.pem")}, "read webhook CA file"},
		{vars{"CHECKOUTD_WEBHOOK_CA_FILE": notPEM}, "holds no PEM certificate"},
	} {
		c.env["CHECKOUTD_DATA_DIR"] = t.TempDir()
		_, _, err := cli(t, c.env, "serve", "--addr", "127.0.0.1:0")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("serve with %v = %v; want an error containing %q", c.env, err, c.want)
		}
	}
}
