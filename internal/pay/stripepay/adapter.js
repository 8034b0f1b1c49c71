// checkoutd's adapter for Stripe.js: written by the page's helper (the
// page serves it at /assets/acquirer/stripe.js after Stripe.js).
