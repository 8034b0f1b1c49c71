// The hosted payment page's script. The page works without it: this only
// formats the card fields, checks the card number before it is sent, stops
// double submits, totals the skins picked, and follows a payment on its way
// without reloading. It is served from the page's own origin; the
// Content-Security-Policy allows no inline script.
"use strict";

(function () {
  function digits(s) { return s.replace(/\D/g, ""); }

  // luhn reports whether a string of digits passes the Luhn check.
  function luhn(d) {
    var sum = 0, dbl = false;
    for (var i = d.length - 1; i >= 0; i--) {
      var n = d.charCodeAt(i) - 48;
      if (dbl) { n *= 2; if (n > 9) n -= 9; }
      sum += n; dbl = !dbl;
    }
    return d.length > 0 && sum % 10 === 0;
  }

  function setError(input, msg) {
    var el = document.getElementById(input.id + "-error");
    if (el) el.textContent = msg;
    if (msg) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
  }

  // Buttons of a form being sent are disabled and say so: a double click
  // sends one request. (The server declines a second attempt anyway.)
  function busyOnSubmit(form) {
    form.addEventListener("submit", function (ev) {
      if (ev.defaultPrevented) return;
      var b = form.querySelector("button[type=submit][data-busy-label]");
      if (form.dataset.sent === "1") { ev.preventDefault(); return; }
      form.dataset.sent = "1";
      if (b) {
        // Disabled after this turn, so the browser still sends the form.
        setTimeout(function () { b.disabled = true; b.textContent = b.dataset.busyLabel; }, 0);
      }
    });
  }

  function cardForm(form) {
    var number = form.querySelector("#number");
    var expiry = form.querySelector("#expiry");
    var cvc = form.querySelector("#cvc");
    var name = form.querySelector("#name");

    number.addEventListener("input", function () {
      var d = digits(number.value).slice(0, 19);
      var grouped = d.replace(/(\d{4})(?=\d)/g, "$1 ");
      if (grouped !== number.value) number.value = grouped;
      setError(number, "");
    });
    expiry.addEventListener("input", function (ev) {
      var d = digits(expiry.value).slice(0, 4);
      if (d.length === 1 && d > "1") d = "0" + d;
      var v = d.length > 2 ? d.slice(0, 2) + "/" + d.slice(2) : d;
      if (d.length === 2 && ev.inputType !== "deleteContentBackward") v = d + "/";
      if (v !== expiry.value) expiry.value = v;
      setError(expiry, "");
    });
    cvc.addEventListener("input", function () {
      var d = digits(cvc.value).slice(0, 4);
      if (d !== cvc.value) cvc.value = d;
      setError(cvc, "");
    });
    name.addEventListener("input", function () { setError(name, ""); });

    form.addEventListener("submit", function (ev) {
      var first = null;
      function check(input, msg) { setError(input, msg); if (msg && !first) first = input; }
      var d = digits(number.value);
      check(number, d === "" ? "Enter your card number." :
        d.length < 12 ? "Your card number is incomplete." :
        (d.length > 19 || !luhn(d)) ? "Your card number is invalid." : "");
      var e = digits(expiry.value);
      check(expiry, e === "" ? "Enter your card's expiry date." : (e.length !== 4 || +e.slice(0, 2) < 1 || +e.slice(0, 2) > 12) ? "Enter the expiry date as MM/YY." : "");
      var c = digits(cvc.value);
      check(cvc, c === "" ? "Enter your card's security code (CVC)." : (c.length < 3) ? "Your card's security code (CVC) is 3 or 4 digits." : "");
      check(name, name.value.trim() === "" ? "Enter the name on your card." : "");
      if (first) { ev.preventDefault(); first.focus(); }
    });
  }

  function skinsForm(form) {
    var total = +form.dataset.total;
    var out = form.querySelector("[data-picked]");
    var button = form.querySelector("button[type=submit]");
    var fmt;
    try {
      fmt = new Intl.NumberFormat(undefined, { style: "currency", currency: form.dataset.currency });
    } catch (e) { fmt = null; }
    var exp = fmt ? fmt.resolvedOptions().maximumFractionDigits : 2;
    function money(minor) { var v = minor / Math.pow(10, exp); return fmt ? fmt.format(v) : v.toFixed(exp); }
    function update() {
      var sum = 0;
      form.querySelectorAll("input[name=item]:checked").forEach(function (i) { sum += +i.dataset.value; });
      out.textContent = sum === 0 ? "" : "Picked: " + money(sum) + (sum < total ? " (not enough yet)" : " (enough)");
      button.disabled = sum < total;
    }
    form.addEventListener("change", update);
    update();
  }

  // follow polls the status of a payment on its way (or of a crypto quote
  // waiting to be paid), updates the confirmations in place, and moves on
  // when the session changes state.
  function follow(url) {
    var start = document.body.dataset.state;
    var short = document.querySelector("[data-short]");
    var dropped = !!document.querySelector("[data-dropped]");
    var waiting = !document.querySelector("[data-confirmations]") && !short;
    function tick() {
      fetch(url, { headers: { "Accept": "application/json" }, cache: "no-store", credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) {
          if (!body || !body.ok) return;
          var s = body.data;
          if (s.status === "complete" && s.redirect_url) { window.location.assign(s.redirect_url); return; }
          if (s.status !== "open" || (waiting && s.payment) || (!waiting && !s.payment && start === "processing") ||
              (short && (!s.payment || s.payment.remaining_base !== short.dataset.remaining)) ||
              (s.payment && !!s.payment.dropped !== dropped)) {
            window.location.reload();
            return;
          }
          if (s.payment && s.payment.confirmations !== undefined) {
            var c = document.querySelector("[data-confirmations]");
            var p = document.querySelector("[data-progress]");
            var unknown = document.querySelector("[data-count-unknown]");
            if (c) c.textContent = s.payment.confirmations;
            if (unknown) unknown.remove();
            if (p) { p.value = s.payment.confirmations; p.textContent = s.payment.confirmations + " of " + s.payment.confirmations_required; }
          }
        })
        .catch(function () { /* try again at the next tick */ })
        .then(function () { setTimeout(tick, 2000); });
    }
    setTimeout(tick, 2000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var card = document.querySelector("[data-card-form]");
    if (card) cardForm(card);
    var skins = document.querySelector("[data-skins-form]");
    if (skins) skinsForm(skins);
    // After the checks above, whose listeners must run first: a form they
    // stop is not marked as sent.
    document.querySelectorAll("form").forEach(busyOnSubmit);
    document.querySelectorAll("[data-copy]").forEach(function (b) {
      b.addEventListener("click", function () {
        if (navigator.clipboard) navigator.clipboard.writeText(b.dataset.copy).then(function () { b.textContent = "Copied"; });
      });
    });
    document.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (!isNaN(d)) t.textContent = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    });
    var url = document.body.dataset.statusUrl;
    if (url) follow(url);
  });
})();
