package client_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/client"
)

// What the examples run against: a fake of checkoutd's API with one store
// and its secret key, started by TestMain. In a merchant's code they are
// the API's address, the store id of the dashboard's API keys page and the
// secret of an API key, from the configuration.
var (
	baseURL   string
	storeID   = "7d1f6c8e-1c9a-4c55-9f9e-2b7a1c3d4e5f"
	secretKey = "ck_test_sk_" + strings.Repeat("0", 64)
)

func TestMain(m *testing.M) {
	srv := httptest.NewServer(newFakeAPI(storeID, secretKey))
	baseURL = srv.URL
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// fakeAPI answers a create and a retrieve as checkoutd does, in its
// envelopes (docs/api.md), so that the examples run, and their Output is
// checked, in this module, which imports nothing of checkoutd's. It checks
// little: the bearer key, the store, an item's name and quantity, and
// replays a create by its Idempotency-Key. The client against a real
// checkoutd is tested in the server's module (internal/clienttest).
type fakeAPI struct {
	storeID, secret string

	mu       sync.Mutex
	sessions map[string]*client.Session // by id
	byKey    map[string]*client.Session // by Idempotency-Key
}

func newFakeAPI(storeID, secret string) http.Handler {
	f := &fakeAPI{storeID: storeID, secret: secret, sessions: map[string]*client.Session{}, byKey: map[string]*client.Session{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/stores/{store}/checkouts", f.create)
	mux.HandleFunc("GET /v1/stores/{store}/checkouts/{id}", f.get)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", "req_"+randomHex(16))
		switch auth := r.Header.Get("Authorization"); {
		case auth == "":
			refuse(w, http.StatusUnauthorized, "authentication_required", "", nil)
		case auth != "Bearer "+f.secret:
			refuse(w, http.StatusUnauthorized, "invalid_api_key", "", nil)
		default:
			mux.ServeHTTP(w, r)
		}
	})
}

func (f *fakeAPI) create(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("store") != f.storeID {
		refuse(w, http.StatusNotFound, "store_not_found", "", nil)
		return
	}
	var p client.CreateParams
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		refuse(w, http.StatusBadRequest, "invalid_json", "", nil)
		return
	}
	var details []client.ErrorDetail
	var total int64
	items := make([]client.Item, len(p.Items))
	for i, it := range p.Items {
		path := fmt.Sprintf("items[%d]", i)
		if it.Name == "" {
			details = append(details, client.ErrorDetail{Code: "too_short", Param: path + ".name", Message: path + ".name must not be empty."})
		}
		q := max(it.Quantity, 1)
		if q > 100 {
			details = append(details, client.ErrorDetail{Code: "out_of_range", Param: path + ".quantity", Message: path + ".quantity must be between 1 and 100."})
		}
		items[i] = client.Item{Name: it.Name, Amount: it.Amount, Quantity: q}
		if it.Image != "" {
			items[i].Image = &it.Image
		}
		total += it.Amount * q
	}
	if len(details) > 0 {
		refuse(w, http.StatusBadRequest, "validation_failed", details[0].Param, details)
		return
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	key := r.Header.Get("Idempotency-Key")
	if s, ok := f.byKey[key]; ok {
		w.Header().Set("Idempotent-Replayed", "true")
		answer(w, http.StatusCreated, s)
		return
	}
	id := "cs_" + randomHex(32)
	now := time.Now().Unix()
	s := &client.Session{
		ID: id, Object: "checkout_session", Status: client.StatusOpen, Title: p.Title,
		CheckoutURL: "https://pay.example.com/invoice/" + id,
		Merchant:    client.Merchant{ID: f.storeID, Name: "Acme Games"},
		Currency:    "USD", Amount: total, TotalAmount: total, Items: items,
		Metadata:  map[string]string{},
		CreatedAt: now, ExpiresAt: now + 3600,
	}
	for k, v := range p.Metadata {
		s.Metadata[k] = v
	}
	if p.Customer != nil {
		s.Customer = client.Customer{Email: nonEmpty(p.Customer.Email), Name: nonEmpty(p.Customer.Name)}
	}
	s.ReturnURL, s.CancelURL = nonEmpty(p.ReturnURL), nonEmpty(p.CancelURL)
	f.sessions[id], f.byKey[key] = s, s
	answer(w, http.StatusCreated, s)
}

func (f *fakeAPI) get(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("store") != f.storeID {
		refuse(w, http.StatusNotFound, "store_not_found", "", nil)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[r.PathValue("id")]
	if !ok {
		refuse(w, http.StatusNotFound, "checkout_not_found", "", nil)
		return
	}
	answer(w, http.StatusOK, s)
}

// answer writes checkoutd's success envelope.
func answer(w http.ResponseWriter, status int, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"ok": true, "data": data})
}

// refuse writes checkoutd's error envelope, its request_id the Request-Id's.
func refuse(w http.ResponseWriter, status int, code, param string, details []client.ErrorDetail) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": map[string]any{
		"code": code, "message": strings.ReplaceAll(code, "_", " "), "param": param,
		"request_id": w.Header().Get("Request-Id"), "details": details,
	}})
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
