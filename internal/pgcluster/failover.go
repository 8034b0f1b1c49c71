package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// FailoverTimeout bounds a wait for a new primary. A failover takes about
// 20 s with the monitor's settings; the rest is room for a busy machine.
const FailoverTimeout = 2 * time.Minute

// node returns the data node named name.
func (c *Cluster) node(name string) *Node {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// Primary returns the name of the node the monitor holds as primary (its
// reported and assigned states both primary, or wait_primary when no
// standby is left), or "" when none is.
func (c *Cluster) Primary(ctx context.Context) (string, error) {
	nodes, err := c.State(ctx)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		if n.Current == n.Assigned && (n.Current == "primary" || n.Current == "wait_primary" || n.Current == "single") {
			return n.Name, nil
		}
	}
	return "", nil
}

// KillPrimary sends SIGKILL to the primary's whole process group, its
// pg_autoctl keeper and its postgres, as a crash of its machine would,
// and waits until the group is gone. It returns the killed node's name
// and the time of the kill.
func (c *Cluster) KillPrimary() (string, time.Time) {
	c.t.Helper()
	// The monitor holds no primary for a moment while a node joins (the
	// primary passes through join_primary): wait for one.
	ctx, cancel := context.WithTimeout(context.Background(), FailoverTimeout)
	defer cancel()
	var name string
	if err := c.poll(ctx, c.monitor, func(ctx context.Context) error {
		var err error
		name, err = c.Primary(ctx)
		if err == nil && name == "" {
			err = errors.New("no primary")
		}
		return err
	}); err != nil {
		c.t.Fatalf("KillPrimary: %v", err)
	}
	n := c.node(name)
	n.svc.killedOnPurpose = true
	at := time.Now()
	n.svc.kill()
	// The postmaster's children notice its death by themselves; the port
	// is free once the last one is gone.
	if err := c.poll(context.Background(), nil, func(context.Context) error {
		if n.svc.alive() {
			return errors.New("process group still alive")
		}
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	return name, at
}

// Switchover asks the monitor for a planned switchover, as an operator
// would before maintenance, and waits until pg_autoctl says it is done.
func (c *Cluster) Switchover() {
	c.t.Helper()
	if _, err := c.run.output(context.Background(), "perform", "switchover", "--pgdata", c.monitor.PGData, "--formation", "default", "--wait", "120"); err != nil {
		c.t.Fatal(err)
	}
}

// WaitPrimary waits until the monitor holds a node other than not as
// primary and that node accepts a write, and returns its name. The write
// is a transaction that takes an id, so its commit waits for the
// synchronous standby when there is one.
func (c *Cluster) WaitPrimary(ctx context.Context, not string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, FailoverTimeout)
	defer cancel()
	var primary string
	err := c.poll(ctx, c.monitor, func(ctx context.Context) error {
		name, err := c.Primary(ctx)
		if err != nil {
			return err
		}
		if name == "" || name == not {
			return fmt.Errorf("primary is %q", name)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(wctx, c.node(name).URI()+"&target_session_attrs=read-write")
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer conn.Close(wctx)
		if _, err := conn.Exec(wctx, "SELECT txid_current()"); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		primary = name
		return nil
	})
	return primary, err
}
