// The dashboard's only script: it makes pages nicer and is never needed to
// use them. Times show in the viewer's time zone, copy buttons copy, and the
// header's menus close on Escape or a click elsewhere.
"use strict";

document.addEventListener("DOMContentLoaded", function () {
  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
  });
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d)) {
      el.title = el.textContent;
      el.textContent = fmt.format(d);
    }
  });

  // A refused form: the focus goes to the first field in error, whose
  // aria-describedby makes a screen reader read the error out.
  var invalid = document.querySelector("form [aria-invalid=true]");
  if (invalid) invalid.focus();

  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      var target = document.getElementById(btn.getAttribute("data-copy"));
      if (!target) return;
      var text = target.value !== undefined && target.tagName === "INPUT" ? target.value : target.textContent;
      var done = function (label) {
        btn.textContent = label;
        setTimeout(function () { btn.textContent = "Copy"; }, 2000);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { done("Copied"); }, function () { done("Select and copy"); });
      } else {
        var range = document.createRange();
        range.selectNodeContents(target);
        var sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        done("Press Ctrl+C");
      }
    });
  });

  var menus = document.querySelectorAll("details.menu");
  document.addEventListener("click", function (ev) {
    menus.forEach(function (m) { if (m.open && !m.contains(ev.target)) m.open = false; });
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key !== "Escape") return;
    menus.forEach(function (m) {
      if (m.open) {
        m.open = false;
        m.querySelector("summary").focus();
      }
    });
  });
});
