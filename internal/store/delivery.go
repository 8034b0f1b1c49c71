package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

const deliveryColumns = `id, event_id, endpoint_id, store_id, mode, status, attempts, next_attempt_at_ms, last_status_code, last_error, created_at_ms, updated_at_ms, event_type, resent_as`

// prefixed returns the comma-separated columns cols, each qualified with
// the table alias a ("d" gives d.id, d.event_id, ...).
func prefixed(a, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, c := range parts {
		parts[i] = a + "." + c
	}
	return strings.Join(parts, ", ")
}

// deliveryFields are the columns of deliveryColumns that scanDelivery reads
// into d, with the temporaries it converts from.
type deliveryFields struct{ next, created, updated int64 }

func (f *deliveryFields) dest(d *checkout.Delivery) []any {
	return []any{&d.ID, &d.EventID, &d.EndpointID, &d.MerchantID, &d.Mode, &d.Status, &d.Attempts, &f.next,
		&d.LastStatusCode, &d.LastError, &f.created, &f.updated, &d.EventType, &d.ResentAs}
}

func (f *deliveryFields) fill(d *checkout.Delivery) {
	d.NextAttemptAt = time.UnixMilli(f.next)
	d.CreatedAt = time.UnixMilli(f.created)
	d.UpdatedAt = time.UnixMilli(f.updated)
}

func scanDelivery(row scanner) (*checkout.Delivery, error) {
	var d checkout.Delivery
	var f deliveryFields
	if err := row.Scan(f.dest(&d)...); err != nil {
		return nil, err
	}
	f.fill(&d)
	return &d, nil
}

// DeliveryInsert stores a new delivery.
func (tx *Tx) DeliveryInsert(ctx context.Context, d *checkout.Delivery) error {
	tx.inserted++
	err := tx.insert(ctx, deferDeliveries, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES `,
		d.ID, d.EventID, d.EndpointID, d.MerchantID, string(d.Mode), string(d.Status), d.Attempts, d.NextAttemptAt.UnixMilli(),
		d.LastStatusCode, d.LastError, d.CreatedAt.UnixMilli(), d.UpdatedAt.UnixMilli(), d.EventType, d.ResentAs)
	return tx.db.translate(err)
}

// DeliveryCancelPending cancels an endpoint's pending deliveries.
func (tx *Tx) DeliveryCancelPending(ctx context.Context, endpointID string, now time.Time) (int64, error) {
	res, err := tx.exec(ctx, `UPDATE deliveries SET status = 'canceled', updated_at_ms = $2 WHERE endpoint_id = $1 AND status = 'pending'`,
		endpointID, now.UnixMilli())
	if err != nil {
		return 0, tx.db.translate(err)
	}
	return res.RowsAffected()
}

// DeliveryGet returns a delivery by id.
func (db *DB) DeliveryGet(ctx context.Context, id string) (*checkout.Delivery, error) {
	d, err := scanDelivery(db.readRow(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.DeliveryNotFound(id)
	}
	return d, db.translate(err)
}

// DeliveryList returns an endpoint's deliveries, newest first.
func (db *DB) DeliveryList(ctx context.Context, p checkout.DeliveryListParams) ([]*checkout.Delivery, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.readRows(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE endpoint_id = $1 ORDER BY seq DESC LIMIT $2`, p.EndpointID, limit)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanDelivery)
}

const attemptColumns = `delivery_id, number, started_at_ms, duration_us, status_code, error, response_body`

func scanAttempt(row scanner) (*checkout.Attempt, error) {
	var a checkout.Attempt
	var started, durUS int64
	if err := row.Scan(&a.DeliveryID, &a.Number, &started, &durUS, &a.StatusCode, &a.Error, &a.ResponseBody); err != nil {
		return nil, err
	}
	a.StartedAt = time.UnixMilli(started)
	a.Duration = time.Duration(durUS) * time.Microsecond
	return &a, nil
}

// AttemptList returns a delivery's attempts in order.
func (db *DB) AttemptList(ctx context.Context, deliveryID string) ([]*checkout.Attempt, error) {
	rows, err := db.readRows(ctx, `SELECT `+attemptColumns+` FROM delivery_attempts WHERE delivery_id = $1 ORDER BY seq`, deliveryID)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanAttempt)
}

// candidatesQuery picks the deliveries to claim, without locking them: the
// earliest due of each endpoint, at most PerEndpoint less the endpoint's
// running leases, then the earliest of those up to Limit. It never ranks
// every due delivery:
//   - pending_endpoints walks the distinct endpoints of the partial index of
//     pending deliveries, deliveries_pending_endpoint (%[1]s, the dialect's
//     IndexedBy of it), one seek each, starting below any id (the empty
//     string);
//   - endpoints counts each one's running leases in the table of leases,
//     through delivery_leases_endpoint (%[2]s), one range of live leases
//     each; the table holds only the attempts in flight;
//   - %[3]s joins each endpoint's earliest due deliveries, at most PerEndpoint
//     read in order from deliveries_pending_endpoint.
//
// So its cost follows the endpoints with pending deliveries and the leases
// running, not the backlog (a million due to one endpoint cost what four
// do) nor the finished deliveries kept. Its parameters: the time now, the
// per-endpoint cap and the limit.
const candidatesQuery = `WITH RECURSIVE pending_endpoints(id) AS (
		SELECT CAST('' AS TEXT)
		UNION ALL
		SELECT (SELECT endpoint_id FROM deliveries%[1]s WHERE status = 'pending' AND endpoint_id > p.id ORDER BY endpoint_id LIMIT 1)
		FROM pending_endpoints p WHERE p.id IS NOT NULL
	), endpoints AS (
		SELECT p.id, (SELECT COUNT(*) FROM delivery_leases%[2]s WHERE endpoint_id = p.id AND until_ms > $1) AS busy
		FROM pending_endpoints p WHERE p.id IS NOT NULL AND p.id <> ''
	)
	SELECT id FROM (
		SELECT d.id, d.next_attempt_at_ms, d.seq,
			ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at_ms, d.seq) + p.busy AS rank
		FROM endpoints p
		%[3]s
	) c
	WHERE rank <= $2
	ORDER BY next_attempt_at_ms, seq
	LIMIT $3`

// firstDueQuery is the subquery of candidatesQuery that picks the earliest
// due deliveries of endpoint p.id, at most $2, through
// deliveries_pending_endpoint (%s, the dialect's IndexedBy): the index
// gives them in order, so the read stops after $2 entries and the few
// leased ones it skips (one probe of the leases' primary key each).
const firstDueQuery = `SELECT x.seq FROM deliveries x%s
			WHERE x.endpoint_id = p.id AND x.status = 'pending' AND x.next_attempt_at_ms <= $1
				AND NOT EXISTS (SELECT 1 FROM delivery_leases l WHERE l.delivery_id = x.id AND l.until_ms > $1)
			ORDER BY x.next_attempt_at_ms, x.seq LIMIT $2`

// firstDueJoins join firstDueQuery's deliveries, as d, to each endpoint p
// of candidatesQuery. PostgreSQL has LATERAL for it (a correlated IN would
// run once per row of the join); SQLite has no LATERAL, and runs the
// correlated IN once per endpoint, then reads each seq by rowid.
var firstDueJoins = map[string]string{
	"postgres": `CROSS JOIN LATERAL (` + firstDueQuery + `) f JOIN deliveries d ON d.seq = f.seq`,
	"sqlite":   `JOIN deliveries d ON d.seq IN (` + firstDueQuery + `)`,
}

// claimCandidatesQuery returns candidatesQuery in db's dialect.
func (db *DB) claimCandidatesQuery() string {
	byEndpoint := db.dialect.IndexedBy("deliveries_pending_endpoint")
	return fmt.Sprintf(candidatesQuery, byEndpoint, db.dialect.IndexedBy("delivery_leases_endpoint"),
		fmt.Sprintf(firstDueJoins[db.dialect.Name], byEndpoint))
}

// lease leases the deliveries of ids that are still due, and returns them
// with what their attempts need. On PostgreSQL another node may have
// claimed, attempted and recorded a candidate since candidatesQuery read
// it: the rows are locked first (skipping those another node is locking)
// and every condition of being due is checked again on the row as it is
// once locked, the next attempt's time included, since a recorded failure
// leaves the delivery pending and unleased with its next attempt ahead.
// A lease leaves the delivery's row as it was, so a lease committed while
// the lock waited would not show in the row the lock returns (the lease's
// row, joined, is read as the statement's snapshot had it): claims take
// turns (Dialect.ClaimLock), so no claim commits between this claim's
// reads, and the lease's write, leaseQuery, checks the lease's newest row
// all the same and takes over only a lease that has ended. Both statements
// find the rows by id alone: a condition on the due time in them would let
// the planner read the index of pending deliveries by due time, every due
// one, when its statistics are behind a burst of deliveries.
func (tx *Tx) lease(ctx context.Context, ids []string, p ClaimParams) (*leasing, error) {
	param := tx.db.dialect.Param
	args := make([]any, 0, len(ids))
	now := p.Now.UnixMilli()
	claims, err := collectEach(ctx, tx, fmt.Sprintf(lockCandidatesQuery, idMarks(param, &args, ids), tx.db.dialect.SkipLocked), args,
		func(row scanner) (*Claim, error) { return scanDue(row, now) })
	claims = slices.DeleteFunc(claims, func(c *Claim) bool { return c == nil })
	if err != nil || len(claims) == 0 {
		return nil, err
	}
	args = args[:0]
	values := make([]string, len(claims))
	for i, c := range claims {
		values[i] = "(" + valueMarks(param, &args, c.Delivery.ID, c.Delivery.EndpointID, p.Owner, p.LeaseUntil.UnixMilli()) + ")"
	}
	nowMark := valueMarks(param, &args, now)
	l := &leasing{claims: claims}
	// Sent with the commit (pipetx.go): its rows decide nothing of it.
	err = tx.eachLater(ctx, fmt.Sprintf(leaseQuery, strings.Join(values, ", "), nowMark), args, func(row scanner) error {
		id, err := scanID(row)
		l.leased = append(l.leased, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// leasing is a claim's due deliveries and those of them its lease
// statement leased. With a dialect that pipelines, the statement goes with
// the transaction's COMMIT: what it leased is known once the transaction
// committed. Should its answer not be read whole (a broken connection),
// the claims not returned wait for their leases to end, then are claimed
// again: late, never lost nor sent twice.
type leasing struct {
	claims []*Claim
	leased []string
}

// result returns the claims leased; nil for none, or for a nil l.
func (l *leasing) result() []*Claim {
	if l == nil {
		return nil
	}
	return slices.DeleteFunc(l.claims, func(c *Claim) bool { return !slices.Contains(l.leased, c.Delivery.ID) })
}

// scanDue reads a row of lockCandidatesQuery: its claim when it is due
// at now (pending, its next attempt's time come, no lease running), else
// nil.
func scanDue(row scanner, now int64) (*Claim, error) {
	var leaseUntil int64
	c, err := scanClaim(row, &leaseUntil)
	if err != nil {
		return nil, err
	}
	if c.Delivery.Status == checkout.DeliveryPending && c.Delivery.NextAttemptAt.UnixMilli() <= now && leaseUntil <= now {
		return c, nil
	}
	return nil, nil
}

// lockCandidatesQuery locks the candidates (%s: the placeholders of their
// ids; then the dialect's SkipLocked, which locks the deliveries alone) and
// reads their lease's end (0 for none) and what their attempts need: the
// delivery, its endpoint as it is now and its event, in the order they are
// due.
var lockCandidatesQuery = `SELECT COALESCE(l.until_ms, 0), ` + prefixed("d", deliveryColumns) + `, ` + prefixed("e", endpointColumns) + `,
		v.id, v.store_id, v.mode, v.type, v.created_at, v.data
	FROM deliveries d
	JOIN endpoints e ON e.id = d.endpoint_id
	JOIN events v ON v.id = d.event_id
	LEFT JOIN delivery_leases l ON l.delivery_id = d.id
	WHERE d.id IN (%s)
	ORDER BY d.next_attempt_at_ms, d.seq%s`

// leaseQuery leases deliveries: %[1]s is a row of values (delivery id,
// endpoint id, owner, end) for each, %[2]s the parameter of the time now.
// A delivery's lease that has ended (its owner crashed, or the lease left
// behind by a delivery finished otherwise) is taken over; one still running
// is left to its owner, and its delivery is not returned.
const leaseQuery = `INSERT INTO delivery_leases (delivery_id, endpoint_id, owner, until_ms) VALUES %[1]s
	ON CONFLICT (delivery_id) DO UPDATE SET endpoint_id = excluded.endpoint_id, owner = excluded.owner, until_ms = excluded.until_ms
	WHERE delivery_leases.until_ms <= %[2]s
	RETURNING delivery_id`

// idMarks appends ids to args and returns their placeholders, comma
// separated.
func idMarks(param func(int) string, args *[]any, ids []string) string {
	marks := make([]string, len(ids))
	for i, id := range ids {
		*args = append(*args, id)
		marks[i] = param(len(*args))
	}
	return strings.Join(marks, ", ")
}

// valueMarks appends vs to args and returns their placeholders, comma
// separated. SQLite's are positional (?), so a value used twice is
// appended twice.
func valueMarks(param func(int) string, args *[]any, vs ...any) string {
	marks := make([]string, len(vs))
	for i, v := range vs {
		*args = append(*args, v)
		marks[i] = param(len(*args))
	}
	return strings.Join(marks, ", ")
}

func scanID(row scanner) (string, error) {
	var id string
	return id, row.Scan(&id)
}

// DeliveryClaim leases due deliveries and returns them with their endpoint
// and event: candidatesQuery picks them, lease locks and reads them, and
// leases those still due.
func (db *DB) DeliveryClaim(ctx context.Context, p ClaimParams) ([]*Claim, error) {
	if p.Owner == "" {
		// A lease's owner is what its record is checked against.
		return nil, errors.New("claim: a lease needs an owner")
	}
	var l *leasing
	// Urgent: an event's first attempt waits for it, and a claim is short.
	err := db.inTxUrgent(ctx, func(t checkout.Tx) error {
		var err error
		l, err = t.(*Tx).claim(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l.result(), nil
}

// DeliveryClaimable reports whether a claim at now, with perEndpoint the
// endpoints' cap, would find a delivery to lease: the claim's own query of
// candidates (candidatesQuery), read on the read pool, without the claims'
// lock nor a transaction of the writer's. The dispatcher asks it before it
// claims, so that a wake-up with nothing due costs a read and sets aside
// none of its free workers (see webhook.Dispatcher.Run). It is a hint: a
// claim running meanwhile may lease what it found.
func (db *DB) DeliveryClaimable(ctx context.Context, now time.Time, perEndpoint int) (bool, error) {
	rows, err := db.readRows(ctx, db.claimCandidatesQuery(), now.UnixMilli(), perEndpoint, 1)
	if err != nil {
		return false, db.translate(err)
	}
	defer rows.Close()
	found := rows.Next()
	if err := rows.Err(); err != nil {
		return false, db.translate(err)
	}
	return found, db.translate(rows.Close())
}

// claim is DeliveryClaim's work, in tx. It takes the dialect's ClaimLock
// first: without it, two claims running at once would each count the
// leases committed before it and not the other's, and could together lease
// more than an endpoint's cap.
func (tx *Tx) claim(ctx context.Context, p ClaimParams) (*leasing, error) {
	if lock := tx.db.dialect.ClaimLock; lock != "" {
		// Sent with the query below (pipetx.go).
		if err := tx.execLater(ctx, nil, lock); err != nil {
			return nil, err
		}
	}
	ids, err := collectEach(ctx, tx, tx.db.claimCandidatesQuery(), []any{p.Now.UnixMilli(), p.PerEndpoint, p.Limit}, scanID)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	if tx.db.claimHook != nil {
		tx.db.claimHook()
	}
	return tx.lease(ctx, ids, p)
}

// scanClaim reads a claim's columns (lockCandidatesQuery's), after the
// columns of lead.
func scanClaim(row scanner, lead ...any) (*Claim, error) {
	var c Claim
	var d checkout.Delivery
	var e checkout.Endpoint
	var v checkout.Event
	var df deliveryFields
	var ef endpointFields
	var vCreated int64
	var data string
	dest := append(append(lead, df.dest(&d)...), ef.dest(&e)...)
	dest = append(dest, &v.ID, &v.MerchantID, &v.Mode, &v.Type, &vCreated, &data)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	df.fill(&d)
	ef.fill(&e)
	v.CreatedAt, v.Object = time.Unix(vCreated, 0), []byte(data)
	c.Delivery, c.Endpoint, c.Event = &d, &e, &v
	return &c, nil
}

// DeliveryCountPending counts the pending deliveries of the dispatcher, due
// and waiting: those held for a listener's stream (checkout.ListenerHold)
// are not its. It reads only the partial index of pending deliveries.
func (db *DB) DeliveryCountPending(ctx context.Context, now time.Time) (checkout.PendingDeliveries, error) {
	var total, due int64
	err := db.readRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN next_attempt_at_ms <= $1 THEN 1 ELSE 0 END), 0)
		FROM deliveries WHERE status = 'pending' AND next_attempt_at_ms < $2`, now.UnixMilli(), checkout.ListenerHold.UnixMilli()).Scan(&total, &due)
	if err != nil {
		return checkout.PendingDeliveries{}, db.translate(err)
	}
	return checkout.PendingDeliveries{Due: due, Waiting: total - due}, nil
}

// DeliveryRecord stores a finished attempt and the delivery's new state.
func (db *DB) DeliveryRecord(ctx context.Context, owner string, a *checkout.Attempt, d *checkout.Delivery) (bool, error) {
	updated, _, err := db.DeliveryRecordAll(ctx, []AttemptRecord{{Owner: owner, Attempt: a, Delivery: d}}, ClaimParams{})
	if err != nil {
		return false, err
	}
	return updated[0], nil
}

// DeliveryRecordAll stores finished attempts and their deliveries' new
// states in one transaction: the dispatcher's group commit, one commit for
// the attempts that ended together. Each chunk of recordChunk records takes
// a few statements whatever its size (recordBatch), so that a batch costs
// PostgreSQL a few round trips, not three per attempt.
//
// When next.Limit is above zero it then claims, in the same transaction, as
// DeliveryClaim(next) would: the workers whose attempts it records go on
// with the deliveries it returns, with no commit of a claim of their own
// between. The records come first, so the leases they end no longer count
// against their endpoints' caps. When it fails, nothing is stored and
// nothing is leased.
func (db *DB) DeliveryRecordAll(ctx context.Context, rs []AttemptRecord, next ClaimParams) ([]bool, []*Claim, error) {
	if next.Limit > 0 && next.Owner == "" {
		return nil, nil, errors.New("claim: a lease needs an owner")
	}
	updated := make([]bool, len(rs))
	// Rows are locked in the order of their ids, so that two nodes'
	// batches never wait for each other in a circle.
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b AttemptRecord) int { return strings.Compare(a.Delivery.ID, b.Delivery.ID) })
	done := make(map[*checkout.Attempt]bool, len(rs))
	var claims *leasing
	err := db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		clear(done)
		claims = nil
		for lo := 0; lo < len(sorted); lo += recordChunk {
			if err := tx.recordBatch(ctx, sorted[lo:min(lo+recordChunk, len(sorted))], done); err != nil {
				return err
			}
		}
		if next.Limit <= 0 {
			return nil
		}
		var err error
		claims, err = tx.claim(ctx, next)
		return err
	})
	if err != nil {
		return updated, nil, err
	}
	for i, r := range rs {
		updated[i] = done[r.Attempt]
	}
	return updated, claims.result(), nil
}

// recordChunk bounds the records of one recordBatch, and so its
// statements' parameters (eight per attempt; SQLite allows 32,766).
const recordChunk = 256

// recordedDelivery is what recordBatch reads of a delivery under its lock.
type recordedDelivery struct {
	endpointID string
	pending    bool
}

// recordBatch stores rs (sorted by delivery id) as deliveryRecord would each
// one, in five statements: it locks the deliveries, inserts the attempts of
// those that still exist, ends the leases the records' owners still hold,
// updates those deliveries, and notes in updated the attempts whose
// delivery it updated. A delivery finished meanwhile (canceled during the
// attempt) is the rare case left to deliveryRecordFinished, one statement
// each; a delivery recorded twice in one batch, to deliveryRecord, one by
// one.
func (tx *Tx) recordBatch(ctx context.Context, rs []AttemptRecord, updated map[*checkout.Attempt]bool) error {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Delivery.ID
	}
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		for _, r := range rs {
			ok, err := tx.deliveryRecord(ctx, r.Owner, r.Attempt, r.Delivery)
			if err != nil {
				return err
			}
			updated[r.Attempt] = ok
		}
		return nil
	}
	rows, err := tx.lockForRecord(ctx, ids)
	if err != nil {
		return err
	}
	var found, finished []AttemptRecord
	var endpoints []string
	for _, r := range rs {
		row, ok := rows[r.Delivery.ID]
		if !ok {
			continue // deleted with its endpoint: no attempt record
		}
		if !row.pending {
			finished = append(finished, r)
		}
		found = append(found, r)
		endpoints = append(endpoints, row.endpointID)
	}
	if err := tx.attemptInsertAll(ctx, found, endpoints); err != nil {
		return err
	}
	held, err := tx.leaseEndAll(ctx, found)
	if err != nil {
		return err
	}
	var owned []AttemptRecord
	for _, r := range found {
		if rows[r.Delivery.ID].pending && held[r.Delivery.ID] {
			owned = append(owned, r)
		}
	}
	if err := tx.deliveryUpdateAll(ctx, owned); err != nil {
		return err
	}
	for _, r := range owned {
		updated[r.Attempt] = true
	}
	for _, r := range finished {
		if err := tx.deliveryRecordFinished(ctx, r.Attempt, r.Delivery); err != nil {
			return err
		}
	}
	return nil
}

// lockForRecord locks the deliveries of ids, in the order of their ids, and
// returns what a record needs of each that still exists. It reads nothing
// of their leases: a claim may have leased one (taking over a lease that
// had ended) while this waited for its lock, and this statement would read
// the lease as it was before; leaseEndAll, a statement after it, sees it.
func (tx *Tx) lockForRecord(ctx context.Context, ids []string) (map[string]recordedDelivery, error) {
	args := make([]any, 0, len(ids))
	marks := idMarks(tx.db.dialect.Param, &args, ids)
	found := make(map[string]recordedDelivery, len(ids))
	err := tx.each(ctx, `SELECT id, endpoint_id, status FROM deliveries WHERE id IN (`+marks+`) ORDER BY id`+tx.db.dialect.ForUpdate, args,
		func(row scanner) error {
			var id, status string
			var d recordedDelivery
			if err := row.Scan(&id, &d.endpointID, &status); err != nil {
				return err
			}
			d.pending = status == string(checkout.DeliveryPending)
			found[id] = d
			return nil
		})
	return found, err
}

// leaseEndAll deletes the leases of rs's deliveries that the records'
// owners still hold, and returns the deliveries whose lease it deleted. The
// deliveries are locked (lockForRecord), and every lease is written under
// its delivery's lock, so what it reads stays so until the commit.
func (tx *Tx) leaseEndAll(ctx context.Context, rs []AttemptRecord) (map[string]bool, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	param := tx.db.dialect.Param
	args := make([]any, 0, 3*len(rs))
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Delivery.ID
	}
	in := idMarks(param, &args, ids)
	pairs := make([]string, len(rs))
	for i, r := range rs {
		pairs[i] = "(" + valueMarks(param, &args, r.Delivery.ID, r.Owner) + ")"
	}
	ended, err := collectEach(ctx, tx, `DELETE FROM delivery_leases WHERE delivery_id IN (`+in+`)
		AND (delivery_id, owner) IN (VALUES `+strings.Join(pairs, ", ")+`) RETURNING delivery_id`, args, scanID)
	if err != nil {
		return nil, err
	}
	held := make(map[string]bool, len(ended))
	for _, id := range ended {
		held[id] = true
	}
	return held, nil
}

// attemptInsertAll stores the attempts of rs, the attempt of rs[i] to
// endpoints[i], in one statement.
func (tx *Tx) attemptInsertAll(ctx context.Context, rs []AttemptRecord, endpoints []string) error {
	if len(rs) == 0 {
		return nil
	}
	param := tx.db.dialect.Param
	args := make([]any, 0, 8*len(rs))
	values := make([]string, len(rs))
	for i, r := range rs {
		a := r.Attempt
		marks := make([]string, 8)
		for j, v := range []any{a.DeliveryID, a.Number, a.StartedAt.UnixMilli(), a.Duration.Microseconds(), a.StatusCode, a.Error, a.ResponseBody, endpoints[i]} {
			args = append(args, v)
			marks[j] = param(len(args))
		}
		values[i] = "(" + strings.Join(marks, ", ") + ")"
	}
	// Sent with the next statement (pipetx.go).
	return tx.execLater(ctx, nil, `INSERT INTO delivery_attempts (delivery_id, number, started_at_ms, duration_us, status_code, error, response_body, endpoint_id)
		VALUES `+strings.Join(values, ", "), args...)
}

// deliveryUpdateAll stores the new states of rs's deliveries, whose leases
// their owners held (ended by leaseEndAll, under lockForRecord's locks), in
// one statement. The values are cast to their columns' types so that
// PostgreSQL knows the parameters' types in a derived table.
func (tx *Tx) deliveryUpdateAll(ctx context.Context, rs []AttemptRecord) error {
	if len(rs) == 0 {
		return nil
	}
	var args []any
	// Sent with the next statement (pipetx.go).
	return tx.execLater(ctx, func(n int64) error {
		if n != int64(len(rs)) {
			return fmt.Errorf("record attempts: %d of %d locked deliveries updated", n, len(rs))
		}
		return nil
	}, deliveryUpdateQuery(tx.db.dialect.Param, &args, rs), args...)
}

// deliveryUpdateQuery is deliveryUpdateAll's statement, its arguments
// appended to args. It finds the deliveries by id alone. It once also
// asked for status = 'pending', which let PostgreSQL read them through the
// partial index of pending deliveries: every pending one, a hash join for
// a batch of 25, when its statistics were behind the burst that made the
// backlog (4 to 6 ms a batch at 16,000 pending, found with auto_explain).
// The rows are locked and were found pending (lockForRecord), so the
// condition held anyway; RowsAffected still checks that each was updated.
func deliveryUpdateQuery(param func(int) string, args *[]any, rs []AttemptRecord) string {
	selects := make([]string, len(rs))
	for i, r := range rs {
		d := r.Delivery
		cols := []struct {
			name, typ string
			v         any
		}{
			{"id", "TEXT", d.ID}, {"status", "TEXT", string(d.Status)},
			{"attempts", "BIGINT", d.Attempts}, {"next_ms", "BIGINT", d.NextAttemptAt.UnixMilli()},
			{"code", "BIGINT", d.LastStatusCode}, {"err", "TEXT", d.LastError}, {"updated_ms", "BIGINT", d.UpdatedAt.UnixMilli()},
		}
		exprs := make([]string, len(cols))
		for j, c := range cols {
			*args = append(*args, c.v)
			exprs[j] = "CAST(" + param(len(*args)) + " AS " + c.typ + ") AS " + c.name
		}
		selects[i] = "SELECT " + strings.Join(exprs, ", ")
	}
	return `UPDATE deliveries SET status = v.status, attempts = v.attempts, next_attempt_at_ms = v.next_ms,
		last_status_code = v.code, last_error = v.err, updated_at_ms = v.updated_ms
		FROM (` + strings.Join(selects, " UNION ALL ") + `) v
		WHERE deliveries.id = v.id`
}

// deliveryRecord stores one attempt. The delivery is locked first: one
// deleted meanwhile (its endpoint was) gets no attempt record, which nothing
// would ever purge.
func (tx *Tx) deliveryRecord(ctx context.Context, owner string, a *checkout.Attempt, d *checkout.Delivery) (bool, error) {
	var endpointID string
	err := tx.row(ctx, `SELECT endpoint_id FROM deliveries WHERE id = $1`+tx.db.dialect.ForUpdate, d.ID).Scan(&endpointID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := tx.attemptInsert(ctx, a, endpointID); err != nil {
		return false, err
	}
	res, err := tx.exec(ctx, `DELETE FROM delivery_leases WHERE delivery_id = $1 AND owner = $2`, d.ID, owner)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		res, err = tx.exec(ctx, `UPDATE deliveries SET status = $2, attempts = $3, next_attempt_at_ms = $4,
			last_status_code = $5, last_error = $6, updated_at_ms = $7
			WHERE id = $1 AND status = 'pending'`,
			d.ID, string(d.Status), d.Attempts, d.NextAttemptAt.UnixMilli(), d.LastStatusCode, d.LastError, d.UpdatedAt.UnixMilli())
		if err != nil {
			return false, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return true, nil
		}
	}
	return false, tx.deliveryRecordFinished(ctx, a, d)
}

// deliveryRecordFinished records attempt a on its delivery d if d finished
// during the attempt (canceled): the attempt still happened, so it counts
// and its outcome shows, but the status stays. (A delivery still pending
// was claimed again by another owner, whose own attempt will count: it is
// left alone.)
func (tx *Tx) deliveryRecordFinished(ctx context.Context, a *checkout.Attempt, d *checkout.Delivery) error {
	_, err := tx.exec(ctx, `UPDATE deliveries SET attempts = $2, last_status_code = $3, last_error = $4, updated_at_ms = $5
		WHERE id = $1 AND attempts < $2 AND status <> 'pending'`,
		d.ID, a.Number, a.StatusCode, a.Error, d.UpdatedAt.UnixMilli())
	return err
}

// attemptInsert stores an attempt of a delivery to endpointID.
func (tx *Tx) attemptInsert(ctx context.Context, a *checkout.Attempt, endpointID string) error {
	_, err := tx.exec(ctx, `INSERT INTO delivery_attempts (delivery_id, number, started_at_ms, duration_us, status_code, error, response_body, endpoint_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.DeliveryID, a.Number, a.StartedAt.UnixMilli(), a.Duration.Microseconds(), a.StatusCode, a.Error, a.ResponseBody, endpointID)
	return err
}

// EventGet returns an event by id.
func (db *DB) EventGet(ctx context.Context, id string) (*checkout.Event, error) {
	e, err := scanEvent(db.readRow(ctx, `SELECT id, store_id, mode, type, created_at, data FROM events WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, checkout.Errorf(checkout.ENotFound, "No such event: %s.", id)
	}
	if err != nil {
		return nil, db.translate(err)
	}
	return e, nil
}
