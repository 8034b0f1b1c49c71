package service

import (
	"context"
	"errors"

	"github.com/checkoutd/checkoutd/checkout"
)

// PurgeResult counts what Purge deleted.
type PurgeResult struct {
	RequestLogs     int64
	IdempotencyKeys int64
	Events          int64
	// DashboardSessions and SetupTokens count the expired ones.
	DashboardSessions int64
	SetupTokens       int64
	// SignatureNonces counts the signed requests' nonces past their
	// window.
	SignatureNonces int64
	// AuditEntries counts the audit entries older than a year
	// (checkout.AuditRetention).
	AuditEntries int64
	// HomeHours counts the home's kept hours older than HomeHoursKept,
	// whose days the home job has kept whole.
	HomeHours int64
	// CommitMarks counts the write transactions' marks older than
	// checkout.CommitMarksKept (store/failover.go).
	CommitMarks int64
}

// Purge deletes request logs, events and deliveries older than 30 days and
// idempotency records older than 24 hours, and expired dashboard sessions,
// setup tokens and signature nonces, audit entries older than a year, and
// the home's kept hours more than two days old, and the write
// transactions' marks older than an hour.
// Nothing else deletes an audit entry.
func (s *Service) Purge(ctx context.Context) (PurgeResult, error) {
	now := s.now()
	var res PurgeResult
	var err1, err2, err3, err4, err5, err6, err7, err8, err9 error
	res.RequestLogs, err1 = s.store.RequestLogPurge(ctx, now.Add(-checkout.Retention))
	res.IdempotencyKeys, err2 = s.store.IdempotencyPurge(ctx, now.Add(-checkout.IdempotencyWindow))
	res.Events, err3 = s.store.EventPurge(ctx, now.Add(-checkout.Retention))
	res.DashboardSessions, err4 = s.store.DashboardSessionPurge(ctx, now)
	res.SetupTokens, err5 = s.store.SetupTokenPurge(ctx, now)
	res.SignatureNonces, err6 = s.store.SignatureNoncePurge(ctx, now)
	res.AuditEntries, err7 = s.store.AuditPurge(ctx, now.Add(-checkout.AuditRetention))
	res.HomeHours, err8 = s.store.HomeHoursPurge(ctx, checkout.DayOf(now).Add(-HomeHoursKept))
	res.CommitMarks, err9 = s.store.CommitMarkPurge(ctx, now.Add(-checkout.CommitMarksKept))
	return res, errors.Join(err1, err2, err3, err4, err5, err6, err7, err8, err9)
}
