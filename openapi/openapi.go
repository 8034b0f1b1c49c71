// Package openapi holds the OpenAPI 3.1 description of the merchant API,
// openapi.json, and serves it at /v1/openapi.json.
package openapi

import (
	_ "embed"
	"net/http"
	"strconv"
)

// JSON is the OpenAPI 3.1 document.
//
//go:embed openapi.json
var JSON []byte

// Handler serves the document as it is (not in the envelope: it is a
// document for tools, not an API resource).
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(JSON)))
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(JSON)
	})
}
