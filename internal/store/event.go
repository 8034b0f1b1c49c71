package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
)

// EventInsert stores an event.
func (tx *Tx) EventInsert(ctx context.Context, e *checkout.Event) error {
	err := tx.insert(ctx, deferEvents, `INSERT INTO events (id, store_id, mode, type, created_at, data, object_id) VALUES `,
		e.ID, e.MerchantID, string(e.Mode), e.Type, e.CreatedAt.Unix(), string(e.Object), e.ObjectID())
	return tx.db.translate(err)
}

// EventList returns a page of a store's events of one mode, newest first:
// by created_at, and within one second by seq, the order they were stored
// in (two events of one transaction, a completion and its payment, keep
// theirs). The indexes of migration 0011 end with that order, so the page
// is read off one of them and the query stops at the limit:
//
//	no filter, dates only   events_list (store_id, mode, created_at, seq)
//	Type                    events_type (store_id, mode, type, created_at, seq)
//
// As for request logs, PostgreSQL may walk events_created instead where one
// store holds nearly every event (bench -lists shows the plans).
//
// A cursor names the last event of the previous page by id (seq stays
// inside the store); its seq is looked up in the same statement through
// the unique index on id. A cursor whose event is gone (purged) continues
// with the older seconds.
func (db *DB) EventList(ctx context.Context, p checkout.EventListParams) ([]*checkout.Event, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	var w where
	w.add("store_id = ?", p.MerchantID)
	w.add("mode = ?", string(p.Mode))
	if p.Type != "" {
		w.add("type = ?", p.Type)
	}
	if !p.From.IsZero() {
		w.add("created_at >= ?", ceilUnix(p.From))
	}
	if !p.To.IsZero() {
		w.add("created_at < ?", ceilUnix(p.To))
	}
	if !p.After.IsZero() {
		at := p.After.At.Unix()
		w.add("created_at <= ?", at)
		w.add("(created_at < ? OR seq < COALESCE((SELECT e.seq FROM events e WHERE e.id = ?), 0))", at, p.After.ID)
	}
	rows, err := db.readRows(ctx, `SELECT id, store_id, mode, type, created_at, data FROM events WHERE `+w.sql(db.dialect)+
		` ORDER BY created_at DESC, seq DESC LIMIT `+strconv.Itoa(limit), w.argsFor(db.dialect)...)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanEvent)
}

// EventListByObject returns the events about any of the objects, oldest
// first (by created_at, then the order they were stored in), through
// events_object (migration 0026): a session's page reads its own events and
// its payments' in one query.
func (db *DB) EventListByObject(ctx context.Context, objectIDs []string) ([]*checkout.Event, error) {
	if len(objectIDs) == 0 {
		return nil, nil
	}
	q, args := db.eventListByObjectQuery(objectIDs)
	rows, err := db.readRows(ctx, q, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	return collect(db, rows, scanEvent)
}

func (db *DB) eventListByObjectQuery(objectIDs []string) (string, []any) {
	marks := make([]string, len(objectIDs))
	args := make([]any, len(objectIDs))
	for i, id := range objectIDs {
		marks[i], args[i] = db.dialect.Param(i+1), id
	}
	return `SELECT id, store_id, mode, type, created_at, data FROM events WHERE object_id IN (` + strings.Join(marks, ", ") + `)
		ORDER BY created_at, seq`, args
}

func scanEvent(row scanner) (*checkout.Event, error) {
	var e checkout.Event
	var created int64
	var data string
	if err := row.Scan(&e.ID, &e.MerchantID, &e.Mode, &e.Type, &created, &data); err != nil {
		return nil, err
	}
	e.CreatedAt = time.Unix(created, 0)
	e.Object = []byte(data)
	return &e, nil
}

// ceilUnix is t in Unix seconds, rounded up: the first whole second at or
// after t, for a bound on a column of whole seconds.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() != 0 {
		s++
	}
	return s
}

// DeliveryListLatest returns the latest delivery of each event to each
// endpoint, for a page of events: one query through deliveries_event
// (event_id); the few deliveries of an event beyond the latest (resends)
// are dropped here.
func (db *DB) DeliveryListLatest(ctx context.Context, eventIDs []string) ([]*checkout.Delivery, error) {
	if len(eventIDs) == 0 {
		return nil, nil
	}
	marks := make([]string, len(eventIDs))
	args := make([]any, len(eventIDs))
	for i, id := range eventIDs {
		marks[i], args[i] = db.dialect.Param(i+1), id
	}
	rows, err := db.readRows(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE event_id IN (`+strings.Join(marks, ", ")+`)
		ORDER BY seq`, args...)
	if err != nil {
		return nil, db.translate(err)
	}
	all, err := collect(db, rows, scanDelivery)
	if err != nil {
		return nil, err
	}
	type pair struct{ event, endpoint string }
	latest := map[pair]int{}
	var out []*checkout.Delivery
	for _, d := range all {
		k := pair{d.EventID, d.EndpointID}
		if i, ok := latest[k]; ok {
			out[i] = d // ordered by seq: a later one replaces it
			continue
		}
		latest[k] = len(out)
		out = append(out, d)
	}
	return out, nil
}
