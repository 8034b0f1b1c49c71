package service

import (
	"context"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// The audit trail (docs/dashboard.md, Security). Every operation that
// changes a store's keys, webhooks, money, team or settings, and every
// sign-in, records an entry through Record in its own transaction: the
// change and its record are kept together or not at all. Who and from
// where come from the request's context (WithOrigin: the dashboard sets
// it) or, at the CLI, from Config.Actor.

// Origin is who makes a change and from where.
type Origin struct {
	Actor checkout.Actor
	// ClientAddress and UserAgent are a dashboard request's; "" at the
	// CLI.
	ClientAddress string
	UserAgent     string
}

type originKey struct{}

// WithOrigin returns ctx carrying o: the changes made under it are
// recorded as o's.
func WithOrigin(ctx context.Context, o Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// OriginOf returns the origin ctx carries, if any.
func OriginOf(ctx context.Context) (Origin, bool) {
	o, ok := ctx.Value(originKey{}).(Origin)
	return o, ok
}

// origin is ctx's origin, its actor the service's (Config.Actor) when ctx
// names none.
func (s *Service) origin(ctx context.Context) Origin {
	o, _ := OriginOf(ctx)
	if o.Actor.Kind == "" {
		o.Actor = s.actor
	}
	return o
}

// Record writes an audit entry of action on objectID in store storeID ("" for
// an account-level action) in tx, the transaction of the change it records,
// as made by ctx's origin at the service's time. Every operation that
// changes something a member of a store would want accounted for calls it
// once, inside its transaction, after the change.
func (s *Service) Record(ctx context.Context, tx checkout.Tx, storeID string, action checkout.AuditAction, objectID string) error {
	return s.recordAs(ctx, tx, s.origin(ctx).Actor, storeID, action, objectID)
}

// recordAs is Record with the actor given: a refund's or a dispute
// answer's, which the API names too (an API key).
func (s *Service) recordAs(ctx context.Context, tx checkout.Tx, by checkout.Actor, storeID string, action checkout.AuditAction, objectID string) error {
	o := s.origin(ctx)
	return tx.AuditInsert(ctx, checkout.NewAuditEntry(storeID, by, action, objectID, o.ClientAddress, o.UserAgent, s.now()))
}

// maxActorFilter bounds the actor filter: an email is at most 254
// characters, an id 37.
const maxActorFilter = 300

// AuditFilter narrows the audit list; every field set applies.
type AuditFilter struct {
	// Actor is an account's email or id (acct_...), an API key's id
	// (key_...), cli:USER for the operator at the command line, or
	// email:ADDRESS for the failed sign-ins that tried an address.
	Actor string
	// Action is one of checkout.AuditActions.
	Action string
	// Since and Until bound the entries' time to [Since, Until); a zero
	// bound is open.
	Since, Until time.Time
}

// params validates f into the store's parameters for store storeID.
func (s *Service) auditParams(ctx context.Context, storeID string, f AuditFilter) (checkout.AuditListParams, error) {
	p := checkout.AuditListParams{MerchantID: storeID, Since: f.Since, Until: f.Until}
	var vs []checkout.Violation
	bad := func(param, msg string) {
		vs = append(vs, checkout.Violation{Code: "invalid_value", Param: param, Message: msg})
	}
	if f.Action != "" {
		p.Action = checkout.AuditAction(f.Action)
		if !p.Action.Valid() {
			bad("action", "action must be one of the actions recorded, such as api_key.create (docs/dashboard.md lists them).")
		}
	}
	actor := strings.TrimSpace(f.Actor)
	switch {
	case actor == "":
	case len(actor) > maxActorFilter:
		bad("actor", "actor is too long: an email, an id or cli:USER is at most 300 characters.")
	case validID(checkout.PrefixAccount, actor), validID(checkout.PrefixAPIKey, actor):
		p.ActorKey = actor
	case strings.HasPrefix(actor, "cli:") && len(actor) > len("cli:"):
		p.ActorKey = actor
	case strings.HasPrefix(actor, "email:") && strings.Contains(actor, "@"):
		// The failed sign-ins that tried an email, whether or not an
		// account has it.
		p.ActorKey = checkout.Actor{Kind: checkout.ActorAccount, Name: checkout.NormalizeEmail(strings.TrimPrefix(actor, "email:"))}.Key()
	case strings.Contains(actor, "@"):
		email := checkout.NormalizeEmail(actor)
		a, err := s.store.AccountGetByEmail(ctx, email)
		switch {
		case err == nil:
			p.ActorKey = a.ID
		case checkout.IsCode(err, checkout.ENotFound):
			// No account: the failed sign-ins that tried the email.
			p.ActorKey = checkout.Actor{Kind: checkout.ActorAccount, Name: email}.Key()
		default:
			return p, err
		}
	default:
		bad("actor", "actor must be an email, an account id (acct_...), an API key id (key_...), cli:USER or email:ADDRESS.")
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		bad("until", "The end of the date range is before its start.")
	}
	return p, violationsError(vs)
}

// ListAudit returns a page of store storeID's audit entries ("" for the
// account-level ones: sign-ins, the secrets key), newest first, that match
// f, after cursor ("" for the first page).
func (s *Service) ListAudit(ctx context.Context, storeID string, f AuditFilter, cursor string, limit int) (checkout.Page[*checkout.AuditEntry], error) {
	if storeID != "" {
		if err := s.authorize(ctx, storeID, checkout.ActionViewAudit); err != nil {
			return checkout.Page[*checkout.AuditEntry]{}, err
		}
	}
	var page checkout.Page[*checkout.AuditEntry]
	p, err := s.auditParams(ctx, storeID, f)
	if err != nil {
		return page, err
	}
	if p.After, err = checkout.ParseCursor(cursor); err != nil {
		return page, err
	}
	n := pageSize(limit)
	p.Limit = n + 1
	es, err := s.store.AuditList(ctx, p)
	if err != nil {
		return page, err
	}
	return pageOf(es, n, func(e *checkout.AuditEntry) checkout.Cursor { return checkout.Cursor{At: e.CreatedAt, ID: e.ID} }), nil
}
