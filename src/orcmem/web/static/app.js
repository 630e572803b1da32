// orcmem Memory page: small enhancements over forms that work without script.
// - the search box and filters refresh the results as you type (debounced), keeping focus;
// - card actions (edit, helpful, retract, stale, export, delete) run in place and announce what happened;
// - "/" focuses the search box; opening Edit focuses the title, Escape closes it.
// Every change sends the page's launch token in the X-Orcmem-Token header. Server HTML is inserted as is:
// it is rendered with autoescaping, and memory text is never put into the page any other way.
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var tokenMeta = document.querySelector('meta[name="orcmem-token"]');
  var token = tokenMeta ? tokenMeta.getAttribute("content") : "";
  var statusBox = null;
  var pending = null;

  function announce(text, kind) {
    if (!statusBox) return;
    var p = document.createElement("p");
    p.className = "flash flash-" + (kind || "ok");
    p.textContent = text;
    statusBox.replaceChildren(p);
  }

  function resultsUrl(form) {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, key) {
      if (value !== "") params.append(key, value);
    });
    var query = params.toString();
    return form.getAttribute("action") + (query ? "?" + query : "");
  }

  function refreshResults(url, push) {
    var results = document.getElementById("results");
    if (!results) { window.location.assign(url); return Promise.resolve(); }
    if (pending) pending.abort();
    pending = new AbortController();
    return fetch(url, { headers: { "X-Orcmem-Partial": "results" }, signal: pending.signal, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        results.innerHTML = html;
        if (push) window.history.replaceState(null, "", url);
        updateClear();
      })
      .catch(function (error) {
        if (error.name !== "AbortError") announce("Could not load memories. Check that orcmem ui is still running, then try again.", "error");
      });
  }

  function updateClear() {
    var form = document.getElementById("filters");
    if (!form) return;
    var filtered = ["q", "type", "source", "provenance", "status"].some(function (name) {
      var field = form.elements.namedItem(name);
      return field && field.value !== "";
    });
    var clear = document.getElementById("clear-filters");
    if (clear) clear.hidden = !filtered;
  }

  function setupFilters() {
    var form = document.getElementById("filters");
    if (!form) return;
    var timer = null;
    var run = function () { refreshResults(resultsUrl(form), true); };
    form.addEventListener("input", function (event) {
      if (event.target.name !== "q") return;
      clearTimeout(timer);
      timer = setTimeout(run, 250);
    });
    form.addEventListener("change", function (event) {
      if (event.target.tagName === "SELECT") { clearTimeout(timer); run(); }
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      clearTimeout(timer);
      run();
    });
    var clear = document.getElementById("clear-filters");
    if (clear) {
      clear.addEventListener("click", function (event) {
        event.preventDefault();
        ["q", "type", "source", "provenance", "status"].forEach(function (name) {
          var field = form.elements.namedItem(name);
          if (field) field.value = "";
        });
        run();
        form.elements.namedItem("q").focus();
      });
    }
    document.addEventListener("keydown", function (event) {
      var tag = (event.target.tagName || "").toLowerCase();
      if (event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey &&
          tag !== "input" && tag !== "textarea" && tag !== "select") {
        event.preventDefault();
        form.elements.namedItem("q").focus();
      }
    });
  }

  function cardAction(form) {
    var card = form.closest("[data-memory]");
    var error = card ? card.querySelector(".card-error") : null;
    var buttons = form.querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    return fetch(form.getAttribute("action"), {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { "X-Orcmem-Token": token, "Accept": "application/json" },
      credentials: "same-origin"
    })
      .then(function (response) {
        return response.json().then(function (data) { return { ok: response.ok, data: data }; });
      })
      .then(function (result) {
        buttons.forEach(function (b) { b.disabled = false; });
        if (!result.ok || !result.data.ok) {
          var message = (result.data && result.data.error) || "Could not update this memory.";
          if (error) { error.textContent = message; error.hidden = false; }
          announce(message, "error");
          return;
        }
        announce(result.data.message, "ok");
        if (result.data.removed) {
          refreshResults(window.location.pathname + window.location.search, false).then(function () {
            var heading = document.querySelector("#results h2, #count-line");
            if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus(); }
          });
        } else if (card && result.data.html) {
          var holder = document.createElement("div");
          holder.innerHTML = result.data.html;
          var fresh = holder.firstElementChild;
          card.replaceWith(fresh);
          var title = fresh.querySelector(".card-title");
          if (title) title.focus();
        }
      })
      .catch(function () {
        buttons.forEach(function (b) { b.disabled = false; });
        var message = "Could not reach orcmem. Check that orcmem ui is still running.";
        if (error) { error.textContent = message; error.hidden = false; }
      });
  }

  function setupCards() {
    document.addEventListener("submit", function (event) {
      var form = event.target;
      if (!form.matches || !form.matches("form[data-card-action]")) return;
      event.preventDefault();
      cardAction(form);
    });
    document.addEventListener("toggle", function (event) {
      var details = event.target;
      if (details.matches && details.matches("details[data-edit]") && details.open) {
        var input = details.querySelector("input[name=title]");
        if (input) input.focus();
      }
    }, true);
    document.addEventListener("keydown", function (event) {
      if (event.key !== "Escape") return;
      var details = event.target.closest && event.target.closest("details[open]");
      if (details) {
        details.open = false;
        var summary = details.querySelector("summary");
        if (summary) summary.focus();
      }
    });
  }

  function setupAutosubmit() {
    document.querySelectorAll("form[data-autosubmit] select").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    statusBox = document.getElementById("notices");
    setupFilters();
    setupCards();
    setupAutosubmit();
    updateClear();
  });
})();
