// Package api serves the merchant API under /v1: the JSON envelope, request
// ids, API-key authentication, per-key rate limits, request logs and the
// checkout session handlers. internal/server mounts its handlers.
package api
