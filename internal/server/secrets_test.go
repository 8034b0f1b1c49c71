package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/logtest"
	"github.com/checkoutd/checkoutd/internal/server"
	"github.com/checkoutd/checkoutd/internal/service"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
	"github.com/checkoutd/checkoutd/internal/web"
)

// quotingStore fails every session read with an error that quotes a
// secret, as a driver error that quotes a value would.
type quotingStore struct {
	checkout.Store
	secret string
}

func (s quotingStore) SessionGet(ctx context.Context, id string) (*checkout.Session, error) {
	return nil, fmt.Errorf("driver: cannot convert %q", s.secret)
}

var anySecret = regexp.MustCompile(`ck_(test|live)_[sh]k_|whsec_`)

// No API key secret, webhook signing secret or Authorization header reaches
// the server's log, a request log or an error message, however a request
// carries one: header, body, path, query, or an internal error quoting it.
func TestNoSecretReachesLogsOrErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		logBuf := &logtest.Buffer{}
		log := slog.New(web.LogHandler{Handler: logBuf.JSONHandler()})
		ctx := context.Background()
		plain := service.New(service.Config{Store: db, CheckoutBaseURL: "https://pay.example.test", Logger: log})
		m, err := plain.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme", Currency: "USD"})
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := plain.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest,
			Type: checkout.KeyBearer, Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
		if err != nil {
			t.Fatal(err)
		}
		whsec := checkout.NewWebhookSecret()
		svc := service.New(service.Config{Store: quotingStore{db, secret}, CheckoutBaseURL: "https://pay.example.test", Logger: log})
		logs := service.NewRequestLogWriter(db, log)
		defer logs.Close()
		srv := httptest.NewServer(server.New(server.Deps{Service: svc, Logger: log, RequestLogs: logs,
			RateLimiter: api.NewRateLimiter(0, 1, nil), HideMetrics: true}))
		defer srv.Close()

		checkouts := "/v1/stores/" + m.ID + "/checkouts"
		type exchange struct {
			method, path, auth, body string
			status                   int
		}
		var ids []string
		var bodies []string
		for _, x := range []exchange{
			{"POST", checkouts, "Bearer " + secret, `{"items":[{"name":"Sword","amount":1500}],"metadata":{"k":"` + secret + `","w":"` + whsec + `"}}`, 201},
			{"POST", checkouts, "Bearer " + secret, `{"items":[{"name":"` + whsec + `","amount":1}]}`, 400},
			{"GET", checkouts + "/cs_" + strings.Repeat("a", 64) + "?token=" + secret + "&w=" + whsec, "Bearer " + secret, "", 500},
			{"GET", checkouts + "/" + secret, "Bearer " + secret, "", 400},
			{"GET", "/v1/stores/" + secret + "/checkouts/" + whsec, "Bearer " + secret, "", 400},
			{"GET", checkouts, "Bearer " + secret + "x", "", 405},
			{"POST", checkouts, "Bearer " + secret[:len(secret)-1], `{}`, 401},
			{"POST", checkouts, "Basic " + secret, `{}`, 401},
			{"GET", "/nothing/" + secret + "/" + whsec, "Bearer " + secret, "", 404},
		} {
			req, _ := http.NewRequest(x.method, srv.URL+x.path, strings.NewReader(x.body))
			req.Header.Set("Authorization", x.auth)
			req.Header.Set("X-Webhook-Secret", whsec)
			if x.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != x.status {
				t.Fatalf("%s %s = %d %s; want %d", x.method, x.path, resp.StatusCode, b, x.status)
			}
			ids = append(ids, resp.Header.Get("Request-Id"))
			bodies = append(bodies, string(b))
		}
		// An error message never carries what the request did not: the
		// internal error quoting the secret answers a generic message.
		if strings.Contains(bodies[2], secret) || !strings.Contains(bodies[2], "internal_error") {
			t.Errorf("the internal error answered %s", bodies[2])
		}

		logged := logBuf.String()
		if anySecret.MatchString(logged) || strings.Contains(logged, "Bearer") || strings.Contains(logged, "Basic") {
			t.Errorf("the server log holds a secret or an Authorization header:\n%s", logged)
		}
		if !strings.Contains(logged, "driver: cannot convert") {
			t.Errorf("the internal error was not logged:\n%s", logged)
		}
		// Every line written while serving carries the request's id.
		lines := 0
		for _, line := range strings.Split(strings.TrimSpace(logged), "\n") {
			var rec struct {
				Msg       string `json:"msg"`
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if rec.RequestID == "" {
				t.Errorf("log line without request_id: %s", line)
			}
			lines++
		}
		if lines < len(ids) {
			t.Errorf("%d log lines for %d requests", lines, len(ids))
		}

		// Request logs: the authenticated requests, with bodies and paths
		// redacted, headers never stored.
		logs.Flush(ctx)
		recorded := 0
		for _, id := range ids {
			l, err := db.RequestLogGet(ctx, id)
			if checkout.IsCode(err, checkout.ENotFound) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			recorded++
			if all := l.Path + l.RequestBody + l.ResponseBody; anySecret.MatchString(all) || strings.Contains(all, "Bearer") {
				t.Errorf("request log %s holds a secret: %+v", id, l)
			}
		}
		if recorded != 5 {
			t.Errorf("%d requests recorded; want the 5 authenticated ones", recorded)
		}
	})
}
