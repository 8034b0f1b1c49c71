package server_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/api"
	"github.com/checkoutd/checkoutd/internal/store"
	"github.com/checkoutd/checkoutd/internal/store/storetest"
)

var (
	percentEscape = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
	unicodeEscape = regexp.MustCompile(`\\u[0-9A-Fa-f]{4}`)
)

// unescapeAll decodes percent-encoding and JSON \u escapes, three layers
// deep: what a reader of a log could make of it.
func unescapeAll(s string) string {
	for range 3 {
		s = percentEscape.ReplaceAllStringFunc(s, func(m string) string {
			b, _ := strconv.ParseUint(m[1:], 16, 8)
			return string(rune(b))
		})
		s = unicodeEscape.ReplaceAllStringFunc(s, func(m string) string {
			r, _ := strconv.ParseUint(m[2:], 16, 16)
			return string(rune(r))
		})
	}
	return s
}

// escapeByte spells the byte at i of s as %XX.
func escapeByte(s string, i int, lower bool) string {
	e := fmt.Sprintf("%%%02X", s[i])
	if lower {
		e = strings.ToLower(e)
	}
	return s[:i] + e + s[i+1:]
}

// A request log holds no secret however the request spelled it: JSON
// escapes in a body, valid JSON or not, percent-encoding in either case in
// the path or the query, on every status.
func TestRequestLogsRedactEverySpelling(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := newHarness(t, db)
		_, read := h.newKey(h.store.ID, checkout.ModeTest, checkout.PermCheckoutsRead)
		s := h.mustCreate(swordBody)
		checkouts := "/v1/stores/" + h.store.ID + "/checkouts"

		type tcase struct {
			name   string
			req    func(tail string) request
			status int
		}
		post := func(body string) request {
			return request{method: "POST", path: checkouts, secret: h.secret, body: body}
		}
		tests := []tcase{
			{"an escaped secret in valid JSON", func(tail string) request {
				return post(`{"items":[{"name":"Sword","amount":1500}],"metadata":{"k":"\u0063k_live_sk_` + tail + `"}}`)
			}, 201},
			{"an escaped secret in a JSON key", func(tail string) request {
				return post(`{"items":[{"name":"Sword","amount":1500}],"metadata":{"\u0063k_live_sk_` + tail + `":"v"}}`)
			}, 400},
			{"an escaped secret in invalid JSON", func(tail string) request {
				return post(`{"items":[{"name":"\u0063k_live_sk_` + tail + `"`)
			}, 400},
			{"an escaped webhook secret in invalid JSON", func(tail string) request {
				return post(`{"items": \u0077hsec_` + tail + `}`)
			}, 400},
			{"a secret with an escape in its tail", func(tail string) request {
				return post(`{"items":[{"name":"ck_test_sk_` + tail[:5] + `\u00` + fmt.Sprintf("%x", tail[5]) + tail[6:] + `"`)
			}, 400},
			{"an escaped underscore", func(tail string) request {
				return post(`["ck\u005flive\u005Fsk\u005f` + tail + `"]`)
			}, 400},
			{"an escaped secret in a body too large", func(tail string) request {
				return post(`{"title":"\u0063k_live_sk_` + tail + `"` + strings.Repeat(" ", api.MaxBodyBytes) + `}`)
			}, 413},
			{"an escaped secret without a content type", func(tail string) request {
				r := post(`{"title":"\u0063k_live_sk_` + tail + `"}`)
				r.headers = map[string]string{"Content-Type": ""}
				return r
			}, 415},
			{"an escaped secret without permission", func(tail string) request {
				r := post(`{"title":"\u0063k_live_sk_` + tail + `"}`)
				r.secret = read
				return r
			}, 403},
			{"a percent-encoded secret in the path", func(tail string) request {
				return request{method: "GET", path: checkouts + "/ck%5Flive%5Fsk%5F" + escapeByte(tail, 7, false), secret: h.secret}
			}, 400},
			{"a percent-encoded secret in lower case in the path", func(tail string) request {
				return request{method: "GET", path: checkouts + "/%63k%5flive%5fsk%5f" + escapeByte(tail, 7, true), secret: h.secret}
			}, 400},
			{"a percent-encoded secret in the query", func(tail string) request {
				return request{method: "GET", path: checkouts + "/" + s.ID + "?k=ck%5Flive%5fsk%5F" + escapeByte(tail, 7, true), secret: h.secret}
			}, 200},
			{"a webhook secret percent-encoded in the query", func(tail string) request {
				return request{method: "GET", path: checkouts + "/" + s.ID + "?k=%77hsec%5F" + tail + "&x=%77hs%65c%5f" + tail, secret: h.secret}
			}, 200},
			{"a secret encoded twice in the query", func(tail string) request {
				return request{method: "GET", path: checkouts + "/" + s.ID + "?k=ck%255Flive%255Fsk%255F" + tail, secret: h.secret}
			}, 200},
			{"a percent-encoded secret in a URL in the body", func(tail string) request {
				return post(`{"items":[{"name":"Sword","amount":1500}],"return_url":"https://shop.example/?k=ck%5Flive%5Fsk%5F` + tail + `"}`)
			}, 201},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				hh := h.with(t)
				tail := checkout.NewSecret()
				req := tt.req(tail)
				r := hh.do(req)
				if r.Status != tt.status {
					t.Fatalf("%s %s = %d %s; want %d", req.method, req.path, r.Status, r.Body, tt.status)
				}
				l, err := hh.requestLog(r)
				if err != nil {
					t.Fatalf("RequestLogGet = %v; want the request's log", err)
				}
				all := l.Path + "\n" + l.RequestBody + "\n" + l.ResponseBody
				if strings.Contains(all, tail[8:]) || strings.Contains(unescapeAll(all), tail[8:]) {
					t.Errorf("the log holds the secret's tail %s:\n%s", tail[8:], all)
				}
				if m := anySecret.FindString(unescapeAll(all)); m != "" {
					t.Errorf("the log holds %q once unescaped:\n%s", m, all)
				}
				if !strings.Contains(all, checkout.Redacted) {
					t.Errorf("the log shows no %s:\n%s", checkout.Redacted, all)
				}
			})
		}
	})
}
