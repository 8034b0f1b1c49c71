package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
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
