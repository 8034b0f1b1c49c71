package stripefake

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// fault is an answer the fake gives the next request to a path instead of
// (or after) doing it.
type fault struct {
	path   string
	status int
	// hang: the request is never answered; the client gives up (its
	// time-out, its context). arrived is closed when it came.
	hang    bool
	arrived chan struct{}
	// after: the request is done, and its answer lost (status).
	after bool
}

// FailNext makes the next request to path ("" for any) answer status
// (500, 502, 503, 429, 400...) without doing anything.
func (f *Fake) FailNext(path string, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fault{path: path, status: status})
}

// LoseNextAnswer makes the fake do the next request to path ("" for any)
// and answer 500 instead of its result, as when Stripe made the object but
// the answer was lost: the same request again, with the same idempotency
// key, returns what was made.
func (f *Fake) LoseNextAnswer(path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fault{path: path, status: http.StatusInternalServerError, after: true})
}

// HangNext makes the next request to path ("" for any) go unanswered until
// its client gives up, as a time-out; the channel is closed when the
// request arrived.
func (f *Fake) HangNext(path string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	f.faults = append(f.faults, fault{path: path, hang: true, arrived: ch})
	return ch
}

// takeFault removes and returns the first fault for path.
func (f *Fake) takeFault(path string) (fault, bool) {
	for i, ft := range f.faults {
		if ft.path == "" || ft.path == path {
			f.faults = append(f.faults[:i], f.faults[i+1:]...)
			return ft, true
		}
	}
	return fault{}, false
}

func faultError(status int) *apiError {
	switch {
	case status == http.StatusTooManyRequests:
		return &apiError{status: status, Type: "invalid_request_error", Code: "rate_limit", Message: "Too many requests hit the API too quickly."}
	case status >= 500:
		return &apiError{status: status, Type: "api_error", Message: "An error occurred with our connection to Stripe (fault injected)."}
	}
	return invalid(status, "", "", "The request was refused (fault injected).")
}

// idemEntry is the saved result of a request with an idempotency key.
type idemEntry struct {
	fingerprint string
	status      int
	body        any
}

// handler does one request under the fake's lock: its form, the key it
// was made with, and the path's id. It returns the answer.
type handler func(f *Fake, form url.Values, key, id string) (int, any)

// routes are the endpoints the fake serves: exactly those checkoutd's
// connector calls, and the confirm Stripe.js calls.
var routes = []struct {
	pattern string
	h       handler
	// publishable: Stripe.js may call it with the publishable key and the
	// PaymentIntent's client secret.
	publishable bool
}{
	{"POST /v1/payment_intents", createIntent, false},
	{"GET /v1/payment_intents/{id}", retrieveIntent, true},
	{"POST /v1/payment_intents/{id}/cancel", cancelIntent, false},
	{"POST /v1/payment_intents/{id}/confirm", confirmIntent, true},
	{"POST /v1/refunds", createRefund, false},
	{"GET /v1/refunds/{id}", retrieveRefund, false},
	{"GET /v1/disputes/{id}", retrieveDispute, false},
	{"GET /v1/account", retrieveAccount, false},
	{"GET /v1/accounts/{id}", retrieveAccount, false},
	{"GET /v1/webhook_endpoints", listEndpoints, false},
}

// handler returns the fake's HTTP handler.
func (f *Fake) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { f.serve(w, r, rt.h, rt.publishable) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		invalid(http.StatusNotFound, "", "", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+"). The fake serves only what checkoutd uses.").write(w)
	})
	return cors(mux)
}

// cors lets Stripe.js call the fake from the page's origin, as it calls
// Stripe.
func cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Stripe-Version, Idempotency-Key")
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request, h handler, publishable bool) {
	if err := r.ParseForm(); err != nil {
		invalid(http.StatusBadRequest, "", "", "Invalid request body.").write(w)
		return
	}
	status, body, events := f.answer(r, h, publishable, r.PathValue("id"))
	for _, ev := range events {
		if f.opts.OnEvent != nil {
			f.opts.OnEvent(ev)
		}
	}
	if e, ok := body.(*apiError); ok {
		e.write(w)
		return
	}
	writeJSON(w, status, body)
}

// answer does the request under the lock, and returns its answer and the
// events it made.
func (f *Fake) answer(r *http.Request, h handler, publishable bool, id string) (int, any, []Event) {
	f.mu.Lock()
	ft, faulty := f.takeFault(r.URL.Path)
	if faulty && ft.hang {
		f.mu.Unlock()
		close(ft.arrived)
		select {
		case <-r.Context().Done():
		case <-f.done:
		}
		return http.StatusGatewayTimeout, faultError(http.StatusGatewayTimeout), nil
	}
	defer f.mu.Unlock()
	idemKey := r.Header.Get("Idempotency-Key")
	f.requests = append(f.requests, Request{Method: r.Method, Path: r.URL.Path, IdempotencyKey: idemKey, Form: r.Form})
	if faulty && !ft.after {
		return ft.status, faultError(ft.status), nil
	}
	key, err := f.authenticate(r, publishable, id)
	if err != nil {
		return err.status, err, nil
	}
	f.due()
	status, body := 0, any(nil)
	scoped := key + "\x00" + idemKey
	if saved, ok := f.idem[scoped]; ok && idemKey != "" && r.Method == http.MethodPost {
		if saved.fingerprint != r.URL.Path+"?"+r.Form.Encode() {
			e := &apiError{status: http.StatusBadRequest, Type: "idempotency_error",
				Message: "Keys for idempotent requests can only be used with the same parameters they were first used with."}
			return e.status, e, nil
		}
		status, body = saved.status, saved.body
	} else {
		status, body = h(f, r.Form, key, id)
		if e, ok := body.(*apiError); ok {
			status = e.status
		}
		if idemKey != "" && r.Method == http.MethodPost && status < 500 {
			f.idem[scoped] = &idemEntry{fingerprint: r.URL.Path + "?" + r.Form.Encode(), status: status, body: body}
		}
	}
	events := f.pending
	f.pending = nil
	if faulty {
		return ft.status, faultError(ft.status), events
	}
	return status, body, events
}

// authenticate returns the secret key r is made with, or for a route
// Stripe.js calls, the publishable key with the PaymentIntent's client
// secret.
func (f *Fake) authenticate(r *http.Request, publishable bool, id string) (string, *apiError) {
	key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok && publishable {
		key = r.Form.Get("key")
	}
	switch {
	case key == "":
		return "", &apiError{status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "You did not provide an API key."}
	case f.revoked[key] || !(strings.HasPrefix(key, "sk_") || strings.HasPrefix(key, "rk_") || publishable && strings.HasPrefix(key, "pk_")):
		return "", &apiError{status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "Invalid API Key provided: " + maskKey(key)}
	case strings.HasPrefix(key, "pk_"):
		pi := f.intents[id]
		if pi == nil || r.Form.Get("client_secret") != pi.clientSecret {
			return "", invalid(http.StatusNotFound, "resource_missing", "intent", "No such payment_intent: '"+id+"'")
		}
	}
	return key, nil
}

// formInt reads an integer parameter.
func formInt(form url.Values, name string) (int64, bool) {
	n, err := strconv.ParseInt(form.Get(name), 10, 64)
	return n, err == nil
}

// metadata reads metadata[k]=v parameters.
func metadata(form url.Values) map[string]string {
	m := map[string]string{}
	for k, v := range form {
		if name, ok := strings.CutPrefix(k, "metadata["); ok && strings.HasSuffix(name, "]") && len(v) > 0 {
			m[strings.TrimSuffix(name, "]")] = v[0]
		}
	}
	return m
}

// expands reports whether the form asks to expand field (expand[]=field,
// expand[0]=field).
func expands(form url.Values, field string) bool {
	for k, v := range form {
		if strings.HasPrefix(k, "expand[") {
			for _, x := range v {
				if x == field {
					return true
				}
			}
		}
	}
	return false
}
