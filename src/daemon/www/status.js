// status.js: refreshes deepshared's status page in place every 5 s (compiled into the binary). The server
// renders and escapes the page; this script only swaps in the freshly rendered <main>, parsed with
// DOMParser (which runs no script), so that scrolling and the page itself stay put.
"use strict";
(function () {
  var PERIOD = 5000;
  var note = document.getElementById("refresh");
  function say(text, stale) {
    if (!note) return;
    note.textContent = text;
    note.className = stale ? "stale" : "";
  }
  function refresh() {
    fetch(window.location.href, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.text();
      })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.getElementById("status");
        var cur = document.getElementById("status");
        if (!fresh || !cur) throw new Error("unexpected page");
        cur.replaceWith(document.adoptNode(fresh));
        say("refreshed " + new Date().toLocaleTimeString(), false);
      })
      .catch(function (e) {
        say("not refreshed since " + new Date().toLocaleTimeString() + " (" + e.message + ")", true);
      })
      .then(function () {
        window.setTimeout(refresh, PERIOD);
      });
  }
  window.setTimeout(refresh, PERIOD);
})();
