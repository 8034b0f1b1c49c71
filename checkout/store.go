package checkout

import (
	"context"
	"time"
)

// Store is where checkoutd keeps its state: SQLite or PostgreSQL, with the
// same behaviour (internal/store, checked by one conformance suite).
//
// Reads outside a transaction see committed data. Every state change and the
// events it emits are written through InTx, in one transaction.
type Store interface {
	// MerchantGet fails with store_not_found when there is no such store.
	MerchantGet(ctx context.Context, id string) (*Merchant, error)
	MerchantList(ctx context.Context) ([]*Merchant, error)

	// APIKeyGetByHash finds a key, revoked or not, by the hash of its
	// secret; not_found when none matches.
	APIKeyGetByHash(ctx context.Context, secretHash string) (*APIKey, error)
	// APIKeyGet fails with not_found when there is no such key.
	APIKeyGet(ctx context.Context, id string) (*APIKey, error)
	APIKeyList(ctx context.Context, merchantID string) ([]*APIKey, error)
	// APIKeyEachActive calls each with the id, type and secret hash of
	// every store's unrevoked keys created at or after since (all of them
	// for the zero time), in no order.
	APIKeyEachActive(ctx context.Context, since time.Time, each func(id string, typ KeyType, secretHash string)) error

	// AccountGet and AccountGetByEmail fail with not_found when there is no
	// such account. The email is matched exactly: callers normalise it
	// (NormalizeEmail).
	AccountGet(ctx context.Context, id string) (*Account, error)
	AccountGetByEmail(ctx context.Context, email string) (*Account, error)
	// MembershipGet fails with not_found when the account is not a member
	// of the store.
	MembershipGet(ctx context.Context, accountID, merchantID string) (*Membership, error)
	// MembershipList returns an account's memberships, oldest first.
	MembershipList(ctx context.Context, accountID string) ([]*Membership, error)
	// InvitationGetByHash finds an invitation by its token's hash;
	// not_found when none has it.
	InvitationGetByHash(ctx context.Context, tokenHash string) (*Invitation, error)
	// InvitationListPending returns a store's invitations whose links work
	// at now, newest first.
	InvitationListPending(ctx context.Context, merchantID string, now time.Time) ([]*Invitation, error)
	// MembershipListByStore returns a store's members with their emails,
	// oldest first.
	MembershipListByStore(ctx context.Context, merchantID string) ([]*Membership, error)
	// AccountsExist reports whether there is any account at all.
	AccountsExist(ctx context.Context) (bool, error)
	// DashboardSessionGet fails with not_found when there is no session
	// with this id (the hash of its token), expired or not.
	DashboardSessionGet(ctx context.Context, id string) (*DashboardSession, error)
	// SetupTokenGet fails with not_found when no token has this hash.
	SetupTokenGet(ctx context.Context, hash string) (*SetupToken, error)
	// SignatureNonceUse records a signed request's nonce for its key until
	// expires, and reports whether it was fresh: false when any node
	// recorded it before and it has not expired at now.
	SignatureNonceUse(ctx context.Context, keyID, nonce string, now, expires time.Time) (bool, error)
	// SignatureNoncePurge deletes the nonces that expired before t.
	SignatureNoncePurge(ctx context.Context, before time.Time) (int64, error)
	// DashboardSessionPurge and SetupTokenPurge delete the sessions and
	// tokens that expired before t.
	DashboardSessionPurge(ctx context.Context, before time.Time) (int64, error)
	SetupTokenPurge(ctx context.Context, before time.Time) (int64, error)

	// SessionGet returns a session of any store and mode (the caller checks
	// they match); checkout_not_found when there is none.
	SessionGet(ctx context.Context, id string) (*Session, error)
	// SessionListDue returns at most limit open sessions whose expires_at is
	// at or before now and that have no payment in progress, oldest first.
	SessionListDue(ctx context.Context, now time.Time, limit int) ([]*Session, error)

	// SessionList returns a page of a store's sessions of one mode, newest
	// first by (CreatedAt, ID), with p's filters: the dashboard's Sessions.
	SessionList(ctx context.Context, p SessionListParams) ([]*Session, error)

	// PaymentGet fails with not_found when there is no such payment.
	PaymentGet(ctx context.Context, id string) (*Payment, error)
	// PaymentListBySession returns a session's payments, oldest first.
	PaymentListBySession(ctx context.Context, sessionID string) ([]*Payment, error)
	// PaymentListDue returns at most limit payments whose DueAt is at or
	// before now, the longest due first.
	PaymentListDue(ctx context.Context, now time.Time, limit int) ([]*Payment, error)
	// PaymentList returns a page of a store's payments of one mode, newest
	// first by (CreatedAt, ID), with p's filters: the dashboard's Payments.
	PaymentList(ctx context.Context, p PaymentListParams) ([]*Payment, error)

	// DisputeGet and DisputeGetByPayment fail with not_found when there is
	// no such dispute.
	DisputeGet(ctx context.Context, id string) (*Dispute, error)
	DisputeGetByPayment(ctx context.Context, paymentID string) (*Dispute, error)
	// DisputeListDue returns at most limit disputes whose DueAt is at or
	// before now, the longest due first.
	DisputeListDue(ctx context.Context, now time.Time, limit int) ([]*Dispute, error)
	// DisputeListOpen returns at most limit of a store's open disputes of
	// one mode, the nearest deadline first.
	DisputeListOpen(ctx context.Context, merchantID string, mode Mode, limit int) ([]*Dispute, error)

	// RefundGet fails with not_found when there is no such refund.
	RefundGet(ctx context.Context, id string) (*Refund, error)
	// RefundGetByLink fails with not_found when no refund has the link
	// token.
	RefundGetByLink(ctx context.Context, token string) (*Refund, error)
	// RefundListByPayout returns the pending refunds paying an address of
	// a coin, oldest first.
	RefundListByPayout(ctx context.Context, coin, address string) ([]*Refund, error)
	// RefundListAwaitingPayout returns the pending refunds with a payout
	// address, oldest first.
	RefundListAwaitingPayout(ctx context.Context) ([]*Refund, error)
	// RefundListByPayment returns a payment's refunds, oldest first.
	RefundListByPayment(ctx context.Context, paymentID string) ([]*Refund, error)
	// RefundListDue returns at most limit refunds whose DueAt is at or
	// before now, the longest due first.
	RefundListDue(ctx context.Context, now time.Time, limit int) ([]*Refund, error)
	// HomeDays returns a store's figures for each day of p.From to p.To,
	// in order, a day with nothing in it with zeros (docs/dashboard.md,
	// Home). Days and hours that ended before p.Settled are counted once and
	// kept; the hours after are counted at each read.
	HomeDays(ctx context.Context, p HomeDaysParams) ([]HomeDay, error)
	// HomeKeep keeps a store's days and hours of p.From to p.To that ended
	// before p.Settled and are not kept yet, as HomeDays would, and counts
	// nothing after: the home job's work, so that a view finds them kept.
	HomeKeep(ctx context.Context, p HomeDaysParams) error
	// HomeHoursPurge deletes the kept hours that began before t; their days
	// are kept whole by then.
	HomeHoursPurge(ctx context.Context, before time.Time) (int64, error)
	// CommitMarkPurge deletes the write transactions' marks made before t:
	// they resolve a COMMIT lost in a failover, within a minute or so.
	CommitMarkPurge(ctx context.Context, before time.Time) (int64, error)
	// SessionExportPage and PaymentExportPage return a page of a store's
	// sessions or payments for an export (ExportParams), oldest first; a
	// payment with its dispute's status.
	SessionExportPage(ctx context.Context, p ExportParams) ([]*Session, error)
	PaymentExportPage(ctx context.Context, p ExportParams) ([]*ExportPayment, error)
	// DeliveryCountFailed counts a store's deliveries of one mode that
	// failed, created at or after since, up to limit: the count stops
	// there.
	DeliveryCountFailed(ctx context.Context, merchantID string, mode Mode, since time.Time, limit int) (int, error)
	// RefundListPayoutPending returns at most limit of a store's pending
	// refunds of one mode with a payout address (crypto refunds the
	// merchant is to pay, or whose payout confirms), oldest first.
	RefundListPayoutPending(ctx context.Context, merchantID string, mode Mode, limit int) ([]*Refund, error)
	// PaymentCountRefundDue counts a store's payments of one mode that are
	// to be refunded (Payment.RefundDue), up to limit: the count stops there.
	PaymentCountRefundDue(ctx context.Context, merchantID string, mode Mode, limit int) (int, error)
	// CryptoKeyActive returns a store's active key for a coin; not_found
	// when it has none.
	CryptoKeyActive(ctx context.Context, merchantID, coin string) (*CryptoKey, error)
	// CryptoKeyList returns a store's active keys, by coin.
	CryptoKeyList(ctx context.Context, merchantID string) ([]*CryptoKey, error)
	// AcquirerAccountGet returns a store's account at an acquirer in a
	// mode; not_found when it has none.
	AcquirerAccountGet(ctx context.Context, merchantID string, mode Mode, acquirer string) (*AcquirerAccount, error)
	// AcquirerAccountList returns a store's acquirer accounts, by mode and
	// acquirer.
	AcquirerAccountList(ctx context.Context, merchantID string) ([]*AcquirerAccount, error)
	// CryptoQuoteAddressesOpen returns the addresses of a coin's live
	// quotes whose session is still open.
	CryptoQuoteAddressesOpen(ctx context.Context, coin string) ([]string, error)
	// CryptoQuoteByAddress returns the quote that pays to a coin's address;
	// not_found when none does.
	CryptoQuoteByAddress(ctx context.Context, coin, address string) (*CryptoQuote, error)
	// CryptoQuoteGet returns a session's quote for a coin; not_found when
	// there is none.
	CryptoQuoteGet(ctx context.Context, sessionID, coin string) (*CryptoQuote, error)

	// IdempotencyGet returns the saved outcome of a create request; not_found
	// when there is none.
	IdempotencyGet(ctx context.Context, merchantID string, mode Mode, key string) (*IdempotencyRecord, error)
	// IdempotencyPurge deletes records created before t.
	IdempotencyPurge(ctx context.Context, before time.Time) (int64, error)

	// EventList returns at most p.Limit events of p's store and mode, newest
	// first, after p.After and matching every filter of p.
	EventList(ctx context.Context, p EventListParams) ([]*Event, error)
	// EventListByObject returns the events about any of the objects
	// (sessions' or payments' ids), oldest first: what a session's page
	// shows of its own and its payments' events.
	EventListByObject(ctx context.Context, objectIDs []string) ([]*Event, error)
	// EventGet fails with not_found when there is no such event.
	EventGet(ctx context.Context, id string) (*Event, error)
	// EventPurge deletes events created before t, with their deliveries and
	// attempts.
	EventPurge(ctx context.Context, before time.Time) (int64, error)

	// EndpointGet fails with not_found when there is no such endpoint.
	EndpointGet(ctx context.Context, id string) (*Endpoint, error)
	// EndpointList returns a store's endpoints, both modes, oldest first.
	EndpointList(ctx context.Context, merchantID string) ([]*Endpoint, error)

	// DeliveryGet fails with not_found when there is no such delivery.
	DeliveryGet(ctx context.Context, id string) (*Delivery, error)
	// DeliveryList returns an endpoint's deliveries, newest first.
	DeliveryList(ctx context.Context, p DeliveryListParams) ([]*Delivery, error)
	// DeliveryListLatest returns, for each of the events, the latest
	// delivery of it to each endpoint (a resend is a later delivery), in
	// one query: what a page of events shows of their deliveries. No order.
	DeliveryListLatest(ctx context.Context, eventIDs []string) ([]*Delivery, error)
	// DeliveryListPage returns a page of a store and mode's deliveries,
	// newest first, by f (validated), and the cursor of the next page. Each
	// filter is served by an index, so a page costs about the same at any
	// depth and with a million deliveries kept.
	DeliveryListPage(ctx context.Context, f DeliveryFilter) (Page[*Delivery], error)
	// AttemptList returns a delivery's attempts in order.
	AttemptList(ctx context.Context, deliveryID string) ([]*Attempt, error)
	// EndpointHealthGet reads an endpoint's health as of now, through
	// indexes bounded by the endpoint (never a scan of every delivery).
	EndpointHealthGet(ctx context.Context, endpointID string, now time.Time) (*EndpointHealth, error)
	// ListenerNext returns a listener's oldest pending delivery with its
	// event, or nil when none waits, if the stream conn still holds the
	// listener (current); when it does not (a newer stream replaced it, or
	// the listener was deleted), current is false and l nil.
	ListenerNext(ctx context.Context, endpointID, conn string) (l *Listened, current bool, err error)
	// ListenerTouch notes that the stream conn of a listener is still
	// connected at seen (or, with release, was until seen, and is no
	// longer). It reports whether conn still holds the listener: false when
	// a newer stream replaced it or the listener is gone.
	ListenerTouch(ctx context.Context, endpointID, conn string, seen time.Time, release bool) (bool, error)
	// DeliveryCountPending counts the pending deliveries of every store: the
	// queue's depth. Metrics read it at every scrape, so it stays cheap.
	DeliveryCountPending(ctx context.Context, now time.Time) (PendingDeliveries, error)

	// RequestLogInsert writes a batch of request logs in one transaction.
	// In the same transaction it sets the LastUsedAt of each key of the
	// batch to its latest log's time, unless that is less than a minute
	// after the time already stored (APIKeyUseGranularity): a busy key costs
	// one write a minute, not one per request.
	RequestLogInsert(ctx context.Context, logs []*RequestLog) error
	// RequestLogGet fails with not_found when there is no such log.
	RequestLogGet(ctx context.Context, requestID string) (*RequestLog, error)
	// RequestLogList returns at most p.Limit logs of p's store and mode,
	// newest first, after p.After and matching every filter of p.
	RequestLogList(ctx context.Context, p RequestLogListParams) ([]*RequestLog, error)
	// RequestLogPurge deletes logs created before t.
	RequestLogPurge(ctx context.Context, before time.Time) (int64, error)

	// AuditList returns at most p.Limit audit entries of p's store (the
	// account-level ones for ""), newest first, after p.After and matching
	// every filter of p.
	AuditList(ctx context.Context, p AuditListParams) ([]*AuditEntry, error)
	// AuditPurge deletes the audit entries made before t. Nothing else
	// deletes or changes an entry.
	AuditPurge(ctx context.Context, before time.Time) (int64, error)

	// InTx runs fn in one write transaction, committed when fn returns nil
	// and rolled back otherwise.
	InTx(ctx context.Context, fn func(Tx) error) error

	// Ping checks the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// Tx is a write transaction.
type Tx interface {
	MerchantInsert(ctx context.Context, m *Merchant) error
	// MerchantUpdate writes a store's name, currency, website, statement
	// descriptor and pricing; store_not_found when there is no such store.
	MerchantUpdate(ctx context.Context, m *Merchant) error
	APIKeyInsert(ctx context.Context, k *APIKey) error
	// APIKeyListSealed returns every key with a sealed secret (the HMAC
	// keys), revoked or not, oldest first, locked for the transaction;
	// APIKeySetSealed writes one's sealed secret (not_found when there is
	// no such key). Rotating the secrets key seals them all again.
	APIKeyListSealed(ctx context.Context) ([]*APIKey, error)
	APIKeySetSealed(ctx context.Context, id, sealed string) error
	// AcquirerAccountPut stores a store's account at an acquirer in a
	// mode, in place of the one it had; AcquirerAccountDelete deletes it
	// (not_found when there is none).
	AcquirerAccountPut(ctx context.Context, a *AcquirerAccount) error
	AcquirerAccountDelete(ctx context.Context, merchantID string, mode Mode, acquirer string) error
	// AcquirerAccountListSealed returns every store's acquirer account,
	// locked for the transaction; AcquirerAccountSetSealed writes one's
	// sealed secrets (not_found when there is no such account). Rotating
	// the secrets key seals them all again.
	AcquirerAccountListSealed(ctx context.Context) ([]*AcquirerAccount, error)
	AcquirerAccountSetSealed(ctx context.Context, a *AcquirerAccount) error
	// APIKeyRevoke marks a key revoked at t; not_found when there is no such
	// key. Revoking a revoked key keeps the first time.
	APIKeyRevoke(ctx context.Context, id string, t time.Time) error

	// AccountInsert fails with conflict when the id or the email is taken.
	AccountInsert(ctx context.Context, a *Account) error
	// AccountSetPasswordHash replaces an account's password hash; not_found
	// when there is no such account.
	AccountSetPasswordHash(ctx context.Context, id, hash string) error
	// MembershipInsert fails with conflict when the account is a member of
	// the store already.
	MembershipInsert(ctx context.Context, m *Membership) error
	// MembershipListForUpdate returns a store's members, oldest first,
	// locking them until the transaction ends: a change that must leave
	// the store an administrator sees every other change made at once.
	MembershipListForUpdate(ctx context.Context, merchantID string) ([]*Membership, error)
	// MembershipSetRole changes a member's role; not_found when the
	// account is not a member of the store.
	MembershipSetRole(ctx context.Context, accountID, merchantID string, r Role) error
	// MembershipDelete removes a member from a store; not_found when the
	// account is not a member of it.
	MembershipDelete(ctx context.Context, accountID, merchantID string) error
	// InvitationInsert stores a new invitation.
	InvitationInsert(ctx context.Context, inv *Invitation) error
	// InvitationAccept marks an invitation used by an account at t, if its
	// link still works then: not_found when it does not (used, revoked,
	// expired or unknown), so that of two accepting at once exactly one
	// succeeds.
	InvitationAccept(ctx context.Context, id, accountID string, t time.Time) error
	// InvitationRevoke takes back a store's pending invitation at t;
	// not_found when the store has no such invitation still pending.
	InvitationRevoke(ctx context.Context, id, merchantID string, t time.Time) error
	// DashboardSessionInsert fails with conflict when the id is taken.
	DashboardSessionInsert(ctx context.Context, ds *DashboardSession) error
	// DashboardSessionTouch sets a session's last_seen_at; not_found when
	// there is no such session.
	DashboardSessionTouch(ctx context.Context, id string, t time.Time) error
	// DashboardSessionDelete deletes a session; deleting one that does not
	// exist succeeds.
	DashboardSessionDelete(ctx context.Context, id string) error
	// SetupTokenInsert fails with conflict when the hash is taken.
	SetupTokenInsert(ctx context.Context, st *SetupToken) error
	// SetupTokenUse marks an unused token that has not expired at t as used
	// at t, once: not_found when no token has the hash, or it is used, or
	// it expired (at or before t). Of two transactions using one token,
	// one succeeds.
	SetupTokenUse(ctx context.Context, hash string, t time.Time) error

	SessionInsert(ctx context.Context, s *Session) error
	// SessionGetForUpdate reads a session and locks it until the
	// transaction ends; checkout_not_found when there is none.
	SessionGetForUpdate(ctx context.Context, id string) (*Session, error)
	// SessionUpdate writes the mutable fields of s: status, payment,
	// completion time and whether a payment is in progress.
	SessionUpdate(ctx context.Context, s *Session) error

	EventInsert(ctx context.Context, e *Event) error

	// PaymentInsert stores a new payment; PaymentUpdate writes its mutable
	// fields. Both fail with conflict when the payment would be a second
	// captured payment of its session: the database's own guarantee that
	// one payment, and only one, collects a session.
	PaymentInsert(ctx context.Context, p *Payment) error
	PaymentUpdate(ctx context.Context, p *Payment) error
	// PaymentGetForUpdate reads and locks a payment; not_found when there
	// is none.
	PaymentGetForUpdate(ctx context.Context, id string) (*Payment, error)
	// PaymentGetByTxHash returns the crypto payment of a session made by a
	// transaction; not_found when there is none. PaymentInsert refuses a
	// second one with conflict.
	PaymentGetByTxHash(ctx context.Context, sessionID, txHash string) (*Payment, error)
	// PaymentCountFailed counts a session's failed payments of a method.
	PaymentCountFailed(ctx context.Context, sessionID string, method PaymentMethod) (int, error)
	// DisputeInsert stores a new dispute (conflict for a second one of a
	// payment); DisputeUpdate writes its status, evidence, closing and due
	// time (not_found when there is no such dispute).
	DisputeInsert(ctx context.Context, d *Dispute) error
	DisputeUpdate(ctx context.Context, d *Dispute) error
	// DisputeGetForUpdate reads and locks a dispute; not_found when there is
	// none.
	DisputeGetForUpdate(ctx context.Context, id string) (*Dispute, error)
	// DisputeGetByPaymentForUpdate returns a payment's dispute, locked.
	DisputeGetByPaymentForUpdate(ctx context.Context, paymentID string) (*Dispute, error)
	// RefundInsert stores a new refund; RefundUpdate writes its status,
	// failure and due time (not_found when there is no such refund).
	RefundInsert(ctx context.Context, r *Refund) error
	RefundUpdate(ctx context.Context, r *Refund) error
	// RefundGetForUpdate reads and locks a refund; not_found when there is
	// none.
	RefundGetForUpdate(ctx context.Context, id string) (*Refund, error)
	// CryptoKeySet makes k its store's active key for its coin, keeping the
	// index of a key of the same id set before, and returns it as stored.
	CryptoKeySet(ctx context.Context, k *CryptoKey) (*CryptoKey, error)
	// CryptoKeyRemove makes a store's key for a coin inactive; not_found
	// when there is none.
	CryptoKeyRemove(ctx context.Context, merchantID, coin string, now time.Time) error
	// CryptoKeyTake returns a store's active key for a coin, its NextIndex
	// the index to use now, and moves the key's index on, under its lock.
	CryptoKeyTake(ctx context.Context, merchantID, coin string) (*CryptoKey, error)
	// CryptoQuoteGet returns a session's quote for a coin, in the
	// transaction; not_found when there is none.
	CryptoQuoteGet(ctx context.Context, sessionID, coin string) (*CryptoQuote, error)
	// CryptoQuoteRequote prices a live quote again: a new amount, holding
	// until expiresAt; its address stays.
	CryptoQuoteRequote(ctx context.Context, sessionID, coin, amountBase string, expiresAt time.Time) error
	// CryptoQuoteInsert stores a quote unless the session already has one
	// for its coin (the first one stands).
	CryptoQuoteInsert(ctx context.Context, q *CryptoQuote) error

	// IdempotencyInsert saves the outcome of a create request; conflict when
	// the key is taken by a record less than IdempotencyWindow older than
	// r. An older record of the key is replaced: its window is over.
	IdempotencyInsert(ctx context.Context, r *IdempotencyRecord) error

	// MerchantLock locks a store's row until the transaction ends, so that
	// checks of its limits (16 endpoints) hold under concurrency;
	// store_not_found when there is none.
	MerchantLock(ctx context.Context, id string) error

	EndpointInsert(ctx context.Context, e *Endpoint) error
	// EndpointGetForUpdate reads and locks an endpoint; not_found when there
	// is none.
	EndpointGetForUpdate(ctx context.Context, id string) (*Endpoint, error)
	// EndpointUpdate writes an endpoint's mutable fields: URL, events,
	// description, enabled flag, secrets and update time; not_found when
	// there is none.
	EndpointUpdate(ctx context.Context, e *Endpoint) error
	// EndpointDelete deletes an endpoint with its deliveries and attempts;
	// not_found when there is none. Like EndpointGetForUpdate it locks the
	// endpoint first, so it waits for a fan-out in progress.
	EndpointDelete(ctx context.Context, id string) error
	// EndpointCount counts a store's HTTPS endpoints (listeners aside).
	EndpointCount(ctx context.Context, merchantID string) (int, error)
	// EndpointListEnabled returns the enabled endpoints of a store and mode:
	// those an event of theirs may fan out to. They stay locked against
	// EndpointGetForUpdate and EndpointDelete until the transaction ends, so
	// an endpoint disabled or deleted at the same moment never keeps a
	// pending delivery.
	EndpointListEnabled(ctx context.Context, merchantID string, mode Mode) ([]*Endpoint, error)

	// ListenersForUpdate returns a store's listeners, the longest idle
	// first, locked until the transaction ends.
	ListenersForUpdate(ctx context.Context, merchantID string) ([]*Endpoint, error)
	// ListenerSeen notes that a listener was seen at seen (registered
	// again), whichever stream holds it.
	ListenerSeen(ctx context.Context, endpointID string, seen time.Time) error
	// ListenerConnect makes conn the stream holding a listener, connected
	// at seen; the stream it replaces learns it at its next ListenerTouch.
	ListenerConnect(ctx context.Context, endpointID, conn string, seen time.Time) error

	DeliveryInsert(ctx context.Context, d *Delivery) error
	// DeliveryGetForUpdate reads and locks a delivery; not_found when there
	// is none.
	DeliveryGetForUpdate(ctx context.Context, id string) (*Delivery, error)
	// DeliveryRecordListened stores attempt a of a pending delivery to a
	// listener and the delivery's new state (d after RecordListened).
	DeliveryRecordListened(ctx context.Context, a *Attempt, d *Delivery) error
	// DeliveryCancelPending cancels an endpoint's pending deliveries and
	// returns how many.
	DeliveryCancelPending(ctx context.Context, endpointID string, now time.Time) (int64, error)
	// DeliveryListRetryable returns at most limit of an endpoint's failed
	// deliveries created at or after since that were never resent (no
	// ResentAs), oldest first, and locks them until the transaction ends.
	DeliveryListRetryable(ctx context.Context, endpointID string, since time.Time, limit int) ([]*Delivery, error)
	// DeliveryMarkResent records on a delivery that resentAs is its newest
	// resend; not_found when there is no such delivery. Its update time
	// stays: that is when it finished.
	DeliveryMarkResent(ctx context.Context, id, resentAs string) error

	// AuditInsert records an audit entry, in the transaction of the change
	// it records: both are kept, or neither.
	AuditInsert(ctx context.Context, e *AuditEntry) error
}

// DeliveryListParams selects an endpoint's deliveries, newest first.
type DeliveryListParams struct {
	EndpointID string
	Limit      int
}

// PendingDeliveries is the depth of the delivery queue at a moment: the
// pending deliveries whose attempt is due (those being attempted included),
// and those waiting for a later retry.
type PendingDeliveries struct {
	Due     int64
	Waiting int64
}

// IdempotencyRecord is the saved outcome of a create request sent with an
// Idempotency-Key header, replayed for 24 hours.
type IdempotencyRecord struct {
	MerchantID  string
	Mode        Mode
	Key         string
	RequestHash string // hex SHA-256 of the canonical request
	Body        []byte // the created session as the API showed it
	CreatedAt   time.Time
}

// IdempotencyWindow is how long an Idempotency-Key is remembered.
const IdempotencyWindow = 24 * time.Hour

// CommitMarksKept is how long a write transaction's mark is kept: it is
// read only when the connection was lost during its COMMIT, within the
// failover budget (store/failover.go).
const CommitMarksKept = time.Hour

// RequestLog records one authenticated API request. Bodies have their
// secrets redacted and are valid UTF-8 without NUL (what both databases can
// store); headers are never kept.
type RequestLog struct {
	RequestID  string
	MerchantID string
	Mode       Mode
	APIKeyID   string
	Method     string
	Path       string
	// Route is the API endpoint the request reached, as its route pattern
	// without the method: /v1/stores/{storeId}/checkouts or
	// /v1/stores/{storeId}/checkouts/{checkoutId}. "" for logs written
	// before routes were recorded (migration 0011).
	Route        string
	Status       int
	Duration     time.Duration
	RequestBody  string
	ResponseBody string
	CreatedAt    time.Time
}

// Retention is how long events, deliveries and request logs are kept.
const Retention = 30 * 24 * time.Hour

// RequestLogListParams selects request logs of one store and mode, newest
// first by (CreatedAt, RequestID), with optional filters that all apply.
type RequestLogListParams struct {
	MerchantID string
	Mode       Mode
	// StatusClass is 2, 4 or 5 for the 2xx, 4xx or 5xx statuses; 0 for all.
	StatusClass int
	Method      string // "" for every method
	Route       string // an endpoint (RequestLog.Route); "" for every one
	APIKeyID    string // "" for every key
	// From and To bound CreatedAt to [From, To); a zero bound is open.
	From, To time.Time
	// After is the position the page starts after; zero for the newest.
	After Cursor
	Limit int // 50 when 0
}

// PaymentListParams selects payments of one store and mode, newest first
// by (CreatedAt, ID), with optional filters that all apply.
type PaymentListParams struct {
	MerchantID string
	Mode       Mode
	Status     PaymentStatus // "" for every status
	// RefundDue keeps only the payments to be refunded (Payment.RefundDue).
	RefundDue bool
	// After is the position the page starts after; zero for the newest.
	After Cursor
	Limit int // 50 when 0
}

// SessionListParams selects sessions of one store and mode, newest first
// by (CreatedAt, ID), with optional filters that all apply.
type SessionListParams struct {
	MerchantID string
	Mode       Mode
	// Status is a session status, "" for every one. With Now set, open
	// leaves out the sessions whose hour was over at Now with no payment
	// on its way: those the API answers as expired.
	Status Status
	Now    time.Time
	// From and To bound CreatedAt to [From, To); a zero bound is open.
	// Session times are whole seconds: a bound with a fraction counts from
	// the next second.
	From, To time.Time
	// The searches, at most one set: the sessions of a customer's email
	// (ASCII letters lower-cased), the sessions whose metadata has
	// MetadataKey with the value MetadataValue exactly.
	Email                      string
	MetadataKey, MetadataValue string
	// After is the position the page starts after; zero for the newest.
	After Cursor
	Limit int // 50 when 0
}

// EventListParams selects events of one store and mode, newest first by
// (CreatedAt, the order they were stored in), with optional filters.
type EventListParams struct {
	MerchantID string
	Mode       Mode
	Type       string // "" for all
	// From and To bound CreatedAt to [From, To); a zero bound is open. Event
	// times are whole seconds: a bound with a fraction counts from the next
	// second.
	From, To time.Time
	// After is the position the page starts after (CreatedAt and the id of
	// the last event of the previous page); zero for the newest.
	After Cursor
	Limit int // 100 when 0
}
