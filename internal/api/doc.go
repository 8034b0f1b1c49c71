// Package api serves the merchant API under /v1: API-key authentication,
// per-key rate limits, request logs and the checkout session handlers, on
// the envelope and request ids of internal/web. internal/server mounts its
// handlers.
package api
