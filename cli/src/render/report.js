// The HTML report's script, included by html.rs at build time: one state
// of each trace shown at a time, moved by the step links, the URL fragment
// (#id-step-N) and the keys; data-script="ok" on the page when it ran.
(function () {
  "use strict";
  var root = document.documentElement;
  window.addEventListener("error", function (event) {
    root.setAttribute("data-script", "error: " + event.message);
  });
  root.classList.add("js");
  var traces = Array.prototype.slice.call(document.querySelectorAll("section.trace"));
  var active = traces[0] || null;
  function number(element, name) { return Number(element.getAttribute(name)); }
  function show(trace, step) {
    step = Math.max(0, Math.min(number(trace, "data-last"), step));
    trace.setAttribute("data-current", String(step));
    var marked = trace.querySelectorAll("[data-step]");
    for (var i = 0; i < marked.length; i++) {
      marked[i].classList.toggle("current", number(marked[i], "data-step") === step);
    }
    return step;
  }
  function go(trace, step) {
    step = show(trace, step);
    active = trace;
    try {
      history.replaceState(null, "", "#" + trace.id + "-step-" + step);
    } catch (ignored) {
      // Some viewers forbid history changes: the page still moves.
    }
  }
  // The fragment names a trace or one of its states; the browser scrolls
  // to it on load, and a later change may target a state hidden until now.
  function follow(scroll) {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    var trace = target && target.closest("section.trace");
    if (!trace) { return; }
    active = trace;
    if (target.classList.contains("state")) {
      show(trace, number(target, "data-step"));
      if (scroll) { trace.scrollIntoView(); }
    }
  }
  traces.forEach(function (trace) {
    show(trace, number(trace, "data-last"));
    trace.addEventListener("click", function (event) {
      active = trace;
      var link = event.target.closest("a[href^='#']");
      var target = link && document.getElementById(link.getAttribute("href").slice(1));
      if (target && target.classList.contains("state")) {
        event.preventDefault();
        go(trace, number(target, "data-step"));
      }
    });
  });
  follow(false);
  window.addEventListener("hashchange", function () { follow(true); });
  var moves = { ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1 };
  document.addEventListener("keydown", function (event) {
    if (!active || event.altKey || event.ctrlKey || event.metaKey) { return; }
    var current = number(active, "data-current");
    var step;
    if (Object.prototype.hasOwnProperty.call(moves, event.key)) {
      step = current + moves[event.key];
    } else if (event.key === "Home") {
      step = 0;
    } else if (event.key === "End") {
      step = number(active, "data-last");
    } else {
      return;
    }
    event.preventDefault();
    go(active, step);
  });
  root.setAttribute("data-script", "ok");
})();
