package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

func pgconnConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message can quote the URL, password included: say less.
		return nil, fmt.Errorf("invalid PostgreSQL URL (expected postgres://user@host:port/database)")
	}
	if cfg.ConnectTimeout == 0 {
		// A host of a multi-host URL that does not answer (a machine
		// gone) is given up after this, and the next tried, rather than
		// after the system's TCP timeout; the URL's connect_timeout
		// overrides it.
		cfg.ConnectTimeout = ConnectTimeout
	}
	return cfg, nil
}

// ConnectTimeout bounds a connection attempt to one host when the URL does
// not set connect_timeout.
const ConnectTimeout = 5 * time.Second
