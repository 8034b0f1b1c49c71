// checkoutd's adapter for Stripe.js, which the payment page serves at
// /assets/acquirer/stripe.js right after https://js.stripe.com/v3 (never
// bundled: the card is typed into Stripe's own frame, and never touches
// checkoutd). It mounts Stripe's Payment Element, card only, in the form
// marked data-acquirer-form; on Pay it checks the element, asks checkoutd
// to start the session's card payment (the form's action, which answers
// the PaymentIntent's client secret), and has Stripe.js confirm it, 3-D
// Secure included. Stripe.js then sends the buyer to the form's return
// URL, where checkoutd looks the payment up at Stripe: the address itself
// is never trusted. A decline Stripe.js reports goes there too, so that
// the page says why.
(function () {
  "use strict";

  var form = document.querySelector('form[data-acquirer-form][data-acquirer="stripe"]');
  if (!form) return;
  var button = form.querySelector("button[type=submit]");
  var label = button ? button.textContent : "";
  var message = document.getElementById("message");
  var returnURL = new URL(form.dataset.returnUrl, window.location.href).href;

  function say(text) {
    if (message) message.textContent = text;
  }

  // ready lets the buyer press Pay (again, after a problem). It runs after
  // the current turn, as page.js's guard against double submits marks the
  // button busy after the turn of the submit.
  function ready() {
    setTimeout(function () {
      delete form.dataset.sent; // page.js's guard
      delete form.dataset.busy;
      if (button) {
        button.disabled = false;
        button.textContent = label;
      }
    }, 0);
  }

  if (typeof window.Stripe !== "function") {
    say("The card form could not be loaded from the card processor. Check your connection and reload the page, or pay another way.");
    return;
  }

  var stripe = window.Stripe(form.dataset.publishableKey);
  var elements = stripe.elements({
    mode: "payment",
    amount: Number(form.dataset.amount),
    currency: String(form.dataset.currency).toLowerCase(),
    paymentMethodTypes: ["card"]
  });
  var element = elements.create("payment");
  element.on("ready", ready);
  element.mount(form.querySelector("[data-acquirer-element]"));

  // start asks checkoutd for the session's card payment at Stripe: its
  // client secret, or the page to go back to, or why not.
  function start() {
    return fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { "Accept": "application/json" },
      credentials: "same-origin"
    }).then(function (res) {
      return res.json().catch(function () {
        // Refused before the door, with the page's HTML: a 403 is the
        // form's token, gone with the browser's cookies, which only a
        // reload gives again.
        if (res.status === 403) return { error: { message: "This page has expired. Reload it and try again." } };
        return {};
      });
    }).then(function (env) {
      var data = (env && env.data) || {};
      if (env && env.ok && data.client_secret) return data;
      if (env && env.ok && data.redirect) return data;
      var err = (env && env.error && env.error.message) || data.error;
      throw new Error(err || "The payment could not be started. Try again.");
    });
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    if (form.dataset.busy === "1") return;
    form.dataset.busy = "1";
    if (button) {
      button.disabled = true;
      button.textContent = button.dataset.busyLabel || label;
    }
    say("");
    elements.submit().then(function (checked) {
      if (checked.error) throw new Error(checked.error.message);
      return start();
    }).then(function (started) {
      if (started.redirect) {
        window.location.assign(started.redirect);
        return;
      }
      return stripe.confirmPayment({
        elements: elements,
        clientSecret: started.client_secret,
        confirmParams: { return_url: returnURL }
      }).then(function (result) {
        // Stripe.js returns only when it did not send the buyer on: a
        // decline, or an error. checkoutd looks the payment up and says.
        if (result && result.error) window.location.assign(returnURL);
      });
    }).catch(function (err) {
      say(err && err.message ? err.message : "The payment could not be started. Try again.");
      ready();
    });
  });
})();
