// Command checkoutd is a self-hostable payment-collection service: the
// merchant API, the hosted payment page, webhooks and background jobs, in one
// binary, on SQLite or PostgreSQL. Run "checkoutd help" for its commands.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runIO(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(exitCode(err))
	}
}
