package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/service"
)

func disputesCmd(ctx context.Context, e env, args []string) error {
	return subcommand(ctx, e, "disputes", args, map[string]func(context.Context, env, []string) error{
		"answer": disputesAnswer,
		"get":    disputesGet,
		"list":   disputesList,
	})
}

// disputeOf finds a dispute by its id, or by its payment's.
func disputeOf(ctx context.Context, svc *service.Service, id string) (*checkout.Dispute, error) {
	if strings.HasPrefix(id, checkout.PrefixPayment) {
		d, err := svc.DisputeOfPayment(ctx, id)
		if err == nil && d == nil {
			err = checkout.Errorf(checkout.EDisputeNotFound, "Payment %s has no dispute.", id)
		}
		return d, err
	}
	return svc.DisputeIn(ctx, checkout.Scope{}, id)
}

func disputesGet(ctx context.Context, e env, args []string) error {
	const synopsis = "disputes get DP_ID|PAY_ID [--json]"
	a := newAdmin(e, "disputes get", synopsis)
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		d, err := disputeOf(ctx, svc, id)
		if err != nil {
			return err
		}
		return a.print(d.View(), func(w io.Writer) { printDispute(w, d) })
	})
}

func disputesList(ctx context.Context, e env, args []string) error {
	a := newAdmin(e, "disputes list", "disputes list --store ID [--mode test|live] [--json]  (the open ones, the nearest deadline first)")
	var store, mode string
	a.fs.StringVar(&store, "store", "", "the store whose open disputes to list (required)")
	a.fs.StringVar(&mode, "mode", "test", "test or live")
	a.check = func([]string) error {
		if _, ok := checkout.ParseMode(mode); !ok {
			return usageError{"--mode must be test or live"}
		}
		return nil
	}
	return a.run(ctx, args, func(svc *service.Service, _ []string) error {
		if _, err := svc.Store().MerchantGet(ctx, store); err != nil {
			return err
		}
		ds, err := svc.OpenDisputes(ctx, checkout.Scope{MerchantID: store, Mode: checkout.Mode(mode)})
		if err != nil {
			return err
		}
		out := make([]*checkout.DisputeJSON, len(ds))
		for i, d := range ds {
			out[i] = d.View()
		}
		return a.print(newList(out), func(w io.Writer) {
			fmt.Fprintln(w, "DISPUTE\tPAYMENT\tSTATUS\tREASON\tAMOUNT\tEVIDENCE DUE BY")
			for _, d := range ds {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.PaymentID, d.Status, d.Reason, checkout.FormatAmount(d.Amount, d.Currency),
					d.EvidenceDueBy.UTC().Format(time.RFC3339))
			}
		})
	})
}

func disputesAnswer(ctx context.Context, e env, args []string) error {
	const synopsis = "disputes answer DP_ID|PAY_ID [--product-description T] [--customer-communication T] [--shipping-documentation T] [--refund-policy T] [--text T] [--note T] [--json]"
	a := newAdmin(e, "disputes answer", synopsis)
	var ev checkout.DisputeEvidence
	a.fs.StringVar(&ev.ProductDescription, "product-description", "", "what was sold")
	a.fs.StringVar(&ev.CustomerCommunication, "customer-communication", "", "what the buyer and you wrote to each other")
	a.fs.StringVar(&ev.ShippingDocumentation, "shipping-documentation", "", "how and when it was delivered (carrier, tracking number)")
	a.fs.StringVar(&ev.RefundPolicy, "refund-policy", "", "your refund policy, as the buyer saw it")
	a.fs.StringVar(&ev.UncategorizedText, "text", "", "anything else the card network should read")
	a.fs.StringVar(&ev.Note, "note", "", "a note of your own, kept with the dispute and never sent")
	return a.runOne(ctx, args, synopsis, func(svc *service.Service, id string) error {
		d, err := disputeOf(ctx, svc, id)
		if err != nil {
			return err
		}
		d, err = svc.SubmitDisputeEvidence(ctx, service.DisputeEvidenceRequest{DisputeID: d.ID, Evidence: ev, By: cliActor(e)})
		if err != nil {
			return describe(err)
		}
		return a.print(d.View(), func(w io.Writer) {
			printDispute(w, d)
			fmt.Fprintln(w, "\nThe evidence is sent; the card network decides in a moment (the payments job of checkoutd serve closes the dispute).")
		})
	})
}

func printDispute(w io.Writer, d *checkout.Dispute) {
	fmt.Fprintf(w, "dispute:\t%s\npayment:\t%s\nstatus:\t%s\nreason:\t%s\namount:\t%s\nfee:\t%s\nevidence due by:\t%s\n",
		d.ID, d.PaymentID, d.Status, d.Reason, checkout.FormatAmount(d.Amount, d.Currency), checkout.FormatAmount(d.Fee, d.Currency),
		d.EvidenceDueBy.UTC().Format(time.RFC3339))
	if d.SubmittedAt != nil {
		fmt.Fprintf(w, "evidence sent:\t%s by %s\n", d.SubmittedAt.UTC().Format(time.RFC3339), d.SubmittedBy)
	}
	if d.ClosedAt != nil {
		fmt.Fprintf(w, "closed:\t%s\n", d.ClosedAt.UTC().Format(time.RFC3339))
	}
}
