package pgcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// RequireEnv names the variable that makes a missing pg_autoctl fail the
// tests instead of skipping them.
const RequireEnv = "CHECKOUTD_TEST_REQUIRE_PGCLUSTER"

// PGCtl is the pg_ctl pg_autoctl manages PostgreSQL with: the Debian
// package is built for PostgreSQL 15.
const PGCtl = "/usr/lib/postgresql/15/bin/pg_ctl"

// StartTimeout bounds the start of the whole cluster, base backups of both
// standbys included. It is generous: the tests share small machines.
const StartTimeout = 4 * time.Minute

// monitorSettings make the monitor notice a dead node in seconds rather
// than the default 20 s or more, so a failover takes about 20 s instead of
// 50-55 s.
var monitorSettings = map[string]string{
	"pgautofailover.health_check_period":               "1s",
	"pgautofailover.health_check_timeout":              "1s",
	"pgautofailover.health_check_retry_delay":          "500ms",
	"pgautofailover.node_considered_unhealthy_timeout": "5s",
	"pgautofailover.primary_demote_timeout":            "10s",
}

// ErrUnavailable says the cluster cannot run on this machine: pg_autoctl
// or PostgreSQL 15's pg_ctl is not installed, or there is no postgres OS
// user to run them as. Launch's error wraps it; Start skips the test on it.
var ErrUnavailable = errors.New("pg_auto_failover unavailable")

// Cluster is a running pg_auto_failover formation: a monitor and three data
// nodes, node1 the first primary.
type Cluster struct {
	Dir   string  // holds every data directory, log and pg_autoctl file
	Nodes []*Node // node1, node2, node3

	// t is Start's test, which KillPrimary and Switchover fail; nil for a
	// cluster of Launch, whose callers do not call them.
	t       testing.TB
	run     *runAs
	monitor *Node
	uri     string
}

// Node is the monitor or a data node: a pg_autoctl service and its
// PostgreSQL on a loopback port.
type Node struct {
	Name   string
	Port   int
	PGData string

	svc *service
}

// Start starts the cluster for t as Launch does, and tears it down when t
// ends. Without pg_autoctl, t is skipped (or failed under
// CHECKOUTD_TEST_REQUIRE_PGCLUSTER=1).
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := Launch(context.Background())
	if errors.Is(err, ErrUnavailable) {
		missing(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Logf("pgcluster: %v", err)
		}
	})
	c.t = t
	return c
}

// Launch starts the cluster, node1 first, and waits until one node is
// primary, the other two are its secondaries and one of them is
// synchronous; ctx and StartTimeout bound the wait. It is for a program
// (the bench); a test calls Start. The caller stops the cluster with
// Close. When the cluster cannot run here the error wraps ErrUnavailable;
// when it fails to start, what it started is torn down.
func Launch(ctx context.Context) (*Cluster, error) {
	if _, err := exec.LookPath("pg_autoctl"); err != nil {
		return nil, fmt.Errorf("%w: pg_autoctl not installed: apt-get install postgresql-15-auto-failover (or .ci/install-pgcluster)", ErrUnavailable)
	}
	if _, err := os.Stat(PGCtl); err != nil {
		return nil, fmt.Errorf("%w: %s not installed: apt-get install postgresql-15-auto-failover (or .ci/install-pgcluster)", ErrUnavailable, PGCtl)
	}
	dir, err := os.MkdirTemp("", "checkoutd-pgcluster-")
	if err != nil {
		return nil, err
	}
	run, err := newRunAs(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &Cluster{Dir: dir, run: run}
	if err := c.start(ctx); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// start starts the monitor and the nodes of c and waits until they are a
// healthy formation with a synchronous standby.
func (c *Cluster) start(ctx context.Context) error {
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	c.monitor = &Node{Name: "monitor", Port: ports[0], PGData: filepath.Join(c.Dir, "monitor")}
	for i := 1; i <= 3; i++ {
		c.Nodes = append(c.Nodes, &Node{Name: "node" + strconv.Itoa(i), Port: ports[i], PGData: filepath.Join(c.Dir, "node"+strconv.Itoa(i))})
	}

	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	if err := c.startMonitor(ctx); err != nil {
		return err
	}
	if err := c.startNode(c.Nodes[0]); err != nil {
		return err
	}
	if err := c.waitStates(ctx, map[string]string{"node1": "single"}); err != nil {
		return err
	}
	// The standbys join together; each waits in its base backup for a
	// checkpoint on the primary, which waitRoles asks for.
	for _, n := range c.Nodes[1:] {
		if err := c.startNode(n); err != nil {
			return err
		}
	}
	// Any node may be primary by now: on a busy machine the monitor's
	// quick health checks may have failed node1 over already.
	if err := c.waitRoles(ctx, false); err != nil {
		return err
	}
	// One standby must confirm each commit before the primary acknowledges
	// it: a failover to it then loses nothing acknowledged. pg_autoctl set
	// formation number-sync-standbys 1, run with the monitor's --pgdata,
	// answers "value 1 is not valid" in 2.0, so the monitor's function it
	// would call is called directly.
	if err := c.monitorExec(ctx, "SELECT pgautofailover.set_formation_number_sync_standbys('default', 1)"); err != nil {
		return err
	}
	if n, err := c.NumberSyncStandbys(ctx); err != nil || n != 1 {
		return fmt.Errorf("number_sync_standbys = %d, %v; want 1", n, err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		return err
	}
	out, err := c.run.output(ctx, "show", "uri", "--pgdata", c.monitor.PGData, "--formation", "default")
	if err != nil {
		return err
	}
	c.uri, err = clientURI(strings.TrimSpace(string(out)))
	return err
}

// URI is the multi-host URL of the formation, as pg_autoctl show uri prints
// it (target_session_attrs=read-write), with TLS off, for the nodes run
// with --no-ssl, and a connect timeout, so that a node that does not
// answer is passed over.
func (c *Cluster) URI() string { return c.uri }

// URI is a URL of the node alone, as the postgres superuser.
func (n *Node) URI() string {
	return fmt.Sprintf("postgres://postgres@localhost:%d/postgres?sslmode=disable&connect_timeout=5", n.Port)
}

func (c *Cluster) startMonitor(ctx context.Context) error {
	m := c.monitor
	svc, err := c.run.start(m.Name, filepath.Join(c.Dir, "monitor.log"),
		"create", "monitor", "--pgdata", m.PGData, "--pgport", strconv.Itoa(m.Port),
		"--hostname", "localhost", "--auth", "trust", "--no-ssl", "--pgctl", PGCtl, "--run")
	if err != nil {
		return err
	}
	m.svc = svc
	// The monitor is ready once its extension holds the default formation.
	var conn *pgx.Conn
	err = c.poll(ctx, m, func(ctx context.Context) error {
		cc, err := pgx.Connect(ctx, m.URI()+"&dbname=pg_auto_failover")
		if err != nil {
			return err
		}
		var n int
		if err := cc.QueryRow(ctx, "SELECT count(*) FROM pgautofailover.formation WHERE formationid = 'default'").Scan(&n); err != nil || n != 1 {
			cc.Close(ctx)
			return fmt.Errorf("no default formation yet (%v)", err)
		}
		conn = cc
		return nil
	})
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for k, v := range monitorSettings {
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER SYSTEM SET %s = '%s'", k, v)); err != nil {
			return fmt.Errorf("monitor: %s: %w", k, err)
		}
	}
	_, err = conn.Exec(ctx, "SELECT pg_reload_conf()")
	return err
}

func (c *Cluster) startNode(n *Node) error {
	svc, err := c.run.start(n.Name, filepath.Join(c.Dir, n.Name+".log"),
		"create", "postgres", "--pgdata", n.PGData, "--pgport", strconv.Itoa(n.Port), "--name", n.Name,
		"--hostname", "localhost", "--auth", "trust", "--no-ssl", "--pgctl", PGCtl,
		"--monitor", fmt.Sprintf("postgres://autoctl_node@localhost:%d/pg_auto_failover?sslmode=disable", c.monitor.Port),
		"--run")
	if err != nil {
		return err
	}
	n.svc = svc
	return nil
}

// monitorExec runs a statement on the monitor's database as postgres.
func (c *Cluster) monitorExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.monitor.URI()+"&dbname=pg_auto_failover")
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("monitor: %s: %w", sql, err)
	}
	return nil
}

// NumberSyncStandbys returns the formation's number_sync_standbys, as the
// monitor holds it.
func (c *Cluster) NumberSyncStandbys(ctx context.Context) (int, error) {
	conn, err := pgx.Connect(ctx, c.monitor.URI()+"&dbname=pg_auto_failover")
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, "SELECT number_sync_standbys FROM pgautofailover.formation WHERE formationid = 'default'").Scan(&n)
	return n, err
}

// NodeState is one node as the monitor sees it (pg_autoctl show state
// --json).
type NodeState struct {
	Name     string `json:"nodename"`
	Port     int    `json:"nodeport"`
	Health   int    `json:"health"`
	Current  string `json:"current_group_state"`
	Assigned string `json:"assigned_group_state"`
}

// State returns the nodes as the monitor sees them.
func (c *Cluster) State(ctx context.Context) ([]NodeState, error) {
	out, err := c.run.output(ctx, "show", "state", "--pgdata", c.monitor.PGData, "--formation", "default", "--json")
	if err != nil {
		return nil, err
	}
	var nodes []NodeState
	if err := json.Unmarshal(out, &nodes); err != nil {
		return nil, fmt.Errorf("pg_autoctl show state: %w: %s", err, tail(out))
	}
	return nodes, nil
}

// waitStates waits until each named node has reached the state the monitor
// assigned it, and that is the wanted one, asking for checkpoints as
// waitRoles does.
func (c *Cluster) waitStates(ctx context.Context, want map[string]string) error {
	return c.poll(ctx, c.monitor, func(ctx context.Context) error {
		nodes, err := c.State(ctx)
		if err != nil {
			return err
		}
		c.checkpoint(ctx)
		got := map[string]string{}
		for _, n := range nodes {
			if n.Current == n.Assigned {
				got[n.Name] = n.Current
			} else {
				got[n.Name] = n.Current + "->" + n.Assigned
			}
		}
		for name, state := range want {
			if got[name] != state {
				return fmt.Errorf("node states %v; want %v", got, want)
			}
		}
		return nil
	})
}

// checkpoint runs CHECKPOINT on every node that is up, ignoring errors: a
// node still starting or in recovery need not take it.
func (c *Cluster) checkpoint(ctx context.Context) {
	for _, n := range c.Nodes {
		if n.svc == nil || n.svc.exited() {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if conn, err := pgx.Connect(ctx, n.URI()); err == nil {
			conn.Exec(ctx, "CHECKPOINT")
			conn.Close(ctx)
		}
		cancel()
	}
}

// WaitHealthy waits until the cluster is whole again: every node not
// killed is in the state the monitor assigned it, one of them primary and
// the others secondary, and the primary has a synchronous standby, so that
// an acknowledged write is on two nodes. After a switchover the old
// primary rejoins as a secondary; a test that kills the primary next waits
// for this first.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	return c.waitRoles(ctx, true)
}

// waitRoles waits until every node not killed is in its assigned state,
// one primary and the others secondary, and with sync until the primary
// has a synchronous standby. While it waits it asks every running node for
// a checkpoint: a standby's base backup starts with one, and by default
// that can take minutes.
func (c *Cluster) waitRoles(ctx context.Context, sync bool) error {
	return c.poll(ctx, c.monitor, func(ctx context.Context) error {
		nodes, err := c.State(ctx)
		if err != nil {
			return err
		}
		c.checkpoint(ctx)
		var primary *Node
		seen := 0
		for _, ns := range nodes {
			n := c.node(ns.Name)
			if n == nil || n.killed() {
				continue
			}
			seen++
			switch {
			case ns.Current != ns.Assigned:
				return fmt.Errorf("%s: %s -> %s", ns.Name, ns.Current, ns.Assigned)
			case ns.Current == "primary" && primary == nil:
				primary = n
			case ns.Current != "secondary":
				return fmt.Errorf("%s: %s", ns.Name, ns.Current)
			}
		}
		if primary == nil {
			return errors.New("no primary")
		}
		if want := c.running(); seen != want {
			return fmt.Errorf("%d of %d nodes registered with the monitor", seen, want)
		}
		if !sync {
			return nil
		}
		conn, err := pgx.Connect(ctx, primary.URI())
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')").Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%s has no synchronous standby yet", primary.Name)
		}
		return nil
	})
}

// poll calls ready until it returns nil, ctx ends, or a pg_autoctl service
// of the cluster that should be running exits (then with its log).
func (c *Cluster) poll(ctx context.Context, about *Node, ready func(context.Context) error) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		for _, n := range append([]*Node{c.monitor}, c.Nodes...) {
			if n.svc != nil && n.svc.exited() && !n.killed() {
				return fmt.Errorf("%s exited: %s", n.Name, n.svc.tail())
			}
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("%v waiting: %v", ctx.Err(), err)
			if about != nil && about.svc != nil {
				msg += "; " + about.Name + " log: " + about.svc.tail()
			}
			return fmt.Errorf("%s", msg)
		case <-tick.C:
		}
	}
}

// running counts the data nodes started and not killed.
func (c *Cluster) running() int {
	n := 0
	for _, node := range c.Nodes {
		if node.svc != nil && !node.killed() {
			n++
		}
	}
	return n
}

// killed reports whether the node was killed on purpose (KillPrimary).
func (n *Node) killed() bool { return n.svc != nil && n.svc.killedOnPurpose }

// Close tears the cluster down: each pg_autoctl is asked to stop its
// PostgreSQL at once, then whatever is left of its process group is
// killed, the shared memory a killed postmaster left behind is freed, and
// Dir is removed.
func (c *Cluster) Close() error {
	all := append(append([]*Node{}, c.Nodes...), c.monitor)
	var wg sync.WaitGroup
	for _, n := range all {
		if n == nil || n.svc == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !n.svc.exited() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				c.run.output(ctx, "stop", "--pgdata", n.PGData, "--immediate")
				select {
				case <-n.svc.done:
				case <-ctx.Done():
				}
				cancel()
			}
			n.svc.kill()
			freeSharedMemory(n.PGData)
		}()
	}
	wg.Wait()
	// Only now: every process that wrote under Dir is gone.
	return os.RemoveAll(c.Dir)
}

// freeSharedMemory removes the System V shared memory segment a postmaster
// that was killed leaves behind (its id is on line 7 of postmaster.pid);
// otherwise every test run would leak one.
func freeSharedMemory(pgdata string) {
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return
	}
	f := strings.Fields(lines[6])
	if len(f) != 2 {
		return
	}
	id, err := strconv.Atoi(f[1])
	if err != nil {
		return
	}
	const ipcRMID = 0
	syscall.Syscall(syscall.SYS_SHMCTL, uintptr(id), ipcRMID, 0)
}

// clientURI turns the URL pg_autoctl show uri prints into the one clients
// use: sslmode=disable, for the nodes run without TLS, and a connect
// timeout.
func clientURI(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || !strings.Contains(u.Host, ",") || u.Query().Get("target_session_attrs") != "read-write" {
		return "", fmt.Errorf("pg_autoctl show uri: %q: want a multi-host URL with target_session_attrs=read-write", s)
	}
	q := u.Query()
	q.Set("sslmode", "disable")
	q.Set("connect_timeout", "5")
	u.RawQuery = q.Encode()
	if u.User == nil {
		u.User = url.User("postgres")
	}
	return u.String(), nil
}

// missing skips t, or fails it under CHECKOUTD_TEST_REQUIRE_PGCLUSTER=1.
func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatal(msg + " (required: " + RequireEnv + "=1)")
	}
	t.Skip(msg)
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// The listeners are held until all are chosen, so none repeats.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
