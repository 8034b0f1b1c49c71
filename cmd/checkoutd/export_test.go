package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
)

// checkoutd export payments and sessions write a store's CSV of the last
// 30 days, or of a range, on stdout; a mistake on the command line is a
// usage error that writes nothing, a backwards range an error that says so.
func TestExport(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		ctx := context.Background()
		svc := service.New(service.Config{Store: db.open(t), Now: clock.NewFake(time.Now()).Now, Processors: pay.Registry{Test: pay.Simulators()}})
		id := paidPaymentWith(t, svc, "4242424242424242")
		p, err := svc.Store().PaymentGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		cmd := func(args ...string) []string { return append(append([]string{"export"}, args...), db.flags...) }

		out := mustCLI(t, vars{}, cmd("payments", "--store", p.MerchantID)...)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 || lines[0] != strings.Join(service.PaymentExportColumns, ",") || !strings.HasPrefix(lines[1], p.ID+","+p.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z")+","+p.SessionID+",card,succeeded,USD,15.00,0.74,0.00,,14.26,visa,4242,") {
			t.Errorf("export payments =\n%s", out)
		}
		out = mustCLI(t, vars{}, cmd("sessions", "--store", p.MerchantID, "--from", time.Now().UTC().Format(time.DateOnly))...)
		if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], p.SessionID+",") {
			t.Errorf("export sessions from today =\n%s", out)
		}
		if out := mustCLI(t, vars{}, cmd("payments", "--store", p.MerchantID, "--mode", "live")...); strings.Count(out, "\n") != 1 {
			t.Errorf("export payments --mode live =\n%s\nwant the header alone", out)
		}
		if out := mustCLI(t, vars{}, cmd("payments", "--store", p.MerchantID, "--from", "2026-01-01", "--to", "2026-01-31")...); strings.Count(out, "\n") != 1 {
			t.Errorf("export payments of January =\n%s\nwant the header alone", out)
		}

		for _, tt := range []struct {
			args  []string
			usage bool
			want  string
		}{
			{[]string{"payments"}, true, "--store is required"},
			{[]string{"refunds", "--store", p.MerchantID}, true, "no subcommand"},
			{[]string{"payments", "--store", p.MerchantID, "--mode", "prod"}, true, "--mode must be test or live"},
			{[]string{"payments", "--store", p.MerchantID, "--from", "2026-02-30"}, true, "--from must be a date as YYYY-MM-DD"},
			{[]string{"payments", "--store", p.MerchantID, "--to", "yesterday"}, true, "--to must be a date"},
			{[]string{"payments", "--store", p.MerchantID, "--json"}, true, "--json does not apply"},
			{[]string{"payments", "--store", p.MerchantID, "extra"}, true, "usage: checkoutd export payments"},
			{[]string{"payments", "--store", p.MerchantID, "--from", "2026-03-02", "--to", "2026-03-01"}, false, "The end of the date range is before its start."},
			{[]string{"sessions", "--store", "00000000-0000-4000-8000-000000000000"}, false, "No such store"},
		} {
			out, _, err := cli(t, vars{}, cmd(tt.args...)...)
			if err == nil || (exitCode(err) == 2) != tt.usage || !strings.Contains(err.Error(), tt.want) || out != "" {
				t.Errorf("export %v = %v (exit %d), stdout %q; want %q, usage %v, nothing written", tt.args, err, exitCode(err), out, tt.want, tt.usage)
			}
		}
	})
}
