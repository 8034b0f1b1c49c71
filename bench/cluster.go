package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/checkoutd/checkoutd/internal/pgcluster"
)

// The cluster row: checkoutd's creates on a pg_auto_failover cluster (a
// monitor and three nodes on loopback, synchronous replication to one
// standby: package pgcluster), through its multi-host URL, beside
// single-node PostgreSQL's. A commit there waits for a standby to confirm
// it, which is the price of losing nothing acknowledged in a failover
// (issue 30). Single-node PostgreSQL's create is measured again right
// after the cluster's row, as bare is beside each row (beside.go): the
// cluster takes 10 s or more to start, and the machine's speed moves
// meanwhile, so the ratio is over the mean of single-node's rate just
// before the cluster's row (its own row) and just after it.

// startCluster starts the cluster and checkoutd on a throwaway schema of
// it. Without pg_autoctl (or a postgres OS user to run it as) the target
// is skipped.
func (t *target) startCluster(ctx context.Context, cfg *config, log *slog.Logger, stderr io.Writer) error {
	fmt.Fprintln(stderr, "bench: starting a pg_auto_failover cluster (a monitor and 3 nodes: 10 s or more)")
	began := time.Now()
	c, err := pgcluster.Launch(ctx)
	if errors.Is(err, pgcluster.ErrUnavailable) {
		return skipError{err.Error()}
	}
	if err != nil {
		return fmt.Errorf("start the cluster: %w", err)
	}
	t.onClose(c.Close)
	took := time.Since(began)
	t.createOnly = true
	if err := t.startPostgres(ctx, cfg, c.URI(), log); err != nil {
		return err
	}
	t.note += fmt.Sprintf("; pg_auto_failover: a monitor and 3 nodes under %s, number_sync_standbys 1, started in %.0f s",
		c.Dir, took.Seconds())
	return nil
}

// measureSingleBeside measures single-node PostgreSQL's create row again,
// on a fresh schema of -postgres, right after the cluster's row. A failed
// request fails it, as bare's beside does: it is the ratio's baseline.
func measureSingleBeside(ctx context.Context, cfg *config, stderr io.Writer, rep *report) error {
	fmt.Fprintln(stderr, "bench: measuring postgres create beside cluster")
	rep.Cluster = &clusterReport{}
	t, err := startTarget(ctx, "postgres", cfg, stderr)
	var skip skipError
	if errors.As(err, &skip) {
		rep.Cluster.SingleSkipped = skip.reason
		return nil
	}
	if err != nil {
		return fmt.Errorf("start postgres to measure beside the cluster: %w", err)
	}
	client := newClient(cfg.concurrency)
	lc := loadConfig{concurrency: cfg.concurrency, warmup: cfg.warmup, duration: cfg.duration}
	res, err := createRow(ctx, client, lc, t)
	client.CloseIdleConnections()
	if err == nil && res.failures > 0 {
		err = fmt.Errorf("%d of %d requests failed; the first: %s", res.failures, res.requests, res.firstErr)
	}
	if cerr := t.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("postgres create beside the cluster: %w", err)
	}
	rep.Cluster.SingleAfter = &figures{RPS: res.rps(), P50ms: ms(res.percentile(50)), P99ms: ms(res.percentile(99))}
	return nil
}

// figures are a create row's rate and latencies.
type figures struct {
	RPS   float64 `json:"rps"`
	P50ms float64 `json:"p50_ms"`
	P99ms float64 `json:"p99_ms"`
}

// clusterReport sets the cluster's create row beside single-node
// PostgreSQL's.
type clusterReport struct {
	// SingleAfter is single-node PostgreSQL's create measured right after
	// the cluster's row; SingleSkipped says why it was not.
	SingleAfter   *figures `json:"single_after,omitempty"`
	SingleSkipped string   `json:"single_skipped,omitempty"`
	// Single is what the cluster's row is compared with: the mean of the
	// postgres create row of the run and SingleAfter, or the one of them
	// measured. SingleMoved is SingleAfter's rate over the row's, minus 1.
	Single      *figures `json:"single,omitempty"`
	SingleMoved *float64 `json:"single_moved,omitempty"`
	// VsSingle, VsSingleP50 and VsSingleP99 are the cluster's rate, p50 and
	// p99 over Single's: 0.5 creates half as many a second, a p50 of 2
	// waits twice as long.
	VsSingle    *float64 `json:"vs_single,omitempty"`
	VsSingleP50 *float64 `json:"vs_single_p50,omitempty"`
	VsSingleP99 *float64 `json:"vs_single_p99,omitempty"`
}

// createFigures returns the create row of target, if it was measured.
func (r *report) createFigures(target string) *figures {
	for _, rw := range r.Rows {
		if rw.Target == target && rw.Op == "create" && rw.Skipped == "" {
			return &figures{RPS: rw.RPS, P50ms: rw.P50ms, P99ms: rw.P99ms}
		}
	}
	return nil
}

// measuredTarget reports whether a row of target was measured.
func (r *report) measuredTarget(target string) bool {
	for _, rw := range r.Rows {
		if rw.Target == target && rw.Skipped == "" {
			return true
		}
	}
	return false
}

// clusterRatios fills the cluster's ratios to single-node PostgreSQL.
func (r *report) clusterRatios() {
	c, cluster := r.Cluster, r.createFigures("cluster")
	if c == nil || cluster == nil {
		return
	}
	before, after := r.createFigures("postgres"), c.SingleAfter
	switch {
	case before != nil && after != nil:
		c.Single = &figures{RPS: (before.RPS + after.RPS) / 2, P50ms: (before.P50ms + after.P50ms) / 2, P99ms: (before.P99ms + after.P99ms) / 2}
		if before.RPS > 0 {
			moved := after.RPS/before.RPS - 1
			c.SingleMoved = &moved
		}
	case before != nil:
		c.Single = before
	case after != nil:
		c.Single = after
	default:
		return
	}
	over := func(a, b float64) *float64 {
		if b <= 0 {
			return nil
		}
		v := a / b
		return &v
	}
	c.VsSingle = over(cluster.RPS, c.Single.RPS)
	c.VsSingleP50 = over(cluster.P50ms, c.Single.P50ms)
	c.VsSingleP99 = over(cluster.P99ms, c.Single.P99ms)
}

// printCluster writes the cluster's creates beside single-node
// PostgreSQL's.
func (r *report) printCluster(b *strings.Builder) {
	c, cluster := r.Cluster, r.createFigures("cluster")
	if c == nil || cluster == nil {
		return
	}
	b.WriteString("\ncluster: creates on pg_auto_failover (synchronous replication, number_sync_standbys 1) beside single-node PostgreSQL, " +
		"measured in its own row and again right after the cluster's\n\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "creates                    \treq/s\tp50 ms\tp99 ms\t")
	line := func(name string, f *figures) {
		if f != nil {
			fmt.Fprintf(tw, "%-27s\t%.0f\t%.2f\t%.2f\t\n", name, f.RPS, f.P50ms, f.P99ms)
		}
	}
	line("postgres, its row", r.createFigures("postgres"))
	line("postgres, after the cluster", c.SingleAfter)
	line("postgres, mean", c.Single)
	line("cluster", cluster)
	unsteady := c.SingleMoved != nil && math.Abs(*c.SingleMoved) > maxDrift
	if c.VsSingle != nil {
		mark := ""
		if unsteady {
			mark = "!"
		}
		fmt.Fprintf(tw, "%-27s\t%s%s\t%s\t%s\t\n", "cluster / postgres", times(c.VsSingle), mark, times(c.VsSingleP50), times(c.VsSingleP99))
	}
	tw.Flush()
	if c.SingleSkipped != "" {
		fmt.Fprintf(b, "  postgres after the cluster skipped: %s\n", c.SingleSkipped)
	}
	if c.Single == nil {
		b.WriteString("  no single-node PostgreSQL measured: no ratio\n")
	}
	if unsteady {
		fmt.Fprintf(b, "  !: single-node's rate in its row and after the cluster's differ by more than %.0f%%: the ratio is not reliable; run again.\n", maxDrift*100)
	}
}
