// Package service is checkoutd's application core: the operations the API,
// the CLI, the payment page and the background jobs share.
// Each operation validates with the pure domain (package checkout) and
// writes through checkout.Store, every state change in one transaction with
// the events it emits.
package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/authlimit"
	"github.com/checkoutd/checkoutd/internal/clock"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/seal"
)

// Config configures a Service.
type Config struct {
	Store checkout.Store
	// Now is the clock; time.Now when nil.
	Now clock.Func
	// CheckoutBaseURL is the address of the hosted payment pages.
	CheckoutBaseURL string
	// BaseURL is the API's public address (--base-url): a signed request's
	// @target-uri is rebuilt from it, never from the Host header.
	BaseURL string
	Logger  *slog.Logger
	// KeyCacheTTL bounds how long a node trusts a cached API key or store,
	// and so how long a revoked key keeps working on a node; at most 5 s
	// (DESIGN.md 2), 2 s when zero.
	KeyCacheTTL time.Duration
	// URLs checks webhook endpoint URLs (the webhook guard); endpoints
	// cannot be created without it.
	URLs URLChecker
	// Notify, when set, is called after a transaction that created webhook
	// deliveries commits: it wakes the dispatcher, so a new event's first
	// attempt starts at once rather than at the next poll.
	Notify func()
	// Processors are the payment processors of each mode; a mode without
	// one for a method does not offer the method.
	Processors pay.Registry
	// CacheNow is the clock of those caches: time.Now when nil. They bound
	// staleness in real time, so they do not follow Now; tests that check
	// revocation move this one.
	CacheNow clock.Func
	// Actor is who makes the changes no request names (WithOrigin): the
	// CLI's operator. The audit trail records them as made by Actor.
	Actor checkout.Actor
	// SecretsKey is the operator's secrets key, which seals the secrets of
	// HMAC keys at rest (the server must keep them to verify signatures).
	// Without one, HMAC keys cannot be created, nor verified.
	SecretsKey *seal.Key
	// Acquirers are the card acquirers stores can set up their own
	// accounts at (SetAcquirerAccount), in the order storeAcquirer tries
	// them; none: live sessions offer no card through an acquirer. Their
	// secrets are sealed with SecretsKey.
	Acquirers []pay.AcquirerConnector
}

// Service runs checkoutd's operations.
type Service struct {
	store           checkout.Store
	now             clock.Func
	checkoutBaseURL string
	baseURL         string
	log             *slog.Logger
	urls            URLChecker
	notify          func()
	changes         changes
	// liveWatched is set once this process has had the live nodes watch
	// the open quotes' addresses again (ScanCrypto).
	liveWatched atomic.Bool
	procs       pay.Registry
	secrets     *seal.Key
	// connectors are the card acquirers stores can set up accounts at
	// (Config.Acquirers); tests add theirs (UseAcquirer), hence the lock.
	connectorsMu sync.Mutex
	connectors   []pay.AcquirerConnector
	actor        checkout.Actor
	keys         *ttlCache[*checkout.APIKey]
	unknownKeys  *ttlCache[struct{}]
	// keyIndex lists the keys that exist, for the clients over their
	// limit of failed authentications (BearerKeyMayExist).
	keyIndex  *keyIndex
	merchants *ttlCache[*checkout.Merchant]
	// signInFailures limit failed dashboard sign-ins per account email
	// and per client (SignIn).
	signInFailures struct{ byEmail, byClient *authlimit.Limiter[string] }
	counts         struct {
		created, expired     modeCounter
		capturedAfterFailure atomic.Int64
		// rowFailures counts, by job, the rows a job could not handle.
		rowFailures struct{ expiry, payments atomic.Int64 }
	}
}

// modeCounter counts by mode.
type modeCounter struct{ test, live atomic.Int64 }

func (c *modeCounter) inc(m checkout.Mode) {
	if m == checkout.ModeLive {
		c.live.Add(1)
		return
	}
	c.test.Add(1)
}

func (c *modeCounter) load() map[checkout.Mode]int64 {
	return map[checkout.Mode]int64{checkout.ModeTest: c.test.Load(), checkout.ModeLive: c.live.Load()}
}

// Stats are what this service did since it started, for metrics: sessions
// created (replays of an Idempotency-Key not counted) and expired (by the
// job or on read), by mode. Other nodes count their own.
type Stats struct {
	SessionsCreated map[checkout.Mode]int64
	SessionsExpired map[checkout.Mode]int64
	// CapturedAfterFailure counts payments whose processor took the money
	// after the payment had failed: each is flagged for refund.
	CapturedAfterFailure int64
	// RowFailures counts, by job (JobExpireSessions, JobPayments), the
	// sessions or payments a background job failed to handle; the job
	// logged each and carried on with the others.
	RowFailures map[string]int64
}

// The background jobs that run the service's work, as the jobs and
// metrics name them.
const (
	JobExpireSessions = "expire-sessions" // ExpireAll
	JobPayments       = "payments"        // ProcessAllDuePayments
	JobHome           = "home"            // KeepHome
)

// Stats returns the service's counts.
func (s *Service) Stats() Stats {
	return Stats{
		SessionsCreated:      s.counts.created.load(),
		SessionsExpired:      s.counts.expired.load(),
		CapturedAfterFailure: s.counts.capturedAfterFailure.Load(),
		RowFailures: map[string]int64{
			JobExpireSessions: s.counts.rowFailures.expiry.Load(),
			JobPayments:       s.counts.rowFailures.payments.Load(),
		},
	}
}

// eachDue runs one round of a background job over the rows it listed: do
// handles one row and says whether it changed it. A row that fails is
// logged at error level with the job and the row's id (under key, such as
// session_id) and counted (Stats.RowFailures), and the others are handled
// all the same; the errors come back together. A round cut short by
// shutdown stops at once: that is not the row's fault.
func eachDue[T any](ctx context.Context, s *Service, job, key string, rows []T, id func(T) string, do func(T) (bool, error)) (int, error) {
	n := 0
	var errs []error
	for _, r := range rows {
		changed, err := do(r)
		if err != nil {
			if ctx.Err() != nil {
				return n, err
			}
			switch job {
			case JobExpireSessions:
				s.counts.rowFailures.expiry.Add(1)
			case JobPayments:
				s.counts.rowFailures.payments.Add(1)
			}
			level := slog.LevelError
			if checkout.IsCode(err, checkout.EUnavailable) {
				level = slog.LevelWarn // the database, for now (a failover): over by itself
			}
			s.log.Log(ctx, level, "background job failed on a row; carrying on with the others", "job", job, key, id(r), "error", err)
			errs = append(errs, fmt.Errorf("%s %s: %w", key, id(r), err))
			continue
		}
		if changed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// MaxKeyCacheTTL is the longest a revoked key may keep working on a node.
const MaxKeyCacheTTL = 5 * time.Second

// DefaultKeyCacheTTL is how long a node trusts what it read of a key (known,
// revoked or unknown) when Config.KeyCacheTTL is zero.
const DefaultKeyCacheTTL = 2 * time.Second

// maxCached bounds each cache: a flood of made-up keys starts the cache of
// unknown keys afresh rather than growing it.
const maxCached = 10000

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.CacheNow == nil {
		cfg.CacheNow = time.Now
	}
	if cfg.KeyCacheTTL <= 0 || cfg.KeyCacheTTL > MaxKeyCacheTTL {
		cfg.KeyCacheTTL = DefaultKeyCacheTTL
	}
	s := &Service{
		store:           cfg.Store,
		now:             cfg.Now,
		checkoutBaseURL: cfg.CheckoutBaseURL,
		baseURL:         cfg.BaseURL,
		log:             cfg.Logger,
		urls:            cfg.URLs,
		notify:          cfg.Notify,
		procs:           cfg.Processors,
		secrets:         cfg.SecretsKey,
		connectors:      cfg.Acquirers,
		actor:           cfg.Actor,
		keys:            newTTLCache[*checkout.APIKey](cfg.KeyCacheTTL, maxCached, cfg.CacheNow),
		unknownKeys:     newTTLCache[struct{}](cfg.KeyCacheTTL, maxCached, cfg.CacheNow),
		merchants:       newTTLCache[*checkout.Merchant](cfg.KeyCacheTTL, maxCached, cfg.CacheNow),
		keyIndex:        newKeyIndex(cfg.Store, cfg.Now),
	}
	s.signInFailures.byEmail = authlimit.New[string](SignInFailureLimit, SignInFailureWindow, cfg.Now)
	s.signInFailures.byClient = authlimit.New[string](SignInFailureLimit, SignInFailureWindow, cfg.Now)
	return s
}

// URLChecker validates a webhook endpoint URL and returns it normalized.
type URLChecker interface {
	CheckURL(ctx context.Context, raw string) (string, error)
}

// Store returns the store the service writes to.
func (s *Service) Store() checkout.Store { return s.store }

// CheckoutBaseURL returns the address of the payment pages: a crypto
// refund's link is under it.
func (s *Service) CheckoutBaseURL() string { return s.checkoutBaseURL }

// Now returns the service's current time.
func (s *Service) Now() time.Time { return s.now() }

// CreateMerchant creates a store.
func (s *Service) CreateMerchant(ctx context.Context, p checkout.MerchantParams) (*checkout.Merchant, error) {
	m, err := checkout.NewMerchant(p, s.now())
	if err != nil {
		return nil, err
	}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.MerchantInsert(ctx, m); err != nil {
			return err
		}
		return s.Record(ctx, tx, m.ID, checkout.AuditStoreCreate, m.ID)
	})
	return m, err
}

// Merchant returns a store, from a cache at most KeyCacheTTL old.
func (s *Service) Merchant(ctx context.Context, id string) (*checkout.Merchant, error) {
	if m, ok := s.merchants.get(id); ok {
		return m, nil
	}
	start := s.merchants.start()
	m, err := s.store.MerchantGet(ctx, id)
	if err != nil {
		return nil, err
	}
	s.merchants.put(id, m, start)
	return m, nil
}

// CreateAPIKey creates a key for an existing store and returns it with its
// secret, which is never available again. An HMAC key's secret is kept
// sealed with the secrets key, and without one an HMAC key is refused: a
// signing secret is never stored in the clear (docs/operations.md).
func (s *Service) CreateAPIKey(ctx context.Context, p checkout.APIKeyParams) (*checkout.APIKey, string, error) {
	if err := s.authorize(ctx, p.MerchantID, checkout.ActionManageKeys); err != nil {
		return nil, "", err
	}
	k, secret, err := checkout.NewAPIKey(p, s.now())
	if err != nil {
		return nil, "", err
	}
	if k.Type == checkout.KeyHMAC {
		if s.secrets == nil {
			return nil, "", noSecretsKey()
		}
		k.SealedSecret = s.secrets.Seal(secret, k.ID)
	}
	if _, err := s.store.MerchantGet(ctx, p.MerchantID); err != nil {
		return nil, "", err
	}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.APIKeyInsert(ctx, k); err != nil {
			return err
		}
		return s.Record(ctx, tx, k.MerchantID, checkout.AuditAPIKeyCreate, k.ID)
	})
	if err != nil {
		return nil, "", err
	}
	s.keyIndex.add(k)
	return k, secret, nil
}

// noSecretsKey refuses an HMAC key on a server without a secrets key. It
// is a validation error of the type, so the CLI and the dashboard's form
// show it beside the field, with what the operator must do.
func noSecretsKey() error {
	return &checkout.Error{
		Code:    checkout.EValidationFailed,
		Message: "HMAC keys are not available: this server has no secrets key to keep their secrets encrypted. The operator sets one with --secrets-key or CHECKOUTD_SECRETS_KEY (docs/operations.md).",
		Param:   "type",
		Details: []checkout.Violation{{Code: "invalid_value", Param: "type",
			Message: "HMAC keys need the server's secrets key (--secrets-key or CHECKOUTD_SECRETS_KEY), and none is set."}},
	}
}

// HMACSecret returns the secret of an HMAC key, opened with the secrets
// key, to verify a signature with. It fails with internal_error, whose
// cause (for the log, never the secret) says what the operator must fix:
// no secrets key, another secrets key than the one that sealed it, or a
// sealed value that was altered or moved from another key.
func (s *Service) HMACSecret(k *checkout.APIKey) (string, error) {
	fail := func(cause error) error {
		return checkout.Internal(fmt.Errorf("the secret of HMAC key %s: %w", k.ID, cause))
	}
	switch {
	case k.Type != checkout.KeyHMAC:
		return "", fail(errors.New("not an HMAC key"))
	case s.secrets == nil:
		return "", fail(errors.New("this server has no secrets key (--secrets-key or CHECKOUTD_SECRETS_KEY) to open it with"))
	case k.SealedSecret == "":
		return "", fail(errors.New("the key has no sealed secret"))
	}
	secret, err := s.secrets.Open(k.SealedSecret, k.ID)
	if err != nil {
		return "", fail(err)
	}
	return secret, nil
}

// ResealSecrets seals every stored secret again with next (its newest
// key), in one transaction: HMAC keys' secrets and stores' acquirer
// accounts' secret keys and webhook secrets. Each is opened with the
// service's secrets key (which may carry older keys, seal.ParseKeys) and
// sealed with next. When one cannot be opened (sealed with a key given to
// neither), nothing changes, and the error names the API key or the
// store's account, and the key ids. It returns how many secrets it sealed
// again (two an acquirer account). The service goes on with the keys it was
// made with: a process must start with next to open what is sealed now.
func (s *Service) ResealSecrets(ctx context.Context, next *seal.Key) (int, error) {
	if s.secrets == nil {
		return 0, errors.New("no secrets key to open the stored secrets with")
	}
	next = next.Newest()
	n := 0
	err := s.store.InTx(ctx, func(tx checkout.Tx) error {
		keys, err := tx.APIKeyListSealed(ctx)
		if err != nil {
			return err
		}
		n = len(keys)
		for _, k := range keys {
			secret, err := s.secrets.Open(k.SealedSecret, k.ID)
			if err != nil {
				return fmt.Errorf("the secret of HMAC key %s does not open with the secrets keys given (ids %s): %w; nothing was changed",
					k.ID, strings.Join(s.secrets.IDs(), ", "), err)
			}
			if err := tx.APIKeySetSealed(ctx, k.ID, next.Seal(secret, k.ID)); err != nil {
				return err
			}
		}
		accounts, err := tx.AcquirerAccountListSealed(ctx)
		if err != nil {
			return err
		}
		for _, a := range accounts {
			c, err := s.openAcquirer(a)
			if err != nil {
				return fmt.Errorf("the %s account of store %s in %s mode: %w; the secrets keys given have ids %s; nothing was changed",
					a.Acquirer, a.MerchantID, a.Mode, err, strings.Join(s.secrets.IDs(), ", "))
			}
			resealed := *a
			sealAcquirer(next, &resealed, c)
			if err := tx.AcquirerAccountSetSealed(ctx, &resealed); err != nil {
				return err
			}
			n += 2
		}
		// The secrets key is the operator's, for every store: an
		// account-level entry, naming the new key's id (never the key).
		return s.Record(ctx, tx, "", checkout.AuditSecretsRotate, next.ID())
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// RevokeAPIKey revokes a key. Every node stops accepting it within
// KeyCacheTTL. Revoking a revoked key changes nothing (and records
// nothing).
func (s *Service) RevokeAPIKey(ctx context.Context, id string) (*checkout.APIKey, error) {
	k, err := s.store.APIKeyGet(ctx, id)
	if checkout.IsCode(err, checkout.ENotFound) {
		// As the revoke itself says it (the CLI echoes the id it was
		// given, redacted when it is a secret).
		return nil, checkout.Errorf(checkout.ENotFound, "No such API key: %s.", id)
	}
	if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil {
		return k, nil
	}
	err = s.store.InTx(ctx, func(tx checkout.Tx) error {
		if err := tx.APIKeyRevoke(ctx, id, s.now()); err != nil {
			return err
		}
		return s.Record(ctx, tx, k.MerchantID, checkout.AuditAPIKeyRevoke, k.ID)
	})
	if err != nil {
		return nil, err
	}
	return s.store.APIKeyGet(ctx, id)
}

// Authenticate returns the live bearer key whose secret this is. Unknown,
// revoked and malformed secrets all fail with invalid_api_key, saying
// nothing of which; so does an HMAC key's secret, which must never be
// accepted as a bearer secret, whoever the caller is.
//
// Only a secret of a bearer key's shape costs a database read, and only
// once per KeyCacheTTL: known keys and unknown secrets alike are cached for
// that long. A key created after its secret was tried (on another node: a
// new key's 256 random bits cannot have been tried before it existed) works
// on this node within KeyCacheTTL, as a revoked one stops working.
func (s *Service) Authenticate(ctx context.Context, secret string) (*checkout.APIKey, error) {
	invalid := checkout.Errorf(checkout.EInvalidAPIKey, "The API key is not valid: it is unknown, revoked or malformed.")
	if _, typ, ok := checkout.ParseSecret(secret); !ok || typ != checkout.KeyBearer {
		return nil, invalid
	}
	hash := checkout.HashSecret(secret)
	k, ok := s.keys.get(hash)
	if !ok {
		if _, unknown := s.unknownKeys.get(hash); unknown {
			return nil, invalid
		}
		var err error
		start := s.keys.start()
		k, err = s.store.APIKeyGetByHash(ctx, hash)
		if checkout.IsCode(err, checkout.ENotFound) {
			s.unknownKeys.put(hash, struct{}{}, start)
			return nil, invalid
		}
		if err != nil {
			return nil, err
		}
		s.keys.put(hash, k, start)
	}
	if !k.MatchesSecret(secret) || k.Revoked() {
		return nil, invalid
	}
	return k, nil
}

// BearerKeyMayExist reports whether secret may be a live bearer key's,
// without reading the key: what a client over its limit of failed
// authentications is asked first, so that its made-up keys cost the
// database nothing while its valid ones still get in. It is false for a
// secret of the wrong shape, one this node read as unknown or revoked
// within the key cache's time, and one the node's index of keys does not
// hold (keyIndex, read again if need be for keys created since the call
// began); true for a key cached as valid and for one the index holds,
// which Authenticate then reads and checks.
func (s *Service) BearerKeyMayExist(ctx context.Context, secret string) (bool, error) {
	if _, typ, ok := checkout.ParseSecret(secret); !ok || typ != checkout.KeyBearer {
		return false, nil
	}
	hash := checkout.HashSecret(secret)
	if k, ok := s.keys.get(hash); ok {
		return k.MatchesSecret(secret) && !k.Revoked(), nil
	}
	if _, unknown := s.unknownKeys.get(hash); unknown {
		return false, nil
	}
	return s.keyIndex.contains(ctx, s.keyIndex.bearerPrint(hash))
}

// SigningKeyMayExist is BearerKeyMayExist for the keyid of a signed
// request: false for an id of the wrong shape, one cached as another
// kind of key or revoked, and one the index of keys does not hold.
func (s *Service) SigningKeyMayExist(ctx context.Context, id string) (bool, error) {
	if !validKeyID(id) {
		return false, nil
	}
	if k, ok := s.keys.get("id:" + id); ok {
		return k.Type == checkout.KeyHMAC && !k.Revoked(), nil
	}
	return s.keyIndex.contains(ctx, s.keyIndex.idPrint(id))
}

// requestHash is the fingerprint of a create request that an
// Idempotency-Key is bound to: the validated parameters in canonical form,
// so that a retry re-serialized by the client with its keys in another order
// or other spacing still matches.
func requestHash(storeID string, p *checkout.CreateParams) string {
	canon, _ := json.Marshal(struct {
		Store  string
		Params *checkout.CreateParams
	}{storeID, p})
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}
