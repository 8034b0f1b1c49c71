// Runs adapter.js (argv[2]) in Node against stand-ins for the page's DOM,
// checkoutd's start door and Stripe.js, for one scenario (argv[3], JSON),
// and prints what the adapter did as JSON: the calls it made, the page's
// message, and the Pay button.
"use strict";
const fs = require("fs");
const vm = require("vm");

const src = fs.readFileSync(process.argv[2], "utf8");
const scenario = JSON.parse(process.argv[3]);
const calls = [];

const message = { textContent: "" };
const button = { disabled: true, textContent: "Pay €15.00", dataset: { busyLabel: "Processing…" } };
const elementBox = {};
const listeners = {};
const form = {
  action: "http://checkoutd.test/invoice/cs_1/card/start",
  dataset: { acquirer: "stripe", publishableKey: "pk_live_123", amount: "1500", currency: "EUR", returnUrl: "/invoice/cs_1/card/return" },
  fields: [["csrf_token", "tok"]],
  querySelector(sel) {
    if (sel === "button[type=submit]") return button;
    if (sel === "[data-acquirer-element]") return elementBox;
    return null;
  },
  addEventListener(type, fn) { listeners[type] = fn; },
};
const document = {
  querySelector(sel) { return sel === 'form[data-acquirer-form][data-acquirer="stripe"]' ? form : null; },
  getElementById(id) { return id === "message" ? message : null; },
};
let onReady = null;
function Stripe(key) {
  calls.push(["Stripe", key]);
  return {
    elements(opts) {
      calls.push(["elements", opts]);
      return {
        create(type) {
          calls.push(["create", type]);
          return {
            on(ev, fn) { if (ev === "ready") onReady = fn; },
            mount(box) { calls.push(["mount", box === elementBox]); },
          };
        },
        submit() { calls.push(["submit"]); return Promise.resolve(scenario.submit || {}); },
      };
    },
    confirmPayment(o) {
      calls.push(["confirmPayment", o.clientSecret, o.confirmParams.return_url, Boolean(o.elements)]);
      return Promise.resolve(scenario.confirm || {});
    },
  };
}
const window = {
  Stripe: scenario.noStripe ? undefined : Stripe,
  location: { href: "http://checkoutd.test/invoice/cs_1?method=card", assign(u) { calls.push(["assign", u]); } },
};
class FormData {
  constructor(f) { this.f = f; }
  *[Symbol.iterator]() { yield* this.f.fields; }
}
function fetch(url, opts) {
  calls.push(["fetch", url, opts.method, String(opts.body), opts.headers.Accept]);
  const json = scenario.start === "html" ? () => Promise.reject(new Error("not JSON")) : () => Promise.resolve(scenario.start);
  return Promise.resolve({ json });
}

const ctx = vm.createContext({ document, window, fetch, FormData, URL, URLSearchParams, setTimeout, Promise, Number, String, Error });
vm.runInContext(src, ctx);

// Turns of the event loop, not time: each lets the adapter's promises and
// zero timers run.
const turns = (n) => n === 0 ? Promise.resolve() : new Promise((r) => setTimeout(r, 0)).then(() => turns(n - 1));

(async () => {
  if (onReady) onReady();
  await turns(2);
  const readyBefore = !button.disabled;
  if (listeners.submit) {
    listeners.submit({ preventDefault() { calls.push(["preventDefault"]); } });
  }
  await turns(10);
  process.stdout.write(JSON.stringify({ calls, message: message.textContent, readyBefore, disabled: button.disabled, label: button.textContent }));
})();
