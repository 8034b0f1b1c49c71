package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
)

// The database and its WAL and shared-memory files, and those of its request
// logs, hold signing secrets and
// buyers' data: they are created readable by their owner alone, whatever
// the umask, and a database made readable to others is made private again
// when it is opened.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", "checkoutd.db")
	check := func(when string) {
		t.Helper()
		for _, name := range privateFiles(path) {
			fi, err := os.Stat(name)
			if err != nil {
				t.Errorf("%s: %v", when, err)
				continue
			}
			if mode := fi.Mode().Perm(); mode != 0o600 {
				t.Errorf("%s: %s has mode %o; want 600", when, filepath.Base(name), mode)
			}
		}
	}
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	check("a new database, written")
	db.Close()

	for _, name := range privateFiles(path) {
		if err := os.Chmod(name, 0o644); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.MerchantGet(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.InTx(ctx, func(tx checkout.Tx) error {
		return tx.MerchantInsert(ctx, &checkout.Merchant{ID: checkout.NewStoreID(), Name: "B", Currency: "USD"})
	}); err != nil {
		t.Fatal(err)
	}
	check("a database made readable to others, reopened")
}

// privateFiles are the files of the database at path: its own and its
// request logs', each with its WAL and shared memory.
func privateFiles(path string) []string {
	logs := sqlite.RequestLogsPath(path)
	return []string{path, path + "-wal", path + "-shm", logs, logs + "-wal", logs + "-shm"}
}

// The checkpointer folds the write-ahead log into the database file in the
// background: writes far below the writer's own threshold (10,000 pages)
// reach the file without a commit doing it. Close stops it, once.
func TestCheckpointerFoldsTheLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "checkoutd.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	// Let a first checkpoint fold the migrations, then write.
	deadline := time.Now().Add(30 * time.Second)
	for before := size(); ; {
		time.Sleep(sqlite.CheckpointInterval) // waiting for a condition: the file to grow
		if after := size(); after == before && after > 0 {
			break
		} else {
			before = after
		}
		if time.Now().After(deadline) {
			t.Fatal("the database file kept changing for 30 s")
		}
	}
	before := size()
	for i := range 300 {
		a := &checkout.Account{ID: checkout.NewAccountID(), Email: "a" + strconv.Itoa(i) + "@example.com", PasswordHash: strings.Repeat("x", 500), CreatedAt: time.Now()}
		if err := db.InTx(ctx, func(tx checkout.Tx) error { return tx.AccountInsert(ctx, a) }); err != nil {
			t.Fatal(err)
		}
	}
	for size() <= before {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatalf("the database file is still %d bytes after the writes: nothing checkpointed it", size())
		}
		time.Sleep(10 * time.Millisecond) // waiting for a condition
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("Close again = %v", err)
	}
}

// Request logs are kept in a file of their own, beside the database; logs an
// older build kept in the database's own table move there when it is
// opened, once, even when a crash left some in both.
func TestRequestLogsHaveAFileOfTheirOwn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "checkoutd.db")
	if got, want := sqlite.RequestLogsPath(path), filepath.Join(filepath.Dir(path), "checkoutd-requests.db"); got != want {
		t.Errorf("RequestLogsPath(%s) = %s; want %s", path, got, want)
	}
	if got, want := sqlite.RequestLogsPath("/var/lib/checkoutd/data"), "/var/lib/checkoutd/data-requests.db"; got != want {
		t.Errorf("RequestLogsPath(data) = %s; want %s", got, want)
	}
	at := time.UnixMilli(1_800_000_000_000)
	newLog := func(n int) *checkout.RequestLog {
		return &checkout.RequestLog{RequestID: checkout.NewRequestID(), MerchantID: "3f1c9a2e-8b7d-4c1e-9f0a-1b2c3d4e5f60", Mode: checkout.ModeTest,
			APIKeyID: "key_0123456789abcdef0123456789abcdef", Method: "GET", Path: "/v1/x", Route: "/v1/x", Status: 200,
			RequestBody: "", ResponseBody: `{"ok":true}`, CreatedAt: at.Add(time.Duration(n) * time.Millisecond)}
	}
	count := func(file string) int {
		t.Helper()
		raw, err := sql.Open("sqlite", file)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM request_logs`).Scan(&n); err != nil {
			t.Fatalf("count the request logs of %s: %v", filepath.Base(file), err)
		}
		return n
	}

	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	kept := []*checkout.RequestLog{newLog(0), newLog(1), newLog(2)}
	if err := db.RequestLogInsert(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n, m := count(path), count(sqlite.RequestLogsPath(path)); n != 0 || m != 3 {
		t.Fatalf("request logs: %d in the database, %d in its logs file; want 0 and 3", n, m)
	}

	// An older build's logs, one of them copied already by a start that
	// crashed before deleting it.
	legacy := []*checkout.RequestLog{newLog(3), kept[1], newLog(4)}
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range legacy {
		if _, err := raw.Exec(`INSERT INTO request_logs (request_id, store_id, mode, api_key_id, method, path, route, status, duration_us,
			request_body, response_body, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`,
			l.RequestID, l.MerchantID, string(l.Mode), l.APIKeyID, l.Method, l.Path, l.Route, l.Status, l.RequestBody, l.ResponseBody,
			l.CreatedAt.UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append(kept, legacy...) {
		if _, err := db.RequestLogGet(ctx, l.RequestID); err != nil {
			t.Errorf("RequestLogGet(%s) after the move = %v", l.RequestID, err)
		}
	}
	list, err := db.RequestLogList(ctx, checkout.RequestLogListParams{MerchantID: kept[0].MerchantID, Mode: checkout.ModeTest, Limit: 100})
	if err != nil || len(list) != 5 {
		t.Errorf("RequestLogList after the move = %d logs, %v; want 5, none twice", len(list), err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n, m := count(path), count(sqlite.RequestLogsPath(path)); n != 0 || m != 5 {
		t.Errorf("request logs after the move: %d in the database, %d in its logs file; want 0 and 5", n, m)
	}
}

// One serve at a time on a SQLite file: a second OpenToServe fails with
// ErrServed, touching nothing, while the commands' Open works beside the
// first; once the first is closed, the file can be served again. Only the
// served store caches sessions.
func TestOpenToServe(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", "checkoutd.db")
	served, err := sqlite.OpenToServe(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if served.Stats().SessionCache == nil {
		t.Error("the served store has no session cache")
	}
	if second, err := sqlite.OpenToServe(ctx, path); !errors.Is(err, sqlite.ErrServed) {
		if err == nil {
			second.Close()
		}
		t.Fatalf("a second OpenToServe = %v; want ErrServed", err)
	}

	// A command beside the served store: it opens, writes and closes, and
	// the served store's locks (SQLite's and its own) hold.
	cli, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open beside the served store = %v", err)
	}
	m, err := checkout.NewMerchant(checkout.MerchantParams{Name: "Acme", Currency: "USD"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := cli.InTx(ctx, func(tx checkout.Tx) error { return tx.MerchantInsert(ctx, m) }); err != nil {
		t.Fatal(err)
	}
	if cli.Stats().SessionCache != nil {
		t.Error("Open's store has a session cache")
	}
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.OpenToServe(ctx, path); !errors.Is(err, sqlite.ErrServed) {
		t.Fatalf("OpenToServe after a command closed its store = %v; want ErrServed still", err)
	}
	if _, err := served.MerchantGet(ctx, m.ID); err != nil {
		t.Errorf("the served store reads the command's write: %v", err)
	}

	if err := served.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := sqlite.OpenToServe(ctx, path)
	if err != nil {
		t.Fatalf("OpenToServe once the first closed = %v", err)
	}
	again.Close()
}
