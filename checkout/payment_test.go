package checkout_test

import (
	"errors"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// TestPaymentHold walks the payment rows of SPEC.md's "States and
// transitions" as the session sees them: a payment holds an open session
// while it is on its way, a failed one releases it for another try, and
// only the payment holding it can complete it.
func TestPaymentHold(t *testing.T) {
	exp := t0.Truncate(time.Second).Add(time.Hour)
	within := exp.Add(-time.Minute)

	s := session(nil)
	if err := s.BeginPayment("pay_a", within); err != nil {
		t.Fatalf("BeginPayment on an open session = %v", err)
	}
	if s.ActivePaymentID == nil || *s.ActivePaymentID != "pay_a" || !s.PaymentInProgress() {
		t.Fatalf("after BeginPayment: active %v, in progress %v", s.ActivePaymentID, s.PaymentInProgress())
	}
	// A second payment (another tab, a double click, a crypto transaction
	// racing a card) is declined while the first is on its way.
	if err := s.BeginPayment("pay_b", within); !errors.Is(err, checkout.DeclineInProgress) {
		t.Errorf("second BeginPayment = %v; want %v", err, checkout.DeclineInProgress)
	}
	if err := s.Complete("pay_b", within); !checkout.IsCode(err, checkout.EConflict) {
		t.Errorf("Complete by a payment that does not hold the session = %v; want conflict", err)
	}
	// Past the hour the held session does not expire.
	if s.ExpiryDue(exp.Add(time.Hour)) {
		t.Errorf("a held session is due to expire past expires_at")
	}
	// Releasing by another payment changes nothing.
	s.ReleasePayment("pay_b")
	if !s.PaymentInProgress() {
		t.Errorf("ReleasePayment by another payment released the session")
	}
	// The payment fails: released, open, and the buyer may try again.
	s.ReleasePayment("pay_a")
	if s.Status != checkout.StatusOpen || s.ActivePaymentID != nil || s.PaymentInProgress() {
		t.Fatalf("after a failed payment: %s, active %v, in progress %v; want open and free", s.Status, s.ActivePaymentID, s.PaymentInProgress())
	}
	if err := s.BeginPayment("pay_c", within); err != nil {
		t.Fatalf("BeginPayment after a failure = %v", err)
	}
	if err := s.Complete("pay_c", exp.Add(20*time.Minute)); err != nil {
		t.Fatalf("Complete by the holding payment past expires_at = %v", err)
	}
	if s.Status != checkout.StatusComplete || *s.PaymentID != "pay_c" || s.ActivePaymentID != nil {
		t.Errorf("after Complete: %s, payment %v, active %v", s.Status, s.PaymentID, s.ActivePaymentID)
	}
}

func TestPaymentDecline(t *testing.T) {
	exp := t0.Truncate(time.Second).Add(time.Hour)
	tests := []struct {
		name string
		s    *checkout.Session
		now  time.Time
		want checkout.Decline
	}{
		{"open, a second before its hour ends", session(nil), exp.Add(-time.Second), checkout.DeclineNone},
		{"open, at expires_at", session(nil), exp, checkout.DeclineExpired},
		{"open, held by a payment", session(func(s *checkout.Session) { p := "pay_1"; s.ActivePaymentID = &p }), t0, checkout.DeclineInProgress},
		{"held past expires_at", session(func(s *checkout.Session) { p := "pay_1"; s.ActivePaymentID = &p }), exp.Add(time.Hour), checkout.DeclineInProgress},
		{"complete", session(func(s *checkout.Session) { s.Status = checkout.StatusComplete }), t0, checkout.DeclineComplete},
		{"expired", session(func(s *checkout.Session) { s.Status = checkout.StatusExpired }), t0, checkout.DeclineExpired},
	}
	for _, tt := range tests {
		if got := tt.s.PaymentDecline(tt.now); got != tt.want {
			t.Errorf("%s: PaymentDecline = %q; want %q", tt.name, got, tt.want)
		}
		err := tt.s.BeginPayment("pay_x", tt.now)
		if (err == nil) != (tt.want == checkout.DeclineNone) {
			t.Errorf("%s: BeginPayment = %v; want decline %q", tt.name, err, tt.want)
		}
	}
	for _, d := range []checkout.Decline{checkout.DeclineComplete, checkout.DeclineExpired, checkout.DeclineInProgress, checkout.DeclineTooManyRetries, checkout.DeclineMethod} {
		if d.Message() == "" || d.Error() != d.Message() {
			t.Errorf("decline %q has message %q, error %q", d, d.Message(), d.Error())
		}
	}
	if checkout.DeclineNone.Message() != "" {
		t.Errorf("DeclineNone has a message")
	}
}

func newPayment(method checkout.PaymentMethod, status checkout.PaymentStatus) *checkout.Payment {
	p := checkout.NewPayment(session(func(s *checkout.Session) { s.TotalAmount = 5000 }), method, t0)
	p.Status = status
	return p
}

// TestPaymentTransitions walks the payment's states: processing ends in
// succeeded or failed, a captured payment may be disputed, and nothing
// else moves.
func TestPaymentTransitions(t *testing.T) {
	all := []checkout.PaymentStatus{checkout.PaymentProcessing, checkout.PaymentSucceeded, checkout.PaymentFailed,
		checkout.PaymentPartiallyRefunded, checkout.PaymentRefunded, checkout.PaymentDisputed, checkout.PaymentDisputeLost}
	ops := []struct {
		name    string
		do      func(p *checkout.Payment) error
		from    []checkout.PaymentStatus
		becomes checkout.PaymentStatus
	}{
		{"succeed", func(p *checkout.Payment) error { return p.Succeed(checkout.DefaultPricing, t0.Add(time.Second)) },
			[]checkout.PaymentStatus{checkout.PaymentProcessing}, checkout.PaymentSucceeded},
		{"fail", func(p *checkout.Payment) error { return p.Fail(checkout.FailCardDeclined, t0.Add(time.Second)) },
			[]checkout.PaymentStatus{checkout.PaymentProcessing}, checkout.PaymentFailed},
		{"open a dispute", func(p *checkout.Payment) error {
			_, err := p.OpenDispute(checkout.DefaultDisputePlan, 1500, t0.Add(time.Second))
			return err
		},
			[]checkout.PaymentStatus{checkout.PaymentSucceeded, checkout.PaymentPartiallyRefunded}, checkout.PaymentDisputed},
	}
	for _, op := range ops {
		for _, from := range all {
			p := newPayment(checkout.MethodCard, from)
			err := op.do(p)
			allowed := false
			for _, f := range op.from {
				allowed = allowed || f == from
			}
			switch {
			case allowed && (err != nil || p.Status != op.becomes):
				t.Errorf("%s from %s = %v, status %s; want %s", op.name, from, err, p.Status, op.becomes)
			case !allowed && (!checkout.IsCode(err, checkout.EConflict) || p.Status != from):
				t.Errorf("%s from %s = %v, status %s; want a conflict and no change", op.name, from, err, p.Status)
			}
		}
	}
}

func TestPaymentSucceedAndFail(t *testing.T) {
	p := newPayment(checkout.MethodCard, checkout.PaymentProcessing)
	p.Amount = 3999
	due := t0.Add(time.Minute)
	p.DueAt = &due
	if err := p.Succeed(checkout.DefaultPricing, t0.Add(1500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	// 2.9% of 3999 is 115.971, rounded to 116, plus 30.
	if p.Fee != 146 || p.Net() != 3999-146 || p.DueAt != nil || !p.SucceededAt.Equal(t0.Add(1500*time.Millisecond).Truncate(time.Second)) {
		t.Errorf("succeeded payment: fee %d, net %d, due %v, succeeded %v", p.Fee, p.Net(), p.DueAt, p.SucceededAt)
	}
	v := p.View()
	if v.Object != "payment" || v.Status != checkout.PaymentSucceeded || v.Fee != 146 || v.Net != 3853 || v.CheckoutID != p.SessionID || v.Livemode {
		t.Errorf("View = %+v", v)
	}

	f := newPayment(checkout.MethodCard, checkout.PaymentProcessing)
	if err := f.Fail(checkout.FailInsufficientFunds, t0); err != nil {
		t.Fatal(err)
	}
	if *f.FailureCode != checkout.FailInsufficientFunds || *f.FailureMessage != "Your card has insufficient funds." || f.Fee != 0 || f.Net() != 0 {
		t.Errorf("failed payment: code %v, message %v, fee %d, net %d", *f.FailureCode, *f.FailureMessage, f.Fee, f.Net())
	}
	if got := checkout.FailureMessage("no_such_code"); got != "The payment failed." {
		t.Errorf("FailureMessage of an unknown code = %q", got)
	}
}

// TestPaymentRefundDue: a failed payment is flagged for refund when its
// money was collected (late crypto, a second payment, a charge approved
// after the payment failed, an underpayment whose rest never came), and
// only then: a transaction that never confirmed moved nothing (should it
// confirm later, the scan flags it captured_after_failure).
func TestPaymentRefundDue(t *testing.T) {
	for code, due := range map[string]bool{
		checkout.FailSessionExpired: true, checkout.FailSessionCompleted: true, checkout.FailDuplicatePayment: true,
		checkout.FailCapturedAfterFailure: true, checkout.FailUnderpaid: true,
		checkout.FailProcessingError: false, checkout.FailCardDeclined: false, checkout.FailReplaced: false, checkout.FailDoubleSpent: false,
		checkout.FailConfirmationTimeout: false, checkout.FailDropped: false, checkout.FailAuthenticationFailed: false, checkout.FailAbandoned: false,
	} {
		p := newPayment(checkout.MethodCard, checkout.PaymentProcessing)
		if err := p.Fail(code, t0); err != nil {
			t.Fatal(err)
		}
		if p.RefundDue() != due {
			t.Errorf("failed with %s: RefundDue = %v; want %v", code, p.RefundDue(), due)
		}
	}
	p := newPayment(checkout.MethodCard, checkout.PaymentProcessing)
	if err := p.FlagCapturedAfterFailure(t0); !checkout.IsCode(err, checkout.EConflict) || p.RefundDue() {
		t.Errorf("flagging a processing payment = %v, refund due %v; want a conflict", err, p.RefundDue())
	}
	p.Fail(checkout.FailProcessingError, t0)
	if err := p.FlagCapturedAfterFailure(t0.Add(time.Second)); err != nil || !p.RefundDue() || *p.FailureCode != checkout.FailCapturedAfterFailure ||
		*p.FailureMessage != checkout.FailureMessage(checkout.FailCapturedAfterFailure) || !p.UpdatedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("flagged payment = %v, %v %v; want captured_after_failure, refund due", err, *p.FailureCode, p.RefundDue())
	}
}

func TestPricingFee(t *testing.T) {
	tests := []struct {
		method checkout.PaymentMethod
		amount int64
		want   int64
	}{
		{checkout.MethodCard, 99, 33},               // 2.871 → 3, + 30
		{checkout.MethodCard, 3999, 146},            // 115.971 → 116, + 30
		{checkout.MethodCard, 100_000_000, 2900030}, // the largest total
		{checkout.MethodCrypto, 150, 2},             // 1.5 → 2 (half up)
		{checkout.MethodCrypto, 149, 1},             // 1.49 → 1
		{checkout.MethodSkins, 3999, 200},           // 199.95 → 200
		{checkout.MethodSkins, 10, 1},               // 0.5 → 1
	}
	for _, tt := range tests {
		if got := checkout.DefaultPricing.Fee(tt.method, tt.amount); got != tt.want {
			t.Errorf("Fee(%s, %d) = %d; want %d", tt.method, tt.amount, got, tt.want)
		}
	}
	// The fee never exceeds the amount.
	steep := checkout.Pricing{CardBasisPoints: 10000, CardFixed: 100000}
	if got := steep.Fee(checkout.MethodCard, 99); got != 99 {
		t.Errorf("Fee above the amount = %d; want 99", got)
	}
}

func TestPricingValidate(t *testing.T) {
	tests := []struct {
		p  checkout.Pricing
		ok bool
	}{
		{checkout.DefaultPricing, true},
		{checkout.Pricing{}, true},
		{checkout.Pricing{CardBasisPoints: 10000, CardFixed: 100000}, true},
		{checkout.Pricing{CardBasisPoints: 10001}, false},
		{checkout.Pricing{CryptoBasisPoints: -1}, false},
		{checkout.Pricing{SkinsFixed: 100001}, false},
		{checkout.Pricing{SkinsFixed: -1}, false},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v; want ok %v", tt.p, err, tt.ok)
		}
	}
}

// TestCryptoDetailsAmounts: what each transaction of a crypto payment paid,
// the first being what was received less the top-ups.
func TestCryptoDetailsAmounts(t *testing.T) {
	for _, c := range []struct {
		d    checkout.CryptoDetails
		want []checkout.CryptoTopUp
	}{
		{checkout.CryptoDetails{TxHash: "a", AmountBase: "100"}, []checkout.CryptoTopUp{{TxHash: "a", AmountBase: "100"}}},
		{checkout.CryptoDetails{TxHash: "a", AmountBase: "100", ReceivedBase: "120"}, []checkout.CryptoTopUp{{TxHash: "a", AmountBase: "120"}}},
		{checkout.CryptoDetails{TxHash: "a", AmountBase: "100", ReceivedBase: "110", TopUps: []checkout.CryptoTopUp{{TxHash: "b", AmountBase: "30"}, {TxHash: "c", AmountBase: "20"}}},
			[]checkout.CryptoTopUp{{TxHash: "a", AmountBase: "60"}, {TxHash: "b", AmountBase: "30"}, {TxHash: "c", AmountBase: "20"}}},
	} {
		if got := c.d.Amounts(); !slices.Equal(got, c.want) {
			t.Errorf("Amounts of %+v = %v; want %v", c.d, got, c.want)
		}
	}
}

// TestCryptoDetailsExcessShortfall: a live payment's excess and shortfall
// are received less required, and required less received; a test payment
// (nothing received reported) has neither.
func TestCryptoDetailsExcessShortfall(t *testing.T) {
	str := func(n *big.Int) string {
		if n == nil {
			return ""
		}
		return n.String()
	}
	for _, c := range []struct {
		d                checkout.CryptoDetails
		excess, shortage string
	}{
		{checkout.CryptoDetails{AmountBase: "100"}, "", ""},
		{checkout.CryptoDetails{AmountBase: "100", ReceivedBase: "100", RequiredBase: "100"}, "", ""},
		{checkout.CryptoDetails{AmountBase: "100", ReceivedBase: "125", RequiredBase: "100"}, "25", ""},
		{checkout.CryptoDetails{AmountBase: "100", ReceivedBase: "60", RequiredBase: "100"}, "", "40"},
		{checkout.CryptoDetails{AmountBase: "100", ReceivedBase: "60"}, "", ""},
		{checkout.CryptoDetails{AmountBase: "100", ReceivedBase: "1000000000000000000000001", RequiredBase: "1000000000000000000000000"}, "1", ""},
	} {
		if got := str(c.d.Excess()); got != c.excess {
			t.Errorf("Excess of %+v = %q; want %q", c.d, got, c.excess)
		}
		if got := str(c.d.Shortfall()); got != c.shortage {
			t.Errorf("Shortfall of %+v = %q; want %q", c.d, got, c.shortage)
		}
	}
}

// The API's reference names every failure code a payment may carry, with
// what it means: a code added here and not there fails this test.
func TestFailureCodesInTheOpenAPIDocument(t *testing.T) {
	raw, err := os.ReadFile("../openapi/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(raw), "Why a failed payment failed")
	if i < 0 {
		t.Fatal("openapi.json has no description of failure_code")
	}
	desc := string(raw[i:])
	desc = desc[:strings.Index(desc, "Null unless status is failed")]
	for _, code := range checkout.FailureCodes() {
		if !strings.Contains(desc, code) {
			t.Errorf("openapi.json's failure_code does not name %s", code)
		}
	}
}
