// A stand-in for Stripe.js (https://js.stripe.com/v3) for checkoutd's
// browser tests, which serve it at js.stripe.com on loopback. It is not
// Stripe's code and not Stripe's UI: it does just what checkoutd's adapter
// (internal/pay/stripepay/adapter.js) uses, against the tests' fake of
// Stripe's API (package stripefake) at api.stripe.com, so that the page that
// ships runs in a real browser under its own Content-Security-Policy.
//
// Its "element" is a plain <select> of the fake's test payment methods
// mounted in the page (Stripe's is an iframe). confirmPayment confirms the
// PaymentIntent with the publishable key and the client secret, as
// Stripe.js does; a 3-D Secure card shows a frame from hooks.stripe.com
// (the tests' stand-in challenge) and, once it is completed, goes on to
// return_url, as a success does. A decline or a failed challenge resolves
// {error}.
(function () {
  "use strict";

  var api = "https://api.stripe.com/v1/payment_intents/";
  var challenge = "https://hooks.stripe.com/3d_secure";

  // What the page asked for, for the tests to check.
  var seen = window.stripeStandIn = { publishableKey: null, elementsOptions: null, created: null, confirms: 0 };

  function withQuery(url, q) {
    var u = new URL(url, window.location.href);
    Object.keys(q).forEach(function (k) { u.searchParams.set(k, q[k]); });
    return u.href;
  }

  window.Stripe = function (publishableKey) {
    if (!publishableKey) throw new Error("Stripe stand-in: no publishable key");
    seen.publishableKey = publishableKey;
    var select = null;

    function elements(options) {
      seen.elementsOptions = options;
      return {
        create: function (type) {
          seen.created = type;
          var handlers = {};
          return {
            on: function (event, fn) { (handlers[event] = handlers[event] || []).push(fn); },
            mount: function (node) {
              if (typeof node === "string") node = document.querySelector(node);
              select = document.createElement("select");
              select.id = "stand-in-card";
              select.setAttribute("aria-label", "Test card (stand-in for Stripe's element)");
              [["pm_card_visa", "Visa 4242 (succeeds)"],
               ["pm_card_chargeDeclined", "Visa 0002 (declined)"],
               ["pm_card_authenticationRequired", "Visa 3184 (3-D Secure)"]].forEach(function (o) {
                var opt = document.createElement("option");
                opt.value = o[0];
                opt.textContent = o[1];
                select.appendChild(opt);
              });
              node.appendChild(select);
              setTimeout(function () { (handlers.ready || []).forEach(function (fn) { fn({ elementType: type }); }); }, 0);
            }
          };
        },
        submit: function () { return Promise.resolve({}); }
      };
    }

    // threeDS shows the stand-in challenge in a frame, and resolves once
    // the frame says it is done.
    function threeDS(id, clientSecret) {
      return new Promise(function (resolve) {
        var frame = document.createElement("iframe");
        frame.id = "stand-in-3ds";
        frame.title = "3-D Secure (stand-in)";
        frame.width = "400";
        frame.height = "200";
        // Over the page, as Stripe's challenge is (CSSOM, which the page's
        // CSP allows, unlike a style attribute).
        frame.style.position = "fixed";
        frame.style.top = "100px";
        frame.style.left = "100px";
        frame.addEventListener("load", function () { frame.dataset.loaded = "1"; });
        frame.src = challenge + "?" + new URLSearchParams({ payment_intent: id, client_secret: clientSecret }).toString();
        window.addEventListener("message", function done(ev) {
          if (ev.origin !== "https://hooks.stripe.com" || !ev.data || ev.data.standIn3DS !== id) return;
          window.removeEventListener("message", done);
          frame.remove();
          resolve(ev.data.ok);
        });
        document.body.appendChild(frame);
      });
    }

    function confirmPayment(params) {
      seen.confirms++;
      var clientSecret = params.clientSecret;
      var returnURL = params.confirmParams && params.confirmParams.return_url;
      var id = String(clientSecret).split("_secret_")[0];
      var body = new URLSearchParams({
        payment_method: select ? select.value : "",
        client_secret: clientSecret,
        return_url: returnURL,
        key: publishableKey
      });
      function back(status) {
        window.location.assign(withQuery(returnURL, {
          payment_intent: id, payment_intent_client_secret: clientSecret, redirect_status: status
        }));
        return new Promise(function () {}); // the page goes away
      }
      return fetch(api + encodeURIComponent(id) + "/confirm", { method: "POST", body: body })
        .then(function (res) {
          return res.json().then(function (j) { return { status: res.status, json: j }; });
        })
        .then(function (r) {
          if (r.json.error) {
            var e = r.json.error;
            return { error: { type: e.type, code: e.code, decline_code: e.decline_code, message: e.message, payment_intent: e.payment_intent } };
          }
          if (r.json.status === "requires_action") {
            // Stripe.js goes on to return_url once the challenge is done,
            // and reports a failed one as an error.
            return threeDS(id, clientSecret).then(function (ok) {
              if (ok) return back("succeeded");
              return { error: { type: "invalid_request_error", code: "payment_intent_authentication_failure",
                message: "We are unable to authenticate your payment method. Please choose a different payment method and try again." } };
            });
          }
          return back(r.json.status === "succeeded" ? "succeeded" : "failed");
        }, function () {
          return { error: { type: "api_connection_error", message: "We could not reach Stripe (stand-in)." } };
        });
    }

    return { elements: elements, confirmPayment: confirmPayment };
  };
})();
