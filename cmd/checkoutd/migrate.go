package main

import (
	"context"
	"fmt"
)

func migrateCmd(ctx context.Context, e env, args []string) error {
	fs := newFlagSet(e, "migrate", "migrate [--database URL]")
	var db dbFlags
	db.register(fs, e)
	if _, err := parseFlags(fs, e, args); err != nil {
		return err
	}
	// Opening a store applies its pending migrations.
	st, desc, err := db.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(e.stdout, "database %s is up to date\n", desc)
	return nil
}
