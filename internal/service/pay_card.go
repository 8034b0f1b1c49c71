package service

import (
	"context"
	"strings"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
)

// PayByCard pays a session with a card. The form is validated first
// (validation_failed with a violation per field); a session that cannot take
// a payment declines with a checkout.Decline, and the card is not charged.
// Otherwise the outcome's payment tells: succeeded, failed with its code,
// or, when the processor did not answer, processing.
func (s *Service) PayByCard(ctx context.Context, sessionID string, form pay.CardForm) (*PaymentOutcome, error) {
	card, vs := pay.ParseCard(form, s.now())
	email := strings.TrimSpace(form.Email)
	if email != "" {
		if msg := checkout.CheckEmail(email); msg != "" {
			vs = append(vs, checkout.Violation{Code: "invalid_email", Param: "email", Message: "Your email " + msg})
		}
	}
	if vs != nil {
		return nil, &checkout.Error{Code: checkout.EValidationFailed, Message: vs[0].Message, Param: vs[0].Param, Details: vs}
	}
	return s.runAttempt(ctx, sessionID, attempt{
		method: checkout.MethodCard,
		prepare: func(p *checkout.Payment) {
			last4, brand := card.Last4(), pay.CardBrand(card.Number)
			p.CardLast4, p.CardBrand, p.CustomerName = &last4, &brand, &card.Name
			if email != "" {
				p.ReceiptEmail = &email
			}
		},
		ask: func(ctx context.Context, p *checkout.Payment, sess *checkout.Session, m *checkout.Merchant) (answer, error) {
			res, err := s.procs.For(sess.Mode).Card.Charge(ctx, pay.CardCharge{
				PaymentID: p.ID, Amount: p.Amount, Currency: p.Currency,
				StatementDescriptor: m.StatementDescriptor, Card: card,
			})
			if err != nil {
				return answer{}, err
			}
			return s.cardAnswer(ctx, res), nil
		},
	})
}

// settleCard writes a card processor's answer to a charge.
func (s *Service) settleCard(ctx context.Context, paymentID string, res pay.CardResult) (*PaymentOutcome, error) {
	return s.settleAnswer(ctx, paymentID, s.cardAnswer(ctx, res))
}

// cardAnswer is how a card processor's answer settles a payment: approved,
// it succeeds; declined, it fails with the decline's code.
func (s *Service) cardAnswer(ctx context.Context, res pay.CardResult) answer {
	return answer{captured: res.Approved, apply: func(tx *txn, m *checkout.Merchant, sess *checkout.Session, p *checkout.Payment) error {
		if res.Brand != "" {
			p.CardBrand = &res.Brand
		}
		if res.Country != "" {
			p.BuyerCountry = &res.Country
		}
		if !res.Approved {
			code := res.FailureCode
			if code == "" {
				code = checkout.FailCardDeclined
			}
			return s.failPayment(ctx, tx, m, sess, p, code)
		}
		p.DisputeOnSuccess, p.DisputePlan = res.Dispute, res.DisputePlan
		return s.succeedPayment(ctx, tx, m, sess, p)
	}}
}
