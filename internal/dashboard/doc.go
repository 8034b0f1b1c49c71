// Package dashboard is the merchant dashboard's HTTP face (/dashboard/):
// server-rendered pages on html/template, embedded with their style sheet,
// under the payment page's strict Content-Security-Policy. It signs accounts
// in and out and calls the service for everything; it knows nothing of SQL.
//
// Security: sessions live in the database (internal/service), their token
// in a cookie that is HttpOnly, SameSite=Lax, and Secure with the __Host-
// prefix when the base URL is https. Every state-changing request passes
// http.CrossOriginProtection and carries a form token: derived from the
// session's token on signed-in pages, a double-submit cookie on the sign-in
// and setup forms. Every page but those two redirects to sign-in without a
// valid session.
package dashboard
