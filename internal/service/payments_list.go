package service

import (
	"context"
	"slices"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
)

// The dashboard's Payments: a store's payments of one mode, newest first,
// and above all those whose money is to be returned to the buyer (late
// crypto, a second payment of a session, an underpayment, a capture after
// the payment failed: Payment.RefundDue). Like the other lists, it takes
// the page's Scope; a payment of another store or mode is not_found as an
// unknown one.

// PaymentFilter narrows the payment list.
type PaymentFilter struct {
	// Status is one of checkout.PaymentStatuses; "" for every status.
	Status checkout.PaymentStatus
	// ToRefund keeps only the payments to be refunded, all of them failed:
	// Status may then be "" or failed only.
	ToRefund bool
}

// MaxRefundDueCount is how far RefundDueCount counts: past it the dashboard
// says "100 or more".
const MaxRefundDueCount = 100

// params validates f into the store's parameters: an unknown status, or a
// status other than failed with ToRefund, is validation_failed naming
// status.
func (f PaymentFilter) params(scope checkout.Scope) (checkout.PaymentListParams, error) {
	p := checkout.PaymentListParams{MerchantID: scope.MerchantID, Mode: scope.Mode, Status: f.Status, RefundDue: f.ToRefund}
	var vs []checkout.Violation
	switch {
	case f.Status != "" && !slices.Contains(checkout.PaymentStatuses, f.Status):
		names := make([]string, len(checkout.PaymentStatuses))
		for i, s := range checkout.PaymentStatuses {
			names[i] = string(s)
		}
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: "status",
			Message: "status must be a payment status: " + strings.Join(names, ", ") + "."})
	case f.ToRefund && f.Status != "" && f.Status != checkout.PaymentFailed:
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: "status",
			Message: "Payments to refund are all failed: status must be failed or unset."})
	}
	if f.ToRefund {
		// Every payment to refund failed: the refund index alone serves the
		// page, without a status check that would send the database to the
		// status index and its many declined cards.
		p.Status = ""
	}
	return p, violationsError(vs)
}

// ListPayments returns a page of the scope's payments, newest first, that
// match f, after cursor ("" for the first page).
func (s *Service) ListPayments(ctx context.Context, scope checkout.Scope, f PaymentFilter, cursor string, limit int) (checkout.Page[*checkout.Payment], error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return checkout.Page[*checkout.Payment]{}, err
	}
	var page checkout.Page[*checkout.Payment]
	p, err := f.params(scope)
	if err != nil {
		return page, err
	}
	if p.After, err = checkout.ParseCursor(cursor); err != nil {
		return page, err
	}
	n := pageSize(limit)
	p.Limit = n + 1 // one more tells whether a page follows
	ps, err := s.store.PaymentList(ctx, p)
	if err != nil {
		return page, err
	}
	return pageOf(ps, n, func(p *checkout.Payment) checkout.Cursor { return checkout.Cursor{At: p.CreatedAt, ID: p.ID} }), nil
}

// RefundDueCount counts the scope's payments to be refunded, up to
// MaxRefundDueCount.
func (s *Service) RefundDueCount(ctx context.Context, scope checkout.Scope) (int, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return 0, err
	}
	return s.store.PaymentCountRefundDue(ctx, scope.MerchantID, scope.Mode, MaxRefundDueCount)
}

// PaymentIn returns one payment of the scope. An id of another shape,
// unknown, or of another store or mode is payment_not_found, all with one
// message.
func (s *Service) PaymentIn(ctx context.Context, scope checkout.Scope, id string) (*checkout.Payment, error) {
	if err := s.authorize(ctx, scope.MerchantID, checkout.ActionViewPayments); err != nil {
		return nil, err
	}
	notFound := checkout.Errorf(checkout.EPaymentNotFound, "No payment %s in this store's %s mode.", id, scope.Mode)
	if !validID(checkout.PrefixPayment, id) {
		return nil, notFound
	}
	p, err := s.store.PaymentGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) || err == nil && !inScope(scope, p.MerchantID, p.Mode) {
		return nil, notFound
	}
	return p, err
}
