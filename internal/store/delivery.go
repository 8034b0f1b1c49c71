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
	_, err := tx.exec(ctx, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
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
//   - endpoints counts each one's running leases in deliveries_pending_leases
//     (%[2]s), one range of live leases each;
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
		SELECT p.id, (SELECT COUNT(*) FROM deliveries%[2]s
			WHERE endpoint_id = p.id AND status = 'pending' AND lease_until_ms > $1) AS busy
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
// leased ones it skips.
const firstDueQuery = `SELECT x.seq FROM deliveries x%s
			WHERE x.endpoint_id = p.id AND x.status = 'pending' AND x.next_attempt_at_ms <= $1 AND x.lease_until_ms <= $1
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
	return fmt.Sprintf(candidatesQuery, byEndpoint, db.dialect.IndexedBy("deliveries_pending_leases"),
		fmt.Sprintf(firstDueJoins[db.dialect.Name], byEndpoint))
}

// leaseQuery leases the candidates that are still due and returns their
// ids. On PostgreSQL another node may have claimed, attempted and recorded
// a candidate since candidatesQuery read it: the rows are locked (skipping
// those another node is locking) and every condition of being due is
// checked again on the row as it is now, the next attempt's time included,
// since a recorded failure leaves the delivery pending and unleased with
// its next attempt ahead. Its parameters, in the dialect's placeholders
// (Param): the lease's end, its owner, the ids, then the time now four
// times.
const leaseQuery = `UPDATE deliveries SET lease_until_ms = %[1]s, lease_owner = %[2]s
WHERE id IN (
	SELECT id FROM deliveries
	WHERE id IN (%[3]s)
	AND status = 'pending' AND next_attempt_at_ms <= %[4]s AND lease_until_ms <= %[5]s%[8]s
)
AND status = 'pending' AND next_attempt_at_ms <= %[6]s AND lease_until_ms <= %[7]s
RETURNING id`

// lease leases the deliveries of ids that are still due (leaseQuery) and
// returns those it leased.
func (tx *Tx) lease(ctx context.Context, ids []string, p ClaimParams) ([]string, error) {
	param := tx.db.dialect.Param
	args := make([]any, 0, len(ids)+6)
	args = append(args, p.LeaseUntil.UnixMilli(), p.Owner)
	marks := idMarks(param, &args, ids)
	now := make([]any, 4)
	for i := range now {
		args = append(args, p.Now.UnixMilli())
		now[i] = param(len(args))
	}
	query := fmt.Sprintf(leaseQuery, param(1), param(2), marks, now[0], now[1], now[2], now[3], tx.db.dialect.SkipLocked)
	rows, err := tx.rows(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return collect(tx.db, rows, scanID)
}

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

func scanID(row scanner) (string, error) {
	var id string
	return id, row.Scan(&id)
}

// claimedQuery reads the deliveries a claim leased (%s: the placeholders
// of their ids) with their endpoints and events, in the order they are due.
var claimedQuery = `SELECT ` + prefixed("d", deliveryColumns) + `, ` + prefixed("e", endpointColumns) + `,
		v.id, v.store_id, v.mode, v.type, v.created_at, v.data
	FROM deliveries d
	JOIN endpoints e ON e.id = d.endpoint_id
	JOIN events v ON v.id = d.event_id
	WHERE d.id IN (%s)
	ORDER BY d.next_attempt_at_ms, d.seq`

// DeliveryClaim leases due deliveries and returns them with their endpoint
// and event, in three steps: candidatesQuery picks them, leaseQuery locks
// and leases those still due, claimedQuery reads what their attempts need.
func (db *DB) DeliveryClaim(ctx context.Context, p ClaimParams) ([]*Claim, error) {
	var claims []*Claim
	err := db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		rows, err := tx.rows(ctx, db.claimCandidatesQuery(), p.Now.UnixMilli(), p.PerEndpoint, p.Limit)
		if err != nil {
			return err
		}
		ids, err := collect(db, rows, scanID)
		if err != nil || len(ids) == 0 {
			return err
		}
		if db.claimHook != nil {
			db.claimHook()
		}
		leased, err := tx.lease(ctx, ids, p)
		if err != nil || len(leased) == 0 {
			return err
		}
		args := make([]any, 0, len(leased))
		rows, err = tx.rows(ctx, fmt.Sprintf(claimedQuery, idMarks(db.dialect.Param, &args, leased)), args...)
		if err != nil {
			return err
		}
		claims, err = collect(db, rows, scanClaim)
		return err
	})
	return claims, err
}

func scanClaim(row scanner) (*Claim, error) {
	var c Claim
	var d checkout.Delivery
	var e checkout.Endpoint
	var v checkout.Event
	var df deliveryFields
	var ef endpointFields
	var vCreated int64
	var data string
	dest := append(df.dest(&d), ef.dest(&e)...)
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
	updated, err := db.DeliveryRecordAll(ctx, []AttemptRecord{{Owner: owner, Attempt: a, Delivery: d}})
	if err != nil {
		return false, err
	}
	return updated[0], nil
}

// DeliveryRecordAll stores finished attempts and their deliveries' new
// states in one transaction: the dispatcher's group commit, one fsync for
// the attempts that ended together.
func (db *DB) DeliveryRecordAll(ctx context.Context, rs []AttemptRecord) ([]bool, error) {
	updated := make([]bool, len(rs))
	// Rows are locked in the order of their ids, so that two nodes'
	// batches never wait for each other in a circle.
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(rs[a].Delivery.ID, rs[b].Delivery.ID) })
	err := db.InTx(ctx, func(t checkout.Tx) error {
		tx := t.(*Tx)
		for _, i := range order {
			var err error
			if updated[i], err = tx.deliveryRecord(ctx, rs[i].Owner, rs[i].Attempt, rs[i].Delivery); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		clear(updated)
	}
	return updated, err
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
	res, err := tx.exec(ctx, `UPDATE deliveries SET status = $3, attempts = $4, next_attempt_at_ms = $5,
		last_status_code = $6, last_error = $7, updated_at_ms = $8, lease_until_ms = 0, lease_owner = ''
		WHERE id = $1 AND lease_owner = $2 AND status = 'pending'`,
		d.ID, owner, string(d.Status), d.Attempts, d.NextAttemptAt.UnixMilli(), d.LastStatusCode, d.LastError, d.UpdatedAt.UnixMilli())
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	// Canceled during the attempt: the attempt still happened, so it counts
	// and its outcome shows, but the status stays. (A delivery still pending
	// was claimed again by another owner, whose own attempt will count.)
	_, err = tx.exec(ctx, `UPDATE deliveries SET attempts = $2, last_status_code = $3, last_error = $4, updated_at_ms = $5
		WHERE id = $1 AND attempts < $2 AND status <> 'pending'`,
		d.ID, a.Number, a.StatusCode, a.Error, d.UpdatedAt.UnixMilli())
	return false, err
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
