// Package pgcluster starts a PostgreSQL cluster with automatic failover for
// tests: pg_auto_failover 2.0 (Debian: postgresql-15-auto-failover), one
// monitor and three data nodes on free loopback ports under a temporary
// directory, with synchronous replication to one standby
// (number_sync_standbys 1). Clients reach whichever node is primary through
// the multi-host URL the monitor prints (URI).
//
// A test drives the cluster the way an outage and an operator would:
// KillPrimary sends SIGKILL to the primary node's whole process group (its
// pg_autoctl keeper and its postgres), Switchover asks the monitor for a
// planned switchover, and WaitPrimary waits until another node is primary
// and accepts writes. The cluster is torn down when the test ends, failed
// or not. A program (the bench's cluster row) starts one with Launch and
// stops it with Close.
//
// pg_autoctl refuses to run as root, so every pg_autoctl runs as the
// postgres OS user (the tests run as root or as postgres), with the same
// XDG_CONFIG_HOME and XDG_DATA_HOME, --hostname localhost (without it
// pg_autoctl reaches for an outside address to learn its name), --auth
// trust and --no-ssl. Each one runs in a process group of its own, so that a
// kill takes the keeper and the postgres it started together.
//
// The monitor checks the nodes' health faster than by default (see
// monitorSettings): with the defaults a failover takes 50-55 s, with these
// about 20 s.
//
// Without pg_autoctl the tests skip with a message saying how to install it
// (.ci/install-pgcluster installs it), unless
// CHECKOUTD_TEST_REQUIRE_PGCLUSTER=1, which makes them fail.
package pgcluster
