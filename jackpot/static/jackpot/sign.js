/* The jackpot sign's script: poll the meter, count up to each new value, and never show a number
   as live that was not just read. States (on <body data-state>): "connecting" until the first
   answer, "live" while answers come, "offline" when none has come for offlineAfterMs, or at once
   when the service answers 503 (the progressive is closed: its database cannot be reached, so no
   figure is committed to show); then the amount is taken off the screen until the next full
   answer. A pool suspended or stopped (the meter's `status`) shows that word instead of the
   amount (body data-pool). Money stays in integer cents: it is
   formatted digit by digit, never divided into a float. */
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("sign-config").textContent);
  var text = config.text;
  var body = document.body;
  var amountEl = document.getElementById("amount");
  var statusEl = document.getElementById("status");

  var etag = null;
  var lastAnswerAt = 0;
  var meter = null; // the last meter read: {amount_cents, currency, ...}
  var shownCents = null; // what the digits show now (may be mid-count)
  var animation = null;
  var newestHit = null;

  // --- money, as text ------------------------------------------------------------------------
  var groups = new Intl.NumberFormat(text.locale, { maximumFractionDigits: 0 });
  var decimal = (1.5).toLocaleString(text.locale).charAt(1);

  // "12 345,67 €" or "€12,345.67"; with `whole`, a round amount drops its cents ("500 €").
  function money(cents, currency, whole) {
    var rest = cents % 100;
    var figure = groups.format((cents - rest) / 100); // a whole number: the division is exact
    if (!(whole && rest === 0)) figure += decimal + String(rest).padStart(2, "0");
    var symbol = currency === "EUR" ? "€" : currency || "";
    return text.locale.indexOf("fr") === 0 ? figure + "\u00a0" + symbol : symbol + figure;
  }

  function clock(iso) {
    var when = new Date(iso);
    var options = { hour: "2-digit", minute: "2-digit" };
    if (when.toDateString() !== new Date().toDateString()) {
      options.day = "numeric";
      options.month = "short";
    }
    return new Intl.DateTimeFormat(text.locale, options).format(when);
  }

  function element(tag, className, content) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined) node.textContent = content;
    return node;
  }

  // --- the meter's digits ----------------------------------------------------------------------
  function showAmount(cents) {
    shownCents = cents;
    var figure = money(cents, meter.currency);
    var grew = figure.length !== amountEl.textContent.length;
    amountEl.textContent = figure;
    if (grew) fitAmount();
  }

  // A meter that gains a digit must still fit the screen's width: shrink the type until it does.
  function fitAmount() {
    amountEl.style.fontSize = "";
    if (amountEl.scrollWidth > amountEl.clientWidth) {
      var size = parseFloat(getComputedStyle(amountEl).fontSize);
      amountEl.style.fontSize = Math.floor((size * amountEl.clientWidth) / amountEl.scrollWidth) + "px";
    }
  }

  // Count up from what is shown to `target` (ease-out, about a second and a half). A lower value
  // (the reset after a hit) is shown at once: the meter never counts down.
  function countTo(target) {
    if (animation) cancelAnimationFrame(animation);
    animation = null;
    var from = shownCents;
    if (from === null || target <= from) {
      showAmount(target);
      amountEl.dataset.cents = String(target);
      return;
    }
    var start = performance.now();
    var duration = 1500;
    function step(now) {
      // A frame's timestamp is when the frame began, which can come before `start` (read when
      // the count was asked for): below 0 the ease would step one cent under `from`.
      var t = Math.max(0, Math.min(1, (now - start) / duration));
      var eased = 1 - Math.pow(1 - t, 3);
      // The steps between two read values are only motion; the last one is the value read.
      showAmount(t < 1 ? from + Math.floor((target - from) * eased) : target);
      if (t < 1) {
        animation = requestAnimationFrame(step);
      } else {
        animation = null;
        amountEl.dataset.cents = String(target);
      }
    }
    animation = requestAnimationFrame(step);
  }

  // --- state ----------------------------------------------------------------------------------
  function setState(state) {
    if (body.dataset.state === state) return;
    body.dataset.state = state;
    if (state === "offline") {
      if (animation) cancelAnimationFrame(animation);
      animation = null;
      etag = null; // the next answer must be a full one, not a 304 on what we hid
      shownCents = null;
      amountEl.textContent = "— — —";
      delete amountEl.dataset.cents;
      statusEl.textContent = text.offline + " · " + text.offline_detail;
    } else if (state === "live") {
      statusEl.textContent = "";
    }
  }

  // Offline when nothing has answered for offlineAfterMs (since the page loaded, at first).
  function checkLiveness() {
    var silentFor = lastAnswerAt ? Date.now() - lastAnswerAt : performance.now();
    if (silentFor > config.offlineAfterMs) setState("offline");
  }

  // --- rendering an answer ----------------------------------------------------------------------
  // A pool that is not active (suspended by a fault, or stopped for good) shows its status in
  // place of the amount: no figure is offered as a jackpot that takes no stake.
  function renderMeter(answer) {
    meter = answer;
    setState("live");
    var status = answer.status || "active";
    var was = body.dataset.pool;
    body.dataset.pool = status;
    if (status !== "active") {
      if (animation) cancelAnimationFrame(animation);
      animation = null;
      shownCents = null;
      delete amountEl.dataset.cents;
      amountEl.textContent = text[status];
      statusEl.textContent = text[status + "_detail"];
      fitAmount();
    } else {
      if (was && was !== "active") statusEl.textContent = "";
      countTo(answer.amount_cents);
    }
    renderHits(answer.recent_hits || (answer.last_hit ? [answer.last_hit] : []));
    renderPending(answer);
  }

  function renderPending(answer) {
    var royal = answer.pending_jackpot || null;
    var pending = Boolean(answer.jackpot_pending);
    body.dataset.pending = String(pending);
    document.getElementById("hit").hidden = !pending;
    document.getElementById("hit-where").textContent = royal
      ? text.table + " " + royal.table + " · " + money(royal.amount_cents, answer.currency)
      : "";
  }

  function renderHits(hits) {
    var list = document.getElementById("winners");
    list.replaceChildren();
    if (!hits.length) {
      list.appendChild(element("li", "empty", text.no_winners));
      return;
    }
    var key = hits[0].at + hits[0].table + hits[0].kind;
    hits.forEach(function (hit, index) {
      var row = element("li", index === 0 && newestHit !== null && key !== newestHit ? "new" : "");
      var what = element("span", "what");
      what.appendChild(element("strong", "", text[hit.kind] || hit.kind));
      what.appendChild(element("small", "where", text.table + " " + hit.table + " · " + clock(hit.at)));
      row.appendChild(what);
      // A jackpot to the cent, as the meter showed it; a fixed award as the paytable says it.
      var whole = hit.kind !== "royal_flush";
      row.appendChild(element("span", "amount-cell", money(hit.amount_cents, meter.currency, whole)));
      list.appendChild(row);
    });
    newestHit = key;
  }

  function renderPool(pool) {
    document.getElementById("pool-name").textContent = pool.name;
    document.title = pool.name + " · " + text.title;
    document.getElementById("stake").textContent = text.stake.replace(
      "{amount}",
      money(pool.stake_cents, pool.currency, true)
    );
    var list = document.getElementById("fixed");
    list.replaceChildren();
    pool.paytable.awards.forEach(function (award) {
      var row = element("li");
      row.dataset.award = award.award;
      row.appendChild(element("span", "", text[award.award] || award.award));
      var amount =
        award.amount_cents === null
          ? text.jackpot_share.replace("{percent}", String(award.jackpot_percent_bp / 100))
          : money(award.amount_cents, pool.currency, true);
      row.appendChild(element("span", "amount-cell", amount));
      list.appendChild(row);
    });
    var envy = element("li");
    envy.dataset.award = "envy";
    var label = element("span", "", text.envy);
    label.appendChild(element("small", "note", text.envy_detail));
    envy.appendChild(label);
    envy.appendChild(
      element("span", "amount-cell", money(pool.paytable.envy_cents, pool.currency, true))
    );
    list.appendChild(envy);
  }

  // --- polling ---------------------------------------------------------------------------------
  function fetchWithin(url, headers) {
    var controller = new AbortController();
    var timer = setTimeout(function () {
      controller.abort();
    }, config.fetchTimeoutMs);
    return fetch(url, { headers: headers, cache: "no-store", signal: controller.signal }).finally(
      function () {
        clearTimeout(timer);
      }
    );
  }

  function pollMeter() {
    var headers = etag ? { "If-None-Match": etag } : {};
    fetchWithin(config.meterUrl, headers)
      .then(function (response) {
        if (response.status === 304 && meter) {
          lastAnswerAt = Date.now();
          setState("live");
          return null;
        }
        if (response.status === 503) {
          // Closed, not merely slow: no figure may stay on the screen as if it were live.
          setState("offline");
          return null;
        }
        if (!response.ok) throw new Error("meter answered " + response.status);
        var tag = response.headers.get("ETag");
        return response.json().then(function (answer) {
          etag = tag;
          lastAnswerAt = Date.now();
          renderMeter(answer);
        });
      })
      .catch(function () {
        /* counted by checkLiveness: no answer is no answer */
      })
      .finally(function () {
        checkLiveness();
        setTimeout(pollMeter, config.pollMs);
      });
  }

  function pollPool() {
    fetchWithin(config.poolUrl, {})
      .then(function (response) {
        if (!response.ok) throw new Error("pool answered " + response.status);
        return response.json().then(renderPool);
      })
      .then(
        function () {
          setTimeout(pollPool, config.configRefreshMs);
        },
        function () {
          setTimeout(pollPool, config.pollMs * 5); // not yet shown: try again soon
        }
      );
  }

  setInterval(checkLiveness, 250);
  pollPool();
  pollMeter();
})();
