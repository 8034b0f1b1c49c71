package main

import (
	"bufio"
	"context"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

// exportCmd writes a store's sessions or payments of a range of days as CSV
// on stdout (service.ExportSessions, service.ExportPayments: the
// dashboard's downloads), streamed a page at a time.
func exportCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "export", args, map[string]func(context.Context, env, []string) error{
		"payments": func(ctx context.Context, e env, args []string) error { return exportOne(ctx, e, "payments", args) },
		"sessions": func(ctx context.Context, e env, args []string) error { return exportOne(ctx, e, "sessions", args) },
	})
}

func exportOne(ctx context.Context, e env, what string, args []string) error {
	synopsis := "export " + what + " --store ID [--mode test|live] [--from YYYY-MM-DD] [--to YYYY-MM-DD]  (CSV on stdout; UTC days, both included; the last 30 days by default)"
	a := newAdmin(e, "export "+what, synopsis)
	var store, mode, from, to string
	a.fs.StringVar(&store, "store", "", "the store to export (required)")
	a.fs.StringVar(&mode, "mode", "test", "test or live")
	a.fs.StringVar(&from, "from", "", "the first day, YYYY-MM-DD (UTC); 29 days before --to when not given")
	a.fs.StringVar(&to, "to", "", "the last day, YYYY-MM-DD (UTC); today when not given")
	var r service.HomeRange
	a.check = func(rest []string) error {
		if len(rest) != 0 {
			return usageError{"usage: checkoutd " + synopsis}
		}
		if store == "" {
			return usageError{"--store is required"}
		}
		if _, ok := checkout.ParseMode(mode); !ok {
			return usageError{"--mode must be test or live"}
		}
		if a.json {
			return usageError{"export writes CSV: --json does not apply"}
		}
		for _, d := range []struct {
			name, value string
			to          *time.Time
		}{{"from", from, &r.From}, {"to", to, &r.To}} {
			if d.value == "" {
				continue
			}
			t, err := time.Parse(time.DateOnly, d.value)
			if err != nil || t.Year() < 2000 {
				return usageError{"--" + d.name + " must be a date as YYYY-MM-DD, such as 2026-01-31"}
			}
			*d.to = t
		}
		return nil
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if _, err := svc.Store().MerchantGet(ctx, store); err != nil {
			return err
		}
		scope := checkout.Scope{MerchantID: store, Mode: checkout.Mode(mode)}
		out := &flushingWriter{bufio.NewWriter(e.stdout)}
		run := svc.ExportPayments
		if what == "sessions" {
			run = svc.ExportSessions
		}
		if err := run(ctx, scope, r, out); err != nil {
			return describe(err)
		}
		return out.Flush()
	})
}

// flushingWriter writes stdout through a buffer that the export flushes
// after each page.
type flushingWriter struct{ *bufio.Writer }

func (w *flushingWriter) Flush() error { return w.Writer.Flush() }
