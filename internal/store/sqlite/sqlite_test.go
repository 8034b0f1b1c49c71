package sqlite_test

import (
	"context"
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

// The database and its WAL and shared-memory files hold signing secrets and
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
		for _, name := range []string{path, path + "-wal", path + "-shm"} {
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

	for _, name := range []string{path, path + "-wal", path + "-shm"} {
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
