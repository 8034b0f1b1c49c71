package store

import (
	"database/sql"
	"time"
)

// The helpers the entity files share: reading rows, and converting the
// columns whose Go type differs from the database's.

// scanner is what *sql.Row and *sql.Rows share.
type scanner interface{ Scan(dest ...any) error }

// collect scans every row and closes rows.
func collect[T any](db *DB, rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, db.translate(err)
		}
		out = append(out, v)
	}
	return out, db.translate(rows.Err())
}

// collectSkipping scans every row and closes rows, like collect, but skips
// a row that cannot be decoded (invalid JSON in a column, a value of the
// wrong type): it logs the row's id (the first column) at error level,
// counts it in Stats.RowsSkipped and carries on. Lists read by background
// jobs use it, so that one bad row does not stop a job for every other row.
func collectSkipping[T any](db *DB, rows *sql.Rows, table string, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			db.skipped.Add(1)
			db.logger().Error("skipped an unreadable row", "table", table, "id", rowID(rows), "err", err)
			continue
		}
		out = append(out, v)
	}
	return out, db.translate(rows.Err())
}

// rowID returns the first column of the current row as text, whatever the
// others hold, or "" when even that cannot be read.
func rowID(rows *sql.Rows) string {
	cols, err := rows.Columns()
	if err != nil || len(cols) == 0 {
		return ""
	}
	var id string
	dest := make([]any, len(cols))
	dest[0] = &id
	for i := 1; i < len(dest); i++ {
		dest[i] = new(any)
	}
	if rows.Scan(dest...) != nil {
		return ""
	}
	return id
}

// timePtr is a nullable column of Unix seconds as a time.
func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.Unix(v.Int64, 0)
	return &t
}

// msPtr is a nullable column of Unix milliseconds as a time.
func msPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64)
	return &t
}

// unixPtr is a time for a nullable column of Unix seconds.
func unixPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.Unix()
}

// unixMilliPtr is a time for a nullable column of Unix milliseconds.
func unixMilliPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

// boolInt is a boolean for an integer column (0 or 1): SQLite has no
// boolean type, so both databases store 0 and 1.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
