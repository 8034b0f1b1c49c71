package main

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/checkoutd/checkoutd/internal/httpsig"
	"github.com/checkoutd/checkoutd/internal/seal"
)

// signedCreate sends a create signed by the HMAC key (id, secret) for the
// base URL public, with nonce, to the serve at base, and returns the status
// and body.
func signedCreate(t *testing.T, base, public, storeID, keyID, secret, nonce string) (int, string) {
	t.Helper()
	path := "/v1/stores/" + storeID + "/checkouts"
	body := `{"items":[{"name":"Sword","amount":1500}]}`
	u, _ := url.Parse(path)
	hdr := http.Header{"Content-Type": {"application/json"}, "Content-Digest": {httpsig.ContentDigest([]byte(body))}}
	in, sig, err := httpsig.Sign(httpsig.Request{Method: "POST", BaseURL: public, URL: u, Header: hdr, Body: []byte(body)}, keyID, secret, nonce, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	hdr.Set("Signature-Input", in)
	hdr.Set("Signature", sig)
	req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// keyFileIDs returns the ids of the keys in the key file of the data
// directory dir, the newest first.
func keyFileIDs(t *testing.T, dir string) []string {
	t.Helper()
	k, err := readKeyFile(filepath.Join(dir, secretsKeyFile))
	if err != nil || k == nil {
		t.Fatalf("the key file of %s: %v, %v", dir, k, err)
	}
	return k.IDs()
}

// On the embedded default, HMAC signing needs no setup: the first serve
// makes a secrets key in a file beside the database, readable by its owner
// only, and says so (the file, the key's id, never the key); keys create
// --type hmac with no flags seals with it; a signed request verifies, and
// after a restart, which reads the same file, still does.
func TestSecretsKeyFileMadeAtFirstStart(t *testing.T) {
	db := newDatabase(t, "sqlite")
	dir := db.flags[1]
	const public = "https://api.shop.test"
	_, logs, stop := startServe(t, db, "--base-url", public)
	path := filepath.Join(dir, secretsKeyFile)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no key file after the first start: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("the key file's mode = %04o; want 0600", perm)
	}
	raw, _ := os.ReadFile(path)
	id := keyFileIDs(t, dir)[0]
	if l := logs.String(); !strings.Contains(l, "first start: made a secrets key") || !strings.Contains(l, path) || !strings.Contains(l, id) ||
		strings.Contains(l, strings.TrimSpace(string(raw))) {
		t.Errorf("serve's log does not say it made the key (file and id), or shows the key:\n%s", l)
	}
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	k := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac")
	stop()

	base, logs, _ := startServe(t, db, "--base-url", public)
	if l := logs.String(); !strings.Contains(l, "secrets key from its file") || !strings.Contains(l, id) || strings.Contains(l, "first start: made") {
		t.Errorf("serve's log after a restart does not say it read the key file:\n%s", l)
	}
	if status, body := signedCreate(t, base, public, s.ID, k.ID, k.Secret, "after-restart"); status != http.StatusCreated {
		t.Errorf("a signed create after the restart = %d %s; want 201", status, body)
	}
	if got, _ := os.ReadFile(path); string(got) != string(raw) {
		t.Errorf("the restart changed the key file")
	}
}

// keys create --type hmac on a fresh data directory makes the key file
// itself, as serve would; serve then uses it.
func TestSecretsKeyFileMadeByKeysCreate(t *testing.T) {
	db := newDatabase(t, "sqlite")
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	if _, err := os.Stat(filepath.Join(db.flags[1], secretsKeyFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a bearer-only data directory has a key file: %v", err)
	}
	k := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac")
	id := keyFileIDs(t, db.flags[1])[0]
	const public = "https://api.shop.test"
	base, logs, _ := startServe(t, db, "--base-url", public)
	if !strings.Contains(logs.String(), id) {
		t.Errorf("serve does not use the key file keys create made:\n%s", logs)
	}
	if status, body := signedCreate(t, base, public, s.ID, k.ID, k.Secret, "n1"); status != http.StatusCreated {
		t.Errorf("a signed create = %d %s; want 201", status, body)
	}
}

// A key file others may read, or that holds no key, stops serve with an
// error that names the file and what to do, never its content; a key given
// with --secrets-key wins over the file, which is left as it is.
func TestSecretsKeyFileRefused(t *testing.T) {
	db := newDatabase(t, "sqlite")
	dir := db.flags[1]
	path := filepath.Join(dir, secretsKeyFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, text := seal.Generate()
	for _, tt := range []struct {
		content string
		mode    os.FileMode
		want    string
	}{
		{text + "\n", 0o644, "chmod 600"},
		{text + "\n", 0o660, "chmod 600"},
		{"not a key at all\n", 0o600, path},
		{"\n\n", 0o600, "no secrets key"},
	} {
		os.Remove(path)
		if err := os.WriteFile(path, []byte(tt.content), tt.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, tt.mode)
		_, errOut, err := cli(t, vars{}, append([]string{"serve", "--addr", "127.0.0.1:0"}, db.flags...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error()+errOut, strings.TrimSpace(tt.content)) && strings.TrimSpace(tt.content) != "" {
			t.Errorf("serve with a key file %q of mode %04o = %v; want an error saying %q, without the content", tt.content, tt.mode, err, tt.want)
		}
	}
	os.WriteFile(path, []byte("not a key at all\n"), 0o600)
	given := hex.EncodeToString(hmacSecretsKey)
	_, logs, _ := startServe(t, db, "--secrets-key", given)
	if !strings.Contains(logs.String(), mustSecretsKey(t).ID()) {
		t.Errorf("serve with --secrets-key does not use it:\n%s", logs)
	}
	if got, _ := os.ReadFile(path); string(got) != "not a key at all\n" {
		t.Errorf("serve with --secrets-key changed the key file")
	}
}

// Of many processes making the key file at once, one makes it and all use
// its key.
func TestSecretsKeyFileMadeOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", secretsKeyFile)
	ids := make([]string, 8)
	made := make([]bool, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			k, m, err := makeKeyFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i], made[i] = k.ID(), m
		})
	}
	wg.Wait()
	n := 0
	for i := range ids {
		if ids[i] != ids[0] {
			t.Errorf("process %d uses key %s; process 0 uses %s", i, ids[i], ids[0])
		}
		if made[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d processes made the key file; want 1", n)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the directory holds %d entries; want the key file alone (no temporary file left)", len(entries))
	}
}

// checkoutd secrets rotate, on the embedded default, seals every HMAC
// secret again with a new key it writes to the key file: after it, every
// key (revoked ones too) opens with the new key alone, none with the old,
// and signed requests verify after serve restarts. It refuses to run while
// serve holds the database, changing nothing.
func TestSecretsRotateKeyFile(t *testing.T) {
	db := newDatabase(t, "sqlite")
	dir := db.flags[1]
	const public = "https://api.shop.test"
	_, _, stop := startServe(t, db, "--base-url", public)
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	k1 := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac")
	k2 := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac", "--mode", "live")
	revoked := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac")
	mustCLI(t, vars{}, append([]string{"keys", "revoke", revoked.ID}, db.flags...)...)
	old, err := readKeyFile(filepath.Join(dir, secretsKeyFile))
	if err != nil {
		t.Fatal(err)
	}

	_, _, err = cli(t, vars{}, append([]string{"secrets", "rotate"}, db.flags...)...)
	if err == nil || !strings.Contains(err.Error(), "stop checkoutd serve first") {
		t.Errorf("secrets rotate while serve runs = %v; want it to say stop serve first", err)
	}
	if ids := keyFileIDs(t, dir); len(ids) != 1 || ids[0] != old.ID() {
		t.Errorf("the refused rotation changed the key file: %v", ids)
	}
	stop()

	var out struct {
		Resealed int    `json:"resealed"`
		Old      string `json:"old_secrets_key_id"`
		New      string `json:"new_secrets_key_id"`
		File     string `json:"key_file"`
	}
	decodeOne(t, mustCLI(t, vars{}, append([]string{"secrets", "rotate", "--json"}, db.flags...)...), &out)
	ids := keyFileIDs(t, dir)
	if out.Resealed != 3 || out.Old != old.ID() || out.New == old.ID() || len(ids) != 1 || ids[0] != out.New || out.File != filepath.Join(dir, secretsKeyFile) {
		t.Errorf("secrets rotate = %+v, the file holds %v; want 3 sealed again with a new key, the file holding it alone", out, ids)
	}
	if info, _ := os.Stat(filepath.Join(dir, secretsKeyFile)); info.Mode().Perm() != 0o600 {
		t.Errorf("the key file's mode after the rotation = %04o; want 0600", info.Mode().Perm())
	}
	next, _ := readKeyFile(filepath.Join(dir, secretsKeyFile))
	ks, err := db.open(t).APIKeyList(context.Background(), s.ID)
	if err != nil || len(ks) != 3 {
		t.Fatalf("keys = %v, %v", ks, err)
	}
	for _, k := range ks {
		if _, err := old.Open(k.SealedSecret, k.ID); !errors.Is(err, seal.ErrOtherKey) {
			t.Errorf("the old key still opens %s's secret: %v", k.ID, err)
		}
		if _, err := next.Open(k.SealedSecret, k.ID); err != nil {
			t.Errorf("the new key does not open %s's secret: %v", k.ID, err)
		}
	}
	base, _, _ := startServe(t, db, "--base-url", public)
	for i, k := range []keyOut{k1, k2} {
		if status, body := signedCreate(t, base, public, s.ID, k.ID, k.Secret, "rotated-"+k.ID); status != http.StatusCreated {
			t.Errorf("key %d signing after the rotation = %d %s; want 201", i+1, status, body)
		}
	}
}

// A key file caught between the rotation's steps (the new key and the old
// one) opens what either sealed and seals with the new: serve works
// whichever step a crash stopped at.
func TestSecretsKeyFileBetweenSteps(t *testing.T) {
	db := newDatabase(t, "sqlite")
	dir := db.flags[1]
	const public = "https://api.shop.test"
	s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
	k := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac")
	path := filepath.Join(dir, secretsKeyFile)
	oldText, _ := os.ReadFile(path)
	_, newText := seal.Generate()
	if err := writeKeyFile(path, newText+"\n"+string(oldText), true); err != nil {
		t.Fatal(err)
	}
	base, _, _ := startServe(t, db, "--base-url", public)
	if status, body := signedCreate(t, base, public, s.ID, k.ID, k.Secret, "between"); status != http.StatusCreated {
		t.Errorf("a key sealed with the old key, the file holding both = %d %s; want 201", status, body)
	}
	k2 := createKey(t, vars{}, db.flags, "--store", s.ID, "--type", "hmac")
	sealed, _ := db.open(t).APIKeyGet(context.Background(), k2.ID)
	n, _ := seal.ParseKey(newText)
	if _, err := n.Open(sealed.SealedSecret, k2.ID); err != nil {
		t.Errorf("a key made with both keys in the file is not sealed with the new one: %v", err)
	}
}

// checkoutd secrets rotate with the key given (PostgreSQL, or SQLite with
// --secrets-key), on both databases: the new key is given too, every secret
// is sealed with it, and serve started with it verifies signed requests.
// An old key that opens nothing, a missing or malformed new key, change
// nothing and say what is wrong without repeating a key.
func TestSecretsRotateGivenKey(t *testing.T) {
	eachDatabase(t, func(t *testing.T, db database) {
		const public = "https://api.shop.test"
		oldText := hex.EncodeToString(hmacSecretsKey)
		_, newText := seal.Generate()
		_, otherText := seal.Generate()
		old := vars{"CHECKOUTD_SECRETS_KEY": oldText}
		s := createStore(t, vars{}, db.flags, "--name", "Acme", "--currency", "USD")
		k := createKey(t, old, db.flags, "--store", s.ID, "--type", "hmac")
		before, _ := db.open(t).APIKeyGet(context.Background(), k.ID)

		for _, tt := range []struct {
			name  string
			e     vars
			usage bool
			want  string
		}{
			{"no new key", old, true, "--new-secrets-key"},
			{"a malformed new key", vars{"CHECKOUTD_SECRETS_KEY": oldText, "CHECKOUTD_NEW_SECRETS_KEY": "dG9vIHNob3J0"}, true, "--new-secrets-key"},
			{"an old key that sealed nothing", vars{"CHECKOUTD_SECRETS_KEY": otherText, "CHECKOUTD_NEW_SECRETS_KEY": newText}, false, "nothing was changed"},
		} {
			_, _, err := cli(t, tt.e, append([]string{"secrets", "rotate"}, db.flags...)...)
			_, usage := err.(usageError)
			if err == nil || usage != tt.usage || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: secrets rotate = %v (usage %v); want an error saying %q", tt.name, err, usage, tt.want)
				continue
			}
			for _, secret := range []string{oldText, newText, otherText, "dG9vIHNob3J0"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%s: the error repeats a key: %v", tt.name, err)
				}
			}
		}
		if after, _ := db.open(t).APIKeyGet(context.Background(), k.ID); after.SealedSecret != before.SealedSecret {
			t.Errorf("a refused rotation changed the sealed secret")
		}

		var out struct {
			Resealed int    `json:"resealed"`
			New      string `json:"new_secrets_key_id"`
		}
		decodeOne(t, mustCLI(t, vars{"CHECKOUTD_SECRETS_KEY": oldText, "CHECKOUTD_NEW_SECRETS_KEY": newText}, append([]string{"secrets", "rotate", "--json"}, db.flags...)...), &out)
		n, _ := seal.ParseKey(newText)
		if out.Resealed != 1 || out.New != n.ID() {
			t.Errorf("secrets rotate = %+v; want 1 sealed again with %s", out, n.ID())
		}
		base, _, _ := startServe(t, db, "--base-url", public, "--secrets-key", newText)
		if status, body := signedCreate(t, base, public, s.ID, k.ID, k.Secret, "given-"+db.name); status != http.StatusCreated {
			t.Errorf("signing with serve on the new key = %d %s; want 201", status, body)
		}
		if db.name == "sqlite" {
			if _, err := os.Stat(filepath.Join(db.flags[1], secretsKeyFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("with the key given, a key file was made: %v", err)
			}
		}
	})
}

// A key written as base64 of 32 bytes, in the file's form, is what
// Generate's text is: the operator can move it to CHECKOUTD_SECRETS_KEY.
func TestSecretsKeyFileForm(t *testing.T) {
	_, text := seal.Generate()
	if b, err := base64.StdEncoding.DecodeString(text); err != nil || len(b) != seal.KeySize {
		t.Errorf("the key file's text %q is not base64 of %d bytes", text, seal.KeySize)
	}
}
