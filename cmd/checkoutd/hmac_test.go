package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/httpsig"
	"github.com/checkoutd/checkoutd/internal/seal"
	"github.com/checkoutd/checkoutd/internal/service"
)

var (
	hmacSecretsKey = []byte("the CLI test's secrets key, 32 B")
	liveHMACSecret = regexp.MustCompile(`^ck_live_hk_[0-9A-Za-z]{86}$`)
	testHMACSecret = regexp.MustCompile(`^ck_test_hk_[0-9A-Za-z]{86}$`)
)

func mustSecretsKey(t *testing.T) *seal.Key {
	t.Helper()
	k, err := seal.NewKey(hmacSecretsKey)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keys create --type hmac, given the secrets key in the environment or as
// a flag, makes a 512-bit secret that the database keeps only sealed, and
// that a service with the same secrets key opens again; nothing printed
// shows the secrets key, and keys list shows neither secret.
func TestKeysCreateHMAC(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		b64 := base64.StdEncoding.EncodeToString(hmacSecretsKey)
		live := createKey(t, vars{"CHECKOUTD_SECRETS_KEY": b64}, db.flags, "--store", s.ID, "--type", "hmac", "--mode", "live")
		if !liveHMACSecret.MatchString(live.Secret) || live.Type != "hmac" || live.Mode != "live" {
			t.Errorf("keys create --type hmac = %+v; want a ck_live_hk_ secret of 86 base62", live)
		}
		hexKey := hex.EncodeToString(hmacSecretsKey)
		out := mustCLI(t, vars{}, append([]string{"keys", "create", "--store", s.ID, "--type", "hmac", "--secrets-key", hexKey}, db.flags...)...)
		if strings.Contains(out, hexKey) || strings.Contains(out, b64) || !strings.Contains(out, "hmac") {
			t.Errorf("keys create --secrets-key printed the secrets key or no type:\n%s", out)
		}

		st := db.open(t)
		ctx := context.Background()
		k, err := st.APIKeyGet(ctx, live.ID)
		if err != nil {
			t.Fatal(err)
		}
		if k.SealedSecret == "" || strings.Contains(k.SealedSecret, live.Secret[len("ck_live_hk_"):][:20]) {
			t.Errorf("stored sealed secret = %q; want the secret encrypted", k.SealedSecret)
		}
		key, _ := seal.NewKey(hmacSecretsKey)
		if got, err := service.New(service.Config{Store: st, SecretsKey: key}).HMACSecret(k); err != nil || got != live.Secret {
			t.Errorf("HMACSecret = %q, %v; want the secret keys create printed", got, err)
		}

		list := mustCLI(t, vars{}, append([]string{"keys", "list", "--json", "--store", s.ID}, db.flags...)...)
		if strings.Contains(list, live.Secret) || strings.Contains(list, k.SealedSecret) || anySecretRe.MatchString(list) || !strings.Contains(list, `"type":"hmac"`) {
			t.Errorf("keys list shows a secret or a sealed one, or not the type: %s", list)
		}
	})
}

// Without a secrets key, or with one that is not 32 bytes, keys create
// keys create --type hmac with a bad secrets key, or with none on
// PostgreSQL (whose nodes must share one the operator gives), is a usage
// error that names the flag, never repeats the given text, and stores
// nothing.
func TestKeysCreateHMACRefused(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		cases := []struct {
			name string
			e    vars
			args []string
		}{
			{"short key in the environment", vars{"CHECKOUTD_SECRETS_KEY": "c2hvcnQga2V5IGluIGVudg=="}, nil},
			{"short key as a flag", vars{}, []string{"--secrets-key", "0123456789abcdef0123"}},
			{"not base64 nor hex", vars{}, []string{"--secrets-key", "not*a*key*at*all"}},
			{"a good key, then a bad one", vars{}, []string{"--secrets-key", hex.EncodeToString(hmacSecretsKey) + ",not*a*key"}},
		}
		if db.name == "postgres" {
			cases = append(cases, struct {
				name string
				e    vars
				args []string
			}{"no secrets key", vars{}, nil})
		}
		for _, tt := range cases {
			args := append(append([]string{"keys", "create", "--store", s.ID, "--type", "hmac"}, tt.args...), db.flags...)
			out, _, err := cli(t, tt.e, args...)
			if err == nil || !strings.Contains(err.Error(), "--secrets-key") || exitCode(err) != 2 || out != "" {
				t.Errorf("%s: keys create --type hmac = %q, %v (exit %d); want a usage error naming --secrets-key", tt.name, out, err, exitCode(err))
				continue
			}
			for _, given := range append(tt.args, tt.e["CHECKOUTD_SECRETS_KEY"]) {
				if given != "" && given != "--secrets-key" && strings.Contains(err.Error(), given) {
					t.Errorf("%s: error %q repeats the secrets key", tt.name, err)
				}
			}
		}
		if ks, err := db.open(t).APIKeyList(context.Background(), s.ID); err != nil || len(ks) != 0 {
			t.Errorf("keys after the refusals = %d, %v; want none", len(ks), err)
		}
	})
}

// serve reads --secrets-key or CHECKOUTD_SECRETS_KEY, and refuses a bad one
// without repeating it.
func TestServeSecretsKey(t *testing.T) {
	e := func(v vars) env { return env{getenv: v.getenv, stdout: os.Stdout, stderr: os.Stderr} }
	want, _ := seal.NewKey(hmacSecretsKey)
	for _, tt := range []struct {
		v    vars
		args []string
	}{
		{vars{"CHECKOUTD_SECRETS_KEY": base64.StdEncoding.EncodeToString(hmacSecretsKey)}, nil},
		{vars{}, []string{"--secrets-key", hex.EncodeToString(hmacSecretsKey)}},
	} {
		c, err := parseServeConfig(e(tt.v), tt.args)
		if err != nil || c.secretsKey == nil || c.secretsKey.ID() != want.ID() {
			t.Errorf("serve %v %v: secrets key = %v, %v; want %s", tt.v, tt.args, c, err, want)
		}
	}
	if c, err := parseServeConfig(e(vars{}), nil); err != nil || c.secretsKey != nil {
		t.Errorf("serve without a secrets key = %v, %v; want none, and no error", c, err)
	}
	bad := "dG9vIHNob3J0"
	if _, err := parseServeConfig(e(vars{"CHECKOUTD_SECRETS_KEY": bad}), nil); err == nil || !strings.Contains(err.Error(), "--secrets-key") || strings.Contains(err.Error(), bad) {
		t.Errorf("serve with a short secrets key = %v; want an error naming the flag, not the key", err)
	}
}

// checkoutd serve with a secrets key and a public base URL other than its
// address (as behind a TLS-terminating proxy) accepts a request signed for
// that base URL with a key made by keys create --type hmac, once; it logs
// the secrets key's id, never the key.
func TestServeSignedRequests(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		hexKey := hex.EncodeToString(hmacSecretsKey)
		const public = "https://api.shop.test"
		base, logs, _ := startServe(t, db, "--secrets-key", hexKey, "--base-url", public)
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		k := createKey(t, vars{"CHECKOUTD_SECRETS_KEY": hexKey}, db.flags, "--store", s.ID, "--type", "hmac")

		path := "/v1/stores/" + s.ID + "/checkouts"
		body := `{"items":[{"name":"Sword","amount":1500}]}`
		u, _ := url.Parse(path)
		hdr := http.Header{"Content-Type": {"application/json"}, "Content-Digest": {httpsig.ContentDigest([]byte(body))}}
		in, sig, err := httpsig.Sign(httpsig.Request{Method: "POST", BaseURL: public, URL: u, Header: hdr, Body: []byte(body)}, k.ID, k.Secret, "serve-nonce", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		hdr.Set("Signature-Input", in)
		hdr.Set("Signature", sig)
		send := func() (int, string) {
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
			req.Header = hdr.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(raw)
		}
		if status, raw := send(); status != http.StatusCreated {
			t.Fatalf("signed POST = %d %s; want 201", status, raw)
		}
		if status, raw := send(); status != http.StatusUnauthorized || !strings.Contains(raw, "invalid_signature") || !strings.Contains(raw, "replayed") {
			t.Errorf("the same signed POST again = %d %s; want 401 invalid_signature, replayed", status, raw)
		}
		if l := logs.String(); !strings.Contains(l, mustSecretsKey(t).ID()) || strings.Contains(l, hexKey) || strings.Contains(l, k.Secret) {
			t.Errorf("serve's log misses the secrets key's id, or shows the key or a secret:\n%s", l)
		}
	})
}

// Without a secrets key on PostgreSQL, serve says HMAC keys are off.
func TestServeWithoutSecretsKey(t *testing.T) {
	_, logs, _ := startServe(t, newDatabase(t, "postgres"))
	if !strings.Contains(logs.String(), "no secrets key") {
		t.Errorf("serve on PostgreSQL without a secrets key does not say so:\n%s", logs)
	}
}
