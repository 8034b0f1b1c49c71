package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/store"
)

// auditTests are the conformance tests of the audit trail.
var auditTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"Audit/RoundTrip", testAuditRoundTrip},
	{"Audit/List", testAuditList},
	{"Audit/Purge", testAuditPurge},
}

func testAuditRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	jo := checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_1", Name: "jo@acme.example"}
	e := checkout.NewAuditEntry("st_1", jo, checkout.AuditAPIKeyCreate, "key_1", "192.0.2.7", "Mozilla/5.0 (Ünïcode)", base.Add(1500*time.Millisecond))
	cli := checkout.NewAuditEntry("", checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}, checkout.AuditSecretsRotate, "", "", "", base)
	inTx(t, db, func(tx checkout.Tx) error {
		if err := tx.AuditInsert(ctx, e); err != nil {
			return err
		}
		return tx.AuditInsert(ctx, cli)
	})
	got, err := db.AuditList(ctx, checkout.AuditListParams{MerchantID: "st_1"})
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], e) {
		t.Fatalf("AuditList(st_1) = %+v, %v; want [%+v]", got, err, e)
	}
	got, err = db.AuditList(ctx, checkout.AuditListParams{})
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], cli) {
		t.Fatalf("AuditList(account level) = %+v, %v; want [%+v]", got, err, cli)
	}
}

// testAuditList pages a store's entries newest first with every filter,
// and never shows another store's.
func testAuditList(t *testing.T, db *store.DB) {
	ctx := context.Background()
	jo := checkout.Actor{Kind: checkout.ActorAccount, ID: "acct_jo", Name: "jo@acme.example"}
	root := checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}
	var all []*checkout.AuditEntry // newest first
	inTx(t, db, func(tx checkout.Tx) error {
		for i := range 10 {
			by, action := jo, checkout.AuditAPIKeyCreate
			if i%2 == 1 {
				by = root
			}
			if i%3 == 0 {
				action = checkout.AuditEndpointDelete
			}
			// Two entries share each millisecond: the id breaks the tie.
			e := checkout.NewAuditEntry("st_1", by, action, "obj", "", "", base.Add(time.Duration(i/2)*time.Second))
			if err := tx.AuditInsert(ctx, e); err != nil {
				return err
			}
			all = append([]*checkout.AuditEntry{e}, all...)
			other := checkout.NewAuditEntry("st_2", by, action, "obj", "", "", base.Add(time.Duration(i/2)*time.Second))
			if err := tx.AuditInsert(ctx, other); err != nil {
				return err
			}
		}
		return nil
	})
	// Sort the expectation by (time, id) descending, as the list is.
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if b.CreatedAt.After(a.CreatedAt) || (b.CreatedAt.Equal(a.CreatedAt) && b.ID > a.ID) {
				all[i], all[j] = b, a
			}
		}
	}
	filter := func(keep func(e *checkout.AuditEntry) bool) []*checkout.AuditEntry {
		var out []*checkout.AuditEntry
		for _, e := range all {
			if keep(e) {
				out = append(out, e)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		p    checkout.AuditListParams
		want []*checkout.AuditEntry
	}{
		{"all", checkout.AuditListParams{}, all},
		{"actor", checkout.AuditListParams{ActorKey: "cli:root"}, filter(func(e *checkout.AuditEntry) bool { return e.Actor == root })},
		{"action", checkout.AuditListParams{Action: checkout.AuditEndpointDelete},
			filter(func(e *checkout.AuditEntry) bool { return e.Action == checkout.AuditEndpointDelete })},
		{"both", checkout.AuditListParams{ActorKey: "acct_jo", Action: checkout.AuditAPIKeyCreate},
			filter(func(e *checkout.AuditEntry) bool { return e.Actor == jo && e.Action == checkout.AuditAPIKeyCreate })},
		{"dates", checkout.AuditListParams{Since: base.Add(time.Second), Until: base.Add(3 * time.Second)},
			filter(func(e *checkout.AuditEntry) bool {
				return !e.CreatedAt.Before(base.Add(time.Second)) && e.CreatedAt.Before(base.Add(3*time.Second))
			})},
	} {
		// Pages of 3, each after the last of the one before.
		var got []*checkout.AuditEntry
		p := c.p
		p.MerchantID, p.Limit = "st_1", 3
		for range 10 {
			page, err := db.AuditList(ctx, p)
			if err != nil {
				t.Fatalf("%s: AuditList(%+v) = %v", c.name, p, err)
			}
			got = append(got, page...)
			if len(page) < 3 {
				break
			}
			last := page[len(page)-1]
			p.After = checkout.Cursor{At: last.CreatedAt, ID: last.ID}
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d entries; want %d", c.name, len(got), len(c.want))
		}
		for i := range got {
			if got[i].ID != c.want[i].ID {
				t.Errorf("%s: entry %d = %s; want %s", c.name, i, got[i].ID, c.want[i].ID)
			}
		}
	}
}

// testAuditPurge deletes the entries made before a time, of every store,
// and keeps the others.
func testAuditPurge(t *testing.T, db *store.DB) {
	ctx := context.Background()
	by := checkout.Actor{Kind: checkout.ActorCLI, Name: "root"}
	old := checkout.NewAuditEntry("st_1", by, checkout.AuditStoreUpdate, "st_1", "", "", base)
	account := checkout.NewAuditEntry("", by, checkout.AuditSecretsRotate, "", "", "", base)
	kept := checkout.NewAuditEntry("st_1", by, checkout.AuditStoreUpdate, "st_1", "", "", base.Add(time.Second))
	inTx(t, db, func(tx checkout.Tx) error {
		for _, e := range []*checkout.AuditEntry{old, account, kept} {
			if err := tx.AuditInsert(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if n, err := db.AuditPurge(ctx, base.Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("AuditPurge = %d, %v; want 2", n, err)
	}
	got, err := db.AuditList(ctx, checkout.AuditListParams{MerchantID: "st_1"})
	if err != nil || len(got) != 1 || got[0].ID != kept.ID {
		t.Errorf("after the purge: %v, %v; want only the newer entry", got, err)
	}
}
