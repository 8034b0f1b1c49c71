package store

import "context"

// Claim in create: a transaction that inserts webhook deliveries also
// claims due deliveries for the webhook dispatcher of this process, as the
// dispatcher's own claim would (tx.claim: the earliest due of each
// endpoint, the endpoints' caps), and hands the claims to it once the
// transaction has committed. A new event's first attempt then starts as
// soon as its transaction commits, instead of after a claim transaction of
// the dispatcher's, which on SQLite waited for the one writer's batch in
// progress and on PostgreSQL for the claims' lock: the first attempt's
// latency while creates ran at their peak was a claim's wait.
//
// The leases are the claim's, in the same table: a process that dies
// before it attempts them loses nothing, its leases run out and another
// claim takes the deliveries. A transaction that does not commit hands
// nothing over. The claim is no one's write: if it fails, the batch runs
// again without it (the dispatcher, woken after the commit, claims them).

// Claimer is the webhook dispatcher of this process, as a transaction that
// inserts deliveries sees it.
type Claimer interface {
	// Reserve sets aside up to max of the dispatcher's free workers and
	// returns the parameters of a claim for them; Limit 0 when none is
	// free (or the dispatcher is not running). Every Reserve with a Limit
	// is followed by one Take.
	Reserve(max int) ClaimParams
	// Take starts the attempts of claims, leased to p.Owner, and frees the
	// workers reserved for p that they do not use. claims is nil when the
	// transaction did not commit.
	Take(p ClaimParams, claims []*Claim)
}

// claimerHolder lets SetClaimer swap the claimer atomically.
type claimerHolder struct{ c Claimer }

// SetClaimer has the transactions that insert deliveries claim for c
// (claim in create, above); nil stops it.
func (db *DB) SetClaimer(c Claimer) {
	if c == nil {
		db.claimer.Store(nil)
		return
	}
	db.claimer.Store(&claimerHolder{c})
}

// handover is a claim made in a transaction, for its claimer once the
// transaction has ended.
type handover struct {
	c       Claimer
	p       ClaimParams
	leasing *leasing // what it leased, known once committed
}

// claimInTx claims for the claimer, in tx, when tx inserted deliveries and
// the claimer has free workers. A failed claim hands nothing over (the
// reservation is freed) and returns the error: the transaction is not
// fit to commit (on PostgreSQL it is aborted).
func (db *DB) claimInTx(ctx context.Context, tx *Tx) (*handover, error) {
	holder := db.claimer.Load()
	if holder == nil || tx.inserted == 0 {
		return nil, nil
	}
	p := holder.c.Reserve(tx.inserted)
	if p.Limit <= 0 {
		return nil, nil
	}
	h := &handover{c: holder.c, p: p}
	l, err := tx.claim(ctx, p)
	if err == nil && db.handoverHook != nil {
		err = db.handoverHook()
	}
	if err != nil {
		h.end(false)
		return nil, err
	}
	h.leasing = l
	return h, nil
}

// end hands the claims over when the transaction committed, and frees the
// reservation either way.
func (h *handover) end(committed bool) {
	if h == nil {
		return
	}
	var claims []*Claim
	if committed {
		claims = h.leasing.result()
	}
	h.c.Take(h.p, claims)
}
