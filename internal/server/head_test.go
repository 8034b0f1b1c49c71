package server_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

// A GET route answers HEAD with the GET's status and headers and no body.
func TestHeadOnGetRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		s := h.mustCreate(swordBody)
		tests := []struct {
			path   string
			secret string
			status int
		}{
			{"/healthz", "", http.StatusOK},
			{"/readyz", "", http.StatusOK},
			{"/v1/openapi.json", "", http.StatusOK},
			{"/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, h.secret, http.StatusOK},
			{"/v1/stores/" + h.store.ID + "/checkouts/" + s.ID, "", http.StatusUnauthorized},
			{"/v1/stores/" + h.store.ID + "/checkouts", h.secret, http.StatusMethodNotAllowed},
		}
		for _, tt := range tests {
			req, _ := http.NewRequest(http.MethodHead, h.srv.URL+tt.path, nil)
			if tt.secret != "" {
				req.Header.Set("Authorization", "Bearer "+tt.secret)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || len(body) != 0 || resp.Header.Get("Request-Id") == "" {
				t.Errorf("HEAD %s = %d, %d bytes, Request-Id %q; want %d, no body, a Request-Id",
					tt.path, resp.StatusCode, len(body), resp.Header.Get("Request-Id"), tt.status)
			}
		}
	})
}
