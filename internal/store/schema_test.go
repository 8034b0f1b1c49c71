package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store/postgres"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// column is a column as both databases can describe it: its table, name,
// kind of type (int, text, real, bytes) and whether it may be null.
type column struct {
	table, name, kind string
	null              bool
}

func (c column) String() string {
	null := "NOT NULL"
	if c.null {
		null = "NULL"
	}
	return fmt.Sprintf("%s.%s %s %s", c.table, c.name, c.kind, null)
}

// kind maps a declared type of either database to a common kind.
func kind(typ string) string {
	switch t := strings.ToLower(typ); {
	case strings.Contains(t, "int"):
		return "int"
	case strings.Contains(t, "char"), strings.Contains(t, "text"), strings.Contains(t, "clob"):
		return "text"
	case strings.Contains(t, "blob"), t == "bytea":
		return "bytes"
	case strings.Contains(t, "real"), strings.Contains(t, "floa"), strings.Contains(t, "doub"), t == "numeric":
		return "real"
	case t == "boolean":
		return "bool"
	}
	return "other: " + typ
}

// TestSchemasAgree migrates a SQLite and a PostgreSQL database and compares
// their tables, columns (names, kinds of type, nullability) and index
// names, so that a migration written for one database and forgotten, or
// written differently, for the other cannot pass unnoticed.
func TestSchemasAgree(t *testing.T) {
	ctx := context.Background()

	path := storetest.SQLitePath(t)
	lite, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	lite.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var liteCols []column
	// Indexes created by name; those SQLite makes for a PRIMARY KEY or
	// UNIQUE constraint (and PostgreSQL for a constraint) are the columns'.
	liteIdx := queryStrings(t, raw, `SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex_%' ORDER BY name`)
	for _, table := range queryStrings(t, raw, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`) {
		rows, err := raw.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, typ string
			var notNull, pk int
			if err := rows.Scan(&name, &typ, &notNull, &pk); err != nil {
				t.Fatal(err)
			}
			// A primary key is never null, whether or not SQLite says so.
			liteCols = append(liteCols, column{table, name, kind(typ), notNull == 0 && pk == 0})
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}

	url := storetest.PostgresURL(t)
	pg, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	pg.Close()
	rawPG, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer rawPG.Close()
	pgIdx := queryStrings(t, rawPG, `SELECT i.relname FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
		WHERE n.nspname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
		ORDER BY i.relname`)
	rows, err := rawPG.QueryContext(ctx, `SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns
		WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	var pgCols []column
	for rows.Next() {
		var table, name, typ, nullable string
		if err := rows.Scan(&table, &name, &typ, &nullable); err != nil {
			t.Fatal(err)
		}
		pgCols = append(pgCols, column{table, name, kind(typ), nullable == "YES"})
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}

	if len(liteCols) == 0 {
		t.Fatal("no columns read from SQLite")
	}
	byName := func(a, b column) int { return strings.Compare(a.table+"."+a.name, b.table+"."+b.name) }
	slices.SortFunc(liteCols, byName)
	slices.SortFunc(pgCols, byName)
	compare(t, "columns", fmtAll(liteCols), fmtAll(pgCols))
	compare(t, "indexes", liteIdx, pgIdx)
}

func fmtAll(cs []column) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

// compare reports what only one of the sorted lists holds.
func compare(t *testing.T, what string, lite, pg []string) {
	t.Helper()
	for _, s := range lite {
		if !slices.Contains(pg, s) {
			t.Errorf("%s: SQLite has %s; PostgreSQL does not", what, s)
		}
	}
	for _, s := range pg {
		if !slices.Contains(lite, s) {
			t.Errorf("%s: PostgreSQL has %s; SQLite does not", what, s)
		}
	}
}

func queryStrings(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
