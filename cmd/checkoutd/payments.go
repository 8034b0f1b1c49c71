package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/user"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
)

func paymentsCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "payments", args, map[string]func(context.Context, env, []string) error{
		"get":             paymentsGet,
		"refund":          paymentsRefund,
		"cancel-refund":   paymentsCancelRefund,
		"simulate-payout": paymentsSimulatePayout,
	})
}

func paymentsGet(ctx context.Context, e env, args []string) error {
	const synopsis = "payments get PAY_ID [--json]"
	a := newAdmin(e, "payments get", synopsis)
	base := a.withCheckoutBaseURL()
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		p, err := svc.Store().PaymentGet(ctx, id)
		if err != nil {
			return err
		}
		rs, err := svc.Refunds(ctx, p.ID)
		if err != nil {
			return err
		}
		d, err := svc.DisputeOfPayment(ctx, p.ID)
		if err != nil {
			return err
		}
		return a.print(api.NewPaymentJSON(p, rs, d, *base), func(w io.Writer) { printPayment(w, p, rs) })
	})
}

func paymentsRefund(ctx context.Context, e env, args []string) error {
	const synopsis = "payments refund PAY_ID [--amount N] [--reason requested_by_customer|duplicate|fraudulent] [--rate payment|current] [--json]"
	a := newAdmin(e, "payments refund", synopsis)
	base := a.withCheckoutBaseURL()
	var amount int64
	var reason string
	a.fs.Int64Var(&amount, "amount", 0, "what to refund, in minor units (cents); all that is left of the payment when not given")
	a.fs.StringVar(&reason, "reason", "", "why: requested_by_customer, duplicate or fraudulent (optional)")
	var rate string
	a.fs.StringVar(&rate, "rate", "", "a crypto payment's refund: priced at the payment's rate (payment, the default) or at the rate when the buyer gives the address (current)")
	// The CLI refunds through the test-mode simulators, as serve does;
	// live mode has no card or skins processor to refund through yet.
	a.procs = pay.Registry{Test: pay.Simulators()}
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		params := checkout.RefundParams{Reason: checkout.RefundReason(reason), Rate: checkout.RefundRate(rate)}
		if flagSet(a.fs, "amount") {
			params.Amount = &amount
		}
		out, err := svc.RefundPayment(ctx, service.RefundRequest{PaymentID: id, Params: params, By: cliActor(e)})
		if err != nil {
			return describe(err)
		}
		rs, err := svc.Refunds(ctx, out.Payment.ID)
		if err != nil {
			return err
		}
		return a.print(out.Refund.View(*base), func(w io.Writer) {
			printRefund(w, out.Refund, *base)
			fmt.Fprintln(w)
			printPayment(w, out.Payment, rs)
		})
	})
}

// paymentsCancelRefund cancels a crypto refund whose payout has not been
// seen (service.CancelRefund).
func paymentsCancelRefund(ctx context.Context, e env, args []string) error {
	const synopsis = "payments cancel-refund RE_ID [--json]"
	a := newAdmin(e, "payments cancel-refund", synopsis)
	base := a.withCheckoutBaseURL()
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		scope, err := refundScope(ctx, svc, id)
		if err != nil {
			return err
		}
		out, err := svc.CancelRefund(ctx, scope, id)
		if err != nil {
			return describe(err)
		}
		return a.print(out.Refund.View(*base), func(w io.Writer) { printRefund(w, out.Refund, *base) })
	})
}

// paymentsSimulatePayout pays a test-mode crypto refund as the merchant's
// wallet would, on the simulated network (service.SimulateRefundPayout);
// serve's payments job completes it after the coin's confirmations.
func paymentsSimulatePayout(ctx context.Context, e env, args []string) error {
	const synopsis = "payments simulate-payout RE_ID [--json]"
	a := newAdmin(e, "payments simulate-payout", synopsis)
	base := a.withCheckoutBaseURL()
	a.procs = pay.Registry{Test: pay.Simulators()}
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		scope, err := refundScope(ctx, svc, id)
		if err != nil {
			return err
		}
		r, err := svc.SimulateRefundPayout(ctx, scope, id)
		if err != nil {
			return describe(err)
		}
		return a.print(r.View(*base), func(w io.Writer) { printRefund(w, r, *base) })
	})
}

// refundScope is the store and mode of refund id, for the service's
// scoped calls: the operator acts in every store.
func refundScope(ctx context.Context, svc *service.Service, id string) (checkout.Scope, error) {
	r, err := svc.Store().RefundGet(ctx, id)
	if err != nil {
		return checkout.Scope{}, err
	}
	return checkout.Scope{MerchantID: r.MerchantID, Mode: r.Mode}, nil
}

// flagSet reports whether the command line set the flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// cliActor is who asks at the command line: the operating system's user.
func cliActor(e env) checkout.Actor {
	name := e.getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return checkout.Actor{Kind: checkout.ActorCLI, Name: name}
}

func printRefund(w io.Writer, r *checkout.Refund, checkoutBaseURL string) {
	fmt.Fprintf(w, "refund:\t%s\nstatus:\t%s\namount:\t%s\n", r.ID, r.Status, checkout.FormatAmount(r.Amount, r.Currency))
	if r.Reason != "" {
		fmt.Fprintf(w, "reason:\t%s\n", r.Reason)
	}
	if r.FailureCode != nil {
		fmt.Fprintf(w, "failure:\t%s: %s\n", *r.FailureCode, checkout.RefundFailureMessage(*r.FailureCode))
	}
	switch {
	case r.Status == checkout.RefundPending && r.Crypto != nil && r.Crypto.Address == "":
		fmt.Fprintf(w, "\nSend the buyer this link, where they give the address to refund to (it expires %s):\n%s/refund/%s\n",
			time.UnixMilli(r.Crypto.LinkExpiresAt).UTC().Format(time.RFC3339), checkoutBaseURL, r.LinkToken)
	case r.Status == checkout.RefundPending && r.Crypto != nil && r.Crypto.TxHash == "":
		coin, _ := checkout.CoinByCode(r.Crypto.Coin)
		fmt.Fprintf(w, "\nPay %s %s to %s from your wallet: checkoutd sees the transaction and completes the refund.\n",
			checkout.FormatCoin(r.Crypto.AmountBase, coin), r.Crypto.Coin, r.Crypto.Address)
	case r.Status == checkout.RefundPending && r.Crypto != nil:
		fmt.Fprintf(w, "\nThe payout %s is confirming.\n", r.Crypto.TxHash)
	case r.Status == checkout.RefundPending:
		fmt.Fprintln(w, "\nThe processor has not answered yet: the payments job of checkoutd serve asks it again until it does.")
	}
}

func printPayment(w io.Writer, p *checkout.Payment, rs []*checkout.Refund) {
	fmt.Fprintf(w, "payment:\t%s\nstatus:\t%s\nmethod:\t%s\nmode:\t%s\namount:\t%s\nrefunded:\t%s\nleft to refund:\t%s\ncheckout:\t%s\n",
		p.ID, p.Status, p.Method, p.Mode, checkout.FormatAmount(p.Amount, p.Currency), checkout.FormatAmount(p.AmountRefunded, p.Currency),
		checkout.FormatAmount(max(p.Refundable(), 0), p.Currency), p.SessionID)
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nREFUND\tSTATUS\tAMOUNT\tREASON\tBY\tCREATED")
	for _, r := range rs {
		reason := string(r.Reason)
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, checkout.FormatAmount(r.Amount, r.Currency), reason, r.RequestedBy,
			r.CreatedAt.UTC().Format(time.RFC3339))
	}
}
