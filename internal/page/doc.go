// Package page is the hosted payment page: {checkout_base_url}/invoice/<id>,
// where a buyer pays a checkout session by card, crypto or skins.
//
// The page is server-rendered HTML that works without JavaScript; the
// script (assets/page.js) only formats card fields, checks the card number
// before it is sent, stops double submits, and follows a payment on its way
// without reloading. Every response carries a strict Content-Security-Policy
// (no inline script or style), forms are protected against cross-site
// requests twice over (Go's CrossOriginProtection and a double-submit
// token), and nothing the merchant wrote is rendered unescaped. Metadata is
// never shown.
package page
