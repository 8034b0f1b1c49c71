package postgres

import (
	"fmt"

	"github.com/jackc/pgx/v5"
)

func pgconnConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message can quote the URL, password included: say less.
		return nil, fmt.Errorf("invalid PostgreSQL URL (expected postgres://user@host:port/database)")
	}
	return cfg, nil
}
