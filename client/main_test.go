package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/app"
	"github.com/checkoutd/checkoutd/internal/pay"
	"github.com/checkoutd/checkoutd/internal/store/sqlite"
)

// What the examples run against: a real checkoutd on SQLite, with a store
// and a test-mode key, set up by TestMain. In a merchant's code they are
// the API's address, the store id of the dashboard's API keys page and the
// secret of an API key, from the configuration.
var (
	baseURL   string
	storeID   string
	secretKey string
)

func TestMain(m *testing.M) {
	stop, err := startServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "client tests: start checkoutd:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// startServer builds checkoutd as serve does (internal/app) on a SQLite
// file in a temporary directory, behind httptest.
func startServer() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "checkoutd-client")
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "checkoutd.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	a := app.New(app.Config{
		Store:           db,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		CheckoutBaseURL: "https://pay.example.com",
		Processors:      pay.Registry{Test: pay.Simulators()},
	})
	srv := httptest.NewServer(a.Handler)
	stop = func() {
		srv.Close()
		a.Close()
		db.Close()
		os.RemoveAll(dir)
	}
	m, err := a.Service.CreateMerchant(ctx, checkout.MerchantParams{Name: "Acme Games", Currency: "USD"})
	if err != nil {
		stop()
		return nil, err
	}
	_, secret, err := a.Service.CreateAPIKey(ctx, checkout.APIKeyParams{MerchantID: m.ID, Mode: checkout.ModeTest, Type: checkout.KeyBearer,
		Permissions: []checkout.Permission{checkout.PermCheckoutsWrite}})
	if err != nil {
		stop()
		return nil, err
	}
	baseURL, storeID, secretKey = srv.URL, m.ID, secret
	return stop, nil
}
