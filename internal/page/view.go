package page

import (
	"context"
	"fmt"
	"html/template"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/service"
)

// view is what the invoice template renders. It holds text, never markup,
// but for the QR code's SVG, which the page builds itself.
type view struct {
	CSRF      string
	ID        string
	Test      bool
	Merchant  *checkout.Merchant
	Title     string
	Items     []itemView
	Desc      *string
	Total     string
	TotalRaw  int64
	Currency  string
	Email     string
	CancelURL string

	// State is what the page offers: "pay" (the methods), "processing" (a
	// payment on its way), "complete" (the receipt), "expired", or
	// "unavailable" (no method in this mode).
	State   string
	Methods []methodTab
	Method  checkout.PaymentMethod
	// Message explains the outcome of the last attempt.
	Message string
	// Final is true for complete and expired sessions.
	Final bool

	Form cardFormView
	// Acquirer is the store's card acquirer's element, which takes the
	// card instead of Form on a live session (nil otherwise).
	Acquirer *acquirerView

	Coins []coinView
	Quote *quoteView

	Skins []skinView

	Active  *activeView
	Receipt *receiptView

	StatusURL string
	ExpiresAt string
}

type itemView struct {
	Name     string
	Image    string
	Quantity int64
	Unit     string
	Line     string
}

type methodTab struct {
	Method  checkout.PaymentMethod
	Label   string
	Href    string
	Current bool
}

// acquirerView is what the page's card form needs to mount a card
// acquirer's element and confirm a payment with it.
type acquirerView struct {
	Name           string
	PublishableKey string
	// Script is the acquirer's own script; Adapter checkoutd's for it.
	Script  string
	Adapter string
	// StartURL is where the form posts to start (or resume) the payment;
	// ReturnURL where the buyer comes back after confirming it.
	StartURL  string
	ReturnURL string
	Amount    int64
	Currency  string // lower case, as acquirers' elements take it
}

type cardFormView struct {
	Expiry string
	Name   string
	Errors map[string]string
}

type coinView struct {
	Code     string
	Name     string
	Current  bool
	Duration string
}

type quoteView struct {
	Coin     string
	CoinName string
	Address  string
	Amount   string
	Base     string
	BaseUnit string
	// URI is the payment URI (bitcoin:…), built here from the coin's
	// scheme, the network's address and a number: safe as a link.
	URI template.URL
	QR  template.HTML
	// ExpiresAt is when a live quote's amount stops holding (RFC 3339, UTC);
	// "" when it holds as long as the session (test mode).
	ExpiresAt string
}

type skinView struct {
	ID       string
	Name     string
	Value    string
	ValueRaw int64
	Checked  bool
}

type activeView struct {
	Method        checkout.PaymentMethod
	Coin          string
	Confirmations int
	Needed        int
	// CountUnknown is set when the network did not answer for the count
	// of confirmations.
	CountUnknown bool
	HoldUntil    string
	// Short is set while a live crypto payment has received less than its
	// amount: the page asks for the rest.
	Short *shortView
	// DroppedUntil is set (RFC 3339, UTC) while a transaction of a live
	// crypto payment has left the mempool unmined: the payment fails then
	// unless it comes back.
	DroppedUntil string
}

// shortView is what a short crypto payment's page shows: what arrived, what
// is required, the rest, where to send it and until when.
type shortView struct {
	Received, Required, Remaining string // in coins
	RemainingBase                 string // base units, which the status compares
	Address                       string
	Until                         string // RFC 3339, UTC
}

type receiptView struct {
	Amount string
	Method string
	// Excess is what a live crypto payment paid beyond what was due, in
	// coins ("0.001 LTC"); "" when it paid the amount.
	Excess    string
	Date      string
	PaymentID string
	ReturnURL string
	Email     string
}

var methodLabels = map[checkout.PaymentMethod]string{
	checkout.MethodCard:   "Card",
	checkout.MethodCrypto: "Crypto",
	checkout.MethodSkins:  "Skins",
}

// view builds the page of a session for the request's query: method picks
// the tab (unless method is set), coin the crypto quote shown, failed and
// decline the outcome of the last attempt.
func (p *Page) view(ctx context.Context, w http.ResponseWriter, r *http.Request, ps *service.PageSession, method checkout.PaymentMethod) (*view, error) {
	s, m := ps.Session, ps.Merchant
	v := &view{
		CSRF:      csrfToken(w, r, invoiceCookiePath),
		ID:        s.ID,
		Test:      !s.Mode.Live(),
		Merchant:  m,
		Title:     s.Title,
		Desc:      s.Description,
		Total:     checkout.FormatAmount(s.TotalAmount, s.Currency),
		TotalRaw:  s.TotalAmount,
		Currency:  s.Currency,
		StatusURL: invoicePath(s.ID) + "/status",
		ExpiresAt: s.ExpiresAt.UTC().Format(time.RFC3339),
	}
	if s.Customer.Email != nil {
		v.Email = *s.Customer.Email
	}
	if s.CancelURL != nil {
		v.CancelURL = *s.CancelURL
	}
	for _, it := range s.Items {
		iv := itemView{
			Name: it.Name, Quantity: it.Quantity,
			Unit: checkout.FormatAmount(it.Amount, s.Currency),
			Line: checkout.FormatAmount(it.Amount*it.Quantity, s.Currency),
		}
		if it.Image != nil {
			iv.Image = *it.Image
		}
		v.Items = append(v.Items, iv)
	}

	switch {
	case s.Status == checkout.StatusComplete:
		v.State, v.Final = "complete", true
		v.Receipt = receipt(ps)
		return v, nil
	case s.Status == checkout.StatusExpired:
		v.State, v.Final = "expired", true
		return v, nil
	case ps.Active != nil && !waitingAtAcquirer(ps.Active):
		v.State = "processing"
		a := &activeView{Method: ps.Active.Method}
		if ps.Active.Crypto != nil {
			pr, err := p.svc.CryptoProgressOf(ctx, ps.Active)
			if err != nil {
				// The node does not answer (restarting, down): the page
				// still shows, and says the count waits for it.
				p.log.WarnContext(ctx, "crypto confirmations unknown: the network did not answer", "payment_id", ps.Active.ID, "err", err)
				a.CountUnknown = true
			}
			a.Coin, a.Confirmations, a.Needed = ps.Active.Crypto.Coin, pr.Confirmations, pr.Needed
			if at := ps.Active.Crypto.DroppedAt; at != 0 {
				a.DroppedUntil = time.UnixMilli(at).Add(service.DroppedWindow).UTC().Format(time.RFC3339)
			}
			if rem := remaining(ps.Active.Crypto); rem != nil {
				c, _ := checkout.CoinByCode(ps.Active.Crypto.Coin)
				a.Short = &shortView{
					Received:      checkout.FormatCoin(ps.Active.Crypto.ReceivedBase, c),
					Required:      checkout.FormatCoin(ps.Active.Crypto.RequiredBase, c),
					Remaining:     checkout.FormatCoin(rem.String(), c),
					RemainingBase: rem.String(),
					Address:       ps.Active.Crypto.Address,
					Until:         time.UnixMilli(ps.Active.Crypto.ShortUntil).UTC().Format(time.RFC3339),
				}
			}
		}
		if ps.Active.Skins != nil {
			a.HoldUntil = time.Unix(ps.Active.Skins.HoldUntil, 0).UTC().Format("2 January 2006, 15:04 MST")
		}
		v.Active = a
		return v, nil
	case len(ps.Methods) == 0:
		v.State = "unavailable"
		return v, nil
	}

	v.State = "pay"
	q := r.URL.Query()
	v.Method = ps.Methods[0]
	if method == "" {
		method = checkout.PaymentMethod(q.Get("method"))
	}
	for _, m := range ps.Methods {
		if m == method {
			v.Method = m
		}
	}
	for _, m := range ps.Methods {
		v.Methods = append(v.Methods, methodTab{
			Method: m, Label: methodLabels[m], Current: m == v.Method,
			Href: invoicePath(s.ID) + "?method=" + string(m),
		})
	}
	// The outcome of the attempt the buyer just made, which the redirect
	// after it names.
	if i := slices.IndexFunc(ps.Failed, func(p *checkout.Payment) bool { return p.ID == q.Get("failed") }); i >= 0 && ps.Failed[i].FailureMessage != nil {
		v.Message = *ps.Failed[i].FailureMessage
		if ps.Failed[i].Method == checkout.MethodCard {
			v.Message += " Try another card, or pay another way."
		}
	}
	if d := checkout.Decline(q.Get("decline")); d.Message() != "" {
		v.Message = d.Message()
	}
	if ps.FailedCardAttempts >= checkout.MaxFailedCardAttempts && v.Method == checkout.MethodCard {
		v.Message = checkout.DeclineTooManyRetries.Message()
	}

	switch v.Method {
	case checkout.MethodCard:
		if a := ps.Acquirer; a != nil {
			v.Acquirer = &acquirerView{
				Name: a.Name, PublishableKey: a.PublishableKey, Script: a.Page.Script,
				Adapter:  acquirerAdapterPath(a.Name),
				StartURL: invoicePath(s.ID) + "/card/start", ReturnURL: invoicePath(s.ID) + "/card/return",
				Amount: s.TotalAmount, Currency: strings.ToLower(s.Currency),
			}
		}
	case checkout.MethodCrypto:
		code := q.Get("coin")
		offered := false
		for _, c := range ps.Coins {
			v.Coins = append(v.Coins, coinView{Code: c.Code, Name: c.Name, Current: c.Code == code, Duration: confirmationText(c)})
			offered = offered || c.Code == code
		}
		if c, ok := checkout.CoinByCode(code); ok && offered {
			quote, err := p.svc.ShownQuote(ctx, ps, c.Code)
			if err != nil {
				return nil, err
			}
			if quote != nil {
				qv, err := quoteOf(quote, c)
				if err != nil {
					return nil, err
				}
				v.Quote = qv
			}
		}
	case checkout.MethodSkins:
		inv, err := p.svc.SkinsInventory(ctx, s.ID)
		if err != nil {
			return nil, err
		}
		for _, it := range inv {
			v.Skins = append(v.Skins, skinView{ID: it.ID, Name: it.Name, Value: checkout.FormatAmount(it.Value, s.Currency), ValueRaw: it.Value})
		}
	}
	return v, nil
}

func quoteOf(q *checkout.CryptoQuote, c checkout.Coin) (*quoteView, error) {
	uri := q.PaymentURI()
	svg, err := qrSVG(uri, fmt.Sprintf("QR code to pay %s %s to %s", checkout.FormatCoin(q.AmountBase, c), c.Code, q.Address))
	if err != nil {
		return nil, err
	}
	return &quoteView{
		Coin: c.Code, CoinName: c.Name, Address: q.Address,
		Amount: checkout.FormatCoin(q.AmountBase, c), Base: q.AmountBase, BaseUnit: c.BaseUnit,
		URI: template.URL(uri), QR: svg, ExpiresAt: expiresAt(q.ExpiresAt),
	}, nil
}

// remaining returns what a short live crypto payment still waits for, in
// base units; nil when it is not short.
func remaining(d *checkout.CryptoDetails) *big.Int {
	if d == nil || !d.Short() {
		return nil
	}
	return d.Shortfall()
}

func expiresAt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func confirmationText(c checkout.Coin) string {
	d := c.ConfirmationTime()
	if d < time.Minute {
		return "about " + strconv.Itoa(int(d.Round(time.Second).Seconds())) + " seconds"
	}
	return "about " + strconv.Itoa(int(d.Round(time.Minute).Minutes())) + " minutes"
}

func receipt(ps *service.PageSession) *receiptView {
	s := ps.Session
	rv := &receiptView{
		Amount:    checkout.FormatAmount(s.TotalAmount, s.Currency),
		ReturnURL: s.ReturnURLWithID(),
	}
	if s.CompletedAt != nil {
		rv.Date = s.CompletedAt.UTC().Format("2 January 2006, 15:04 MST")
	}
	if s.Customer.Email != nil {
		rv.Email = *s.Customer.Email
	}
	if p := ps.Paid; p != nil {
		rv.PaymentID = p.ID
		if p.ReceiptEmail != nil {
			rv.Email = *p.ReceiptEmail
		}
		switch {
		case p.Method == checkout.MethodCard && p.CardLast4 != nil:
			brand := "Card"
			if p.CardBrand != nil {
				if name, ok := cardBrandNames[*p.CardBrand]; ok {
					brand = name
				}
			}
			rv.Method = brand + " ending in " + *p.CardLast4
		case p.Crypto != nil:
			c, _ := checkout.CoinByCode(p.Crypto.Coin)
			rv.Method = checkout.FormatCoin(p.Crypto.AmountBase, c) + " " + c.Code
			if ex := p.Crypto.Excess(); ex != nil {
				rv.Method = checkout.FormatCoin(p.Crypto.ReceivedBase, c) + " " + c.Code
				rv.Excess = checkout.FormatCoin(ex.String(), c) + " " + c.Code
			}
		case p.Skins != nil:
			rv.Method = fmt.Sprintf("Skins trade (%d items)", len(p.Skins.Items))
		}
	}
	return rv
}

var cardBrandNames = map[string]string{
	"visa": "Visa", "mastercard": "Mastercard", "amex": "American Express", "discover": "Discover",
	"jcb": "JCB", "diners": "Diners Club", "unionpay": "UnionPay",
}

// waitingAtAcquirer reports whether p is a card payment at the store's
// acquirer that its buyer has not confirmed yet (or confirmed and was
// declined): the page shows the acquirer's element again, which resumes
// it, rather than a payment on its way.
func waitingAtAcquirer(p *checkout.Payment) bool {
	if p.Acquirer == nil {
		return false
	}
	switch pay.AcquirerStatus(p.Acquirer.Status) {
	case "", pay.AcquirerPending, pay.AcquirerRequiresAction, pay.AcquirerFailed:
		return true
	}
	return false
}

// acquirerAdapterPath is where the page serves checkoutd's script for a
// card acquirer's element.
func acquirerAdapterPath(name string) string {
	return "/assets/acquirer/" + url.PathEscape(name) + ".js"
}
