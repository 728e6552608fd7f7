// The supervisors' award queue. Everything shown comes from GET /api/v1/awards (one request per
// open status and one for the last paid, each polled with If-None-Match); every action is the
// API's own step, posted with the session's CSRF token. What this script decides is only what
// to offer: it disables what the API would refuse this user (approving an award they verified,
// confirming a void they requested, approving a jackpot surveillance has not confirmed) and shows
// the API's refusal when one comes anyway. A surveillance officer records a video review from
// here (POST .../review); a manager decides surveillance's referral (POST .../referral).
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("page-config").textContent);
  var text = config.text;
  var OPEN = ["pending", "verified", "approved"];
  var JACKPOT = "royal_flush";
  var SUITS = { c: "\u2663", d: "\u2666", h: "\u2665", s: "\u2660" };
  var found = { pending: [], verified: [], approved: [], paid: [] };
  var etags = {};
  var timer = null;
  var polling = false; // one poll at a time; an action's poll during one runs right after it
  var pollAgain = false;
  var introduced = false; // a reader's (auditor's, surveillance's) notice, shown at first render

  var groups = new Intl.NumberFormat(text.locale, { maximumFractionDigits: 0 });
  var decimal = (1.5).toLocaleString(text.locale).charAt(1);

  function say(template, values) {
    return template.replace(/\{(\w+)\}/g, function (all, key) {
      return key in values ? String(values[key]) : all;
    });
  }

  // "12 345,67 €" or "€12,345.67": integer cents, split without a float.
  function money(cents, pool) {
    var rest = cents % 100;
    var figure = groups.format((cents - rest) / 100) + decimal + String(rest).padStart(2, "0");
    var currency = config.currencies[pool] || "EUR";
    var symbol = currency === "EUR" ? "\u20ac" : currency;
    return text.locale.indexOf("fr") === 0 ? figure + "\u00a0" + symbol : symbol + figure;
  }

  function age(iso) {
    var seconds = Math.max(0, Math.floor((Date.now() - new Date(iso).getTime()) / 1000));
    if (seconds < 60) return say(text.seconds, { n: seconds });
    var minutes = Math.floor(seconds / 60);
    if (minutes < 60) return say(text.minutes, { n: minutes });
    return say(text.hours, { n: Math.floor(minutes / 60), m: minutes % 60 });
  }

  function clock(iso) {
    return new Intl.DateTimeFormat(text.locale, { timeStyle: "short" }).format(new Date(iso));
  }

  function element(tag, className, content) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (content !== undefined) node.textContent = content;
    return node;
  }

  function cardNode(card, winning) {
    var suit = card.charAt(1);
    var rank = card.charAt(0) === "T" ? "10" : card.charAt(0);
    var node = element("span", "card suit-" + suit, rank + SUITS[suit]);
    node.dataset.card = card;
    if (winning.indexOf(card) >= 0) node.classList.add("win");
    return node;
  }

  function cardsNode(award) {
    var box = element("div", "cards");
    [["hand", award.cards], ["board", award.board]].forEach(function (group) {
      if (!group[1].length) return;
      var row = element("span", "card-group");
      row.appendChild(element("span", "card-label", text[group[0]]));
      group[1].forEach(function (card) { row.appendChild(cardNode(card, award.winning_five)); });
      box.appendChild(row);
    });
    return box;
  }

  function field(label, value, className) {
    var node = element("div", "field " + (className || ""));
    node.appendChild(element("span", "label", label));
    node.appendChild(element("span", "value", value));
    return node;
  }

  // --- actions ---------------------------------------------------------------------------------
  // A step the API would refuse this user is offered disabled, with the reason beside it (and
  // still wired: should it be clicked anyway, the API's refusal is what the page shows).
  function button(box, label, className, run, refusal) {
    var node = element("button", "button " + className, label);
    node.type = "button";
    node.addEventListener("click", run);
    box.appendChild(node);
    if (refusal) {
      node.disabled = true;
      node.title = refusal;
      box.appendChild(element("p", "why", refusal));
    }
  }

  function ask(label) {
    var dialog = document.getElementById("ask");
    var input = document.getElementById("ask-text");
    document.getElementById("ask-label").textContent = label;
    input.value = "";
    dialog.returnValue = ""; // Escape leaves it as it was: an earlier "ok" must not count
    return new Promise(function (resolve) {
      dialog.addEventListener("close", function done() {
        dialog.removeEventListener("close", done);
        var answer = input.value.trim();
        resolve(dialog.returnValue === "ok" && answer ? answer : null);
      });
      dialog.showModal();
      input.focus();
    });
  }

  // An optional note: "" when confirmed empty, null when the dialog was left.
  function askOptional(label) {
    var dialog = document.getElementById("ask");
    var input = document.getElementById("ask-text");
    document.getElementById("ask-label").textContent = label;
    input.value = "";
    dialog.returnValue = "";
    return new Promise(function (resolve) {
      dialog.addEventListener("close", function done() {
        dialog.removeEventListener("close", done);
        resolve(dialog.returnValue === "ok" ? input.value.trim() : null);
      });
      dialog.showModal();
      input.focus();
    });
  }

  // A two-person step's second person sends a fresh code of their second factor with it, where
  // the API asks for one: `body` with the code, or null when the dialog was left.
  function withCode(body) {
    if (!config.codeRequired) return Promise.resolve(body);
    return ask(text.ask_code).then(function (code) {
      if (!code) return null;
      body.second_factor_code = code;
      return body;
    });
  }

  // The payment: method, reference, note and the winner's identity (required at or above the
  // identification threshold, sent below it only when a name is given). The identity is posted
  // to the API and cleared from the form at once; it is never shown back.
  function askPayment(award) {
    var dialog = document.getElementById("pay");
    var form = document.getElementById("pay-form");
    var value = function (id) { return document.getElementById(id).value.trim(); };
    var required = award.due_cents >= config.identifyCents;
    var threshold = money(config.identifyCents, award.pool);
    form.reset();
    document.getElementById("pay-title").textContent = say(text.pay_title, {
      id: award.id, amount: money(award.due_cents, award.pool),
    });
    document.getElementById("pay-winner-rule").textContent = say(
      required ? text.winner_required : text.winner_optional, { amount: threshold }
    );
    ["winner-name", "winner-birth", "winner-document-number", "winner-nationality"].forEach(
      function (id) { document.getElementById(id).required = required; }
    );
    var method = document.getElementById("pay-method");
    var reference = document.getElementById("pay-reference");
    method.onchange = function () { reference.required = method.value !== "cash"; };
    method.onchange();
    dialog.returnValue = "";
    return new Promise(function (resolve) {
      dialog.addEventListener("close", function done() {
        dialog.removeEventListener("close", done);
        if (dialog.returnValue !== "ok") {
          form.reset();
          resolve(null);
          return;
        }
        var body = { method: method.value };
        if (value("pay-reference")) body.reference = value("pay-reference");
        if (value("pay-note")) body.note = value("pay-note");
        if (required || value("winner-name")) {
          body.winner = {
            name: value("winner-name"),
            date_of_birth: value("winner-birth"),
            document_type: value("winner-document-type"),
            document_number: value("winner-document-number"),
            nationality: value("winner-nationality").toUpperCase(),
          };
        }
        form.reset();
        resolve(body);
      });
      dialog.showModal();
      method.focus();
    });
  }

  function showMessage(message, kind) {
    var node = document.getElementById("message");
    node.textContent = message;
    node.dataset.kind = kind;
    node.hidden = false;
  }

  function refusalOf(status, body) {
    var error = (body && body.error) || {};
    var message = error.message || String(status);
    if (status === 401 || (status === 403 && error.code === "not_authenticated")) {
      return text.signed_out;
    }
    if (error.code === "four_eyes") return say(text.four_eyes, { message: message });
    if (error.code === "award_wrong_status") return say(text.wrong_status, { message: message });
    if (status === 403 && error.code === "permission_denied") return text.not_allowed;
    return say(text.refused, { message: message });
  }

  function post(award, step, body, done) {
    var url = config.awardsUrl + "/" + award.id + "/" + step;
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": config.csrfToken },
      body: JSON.stringify(body || {}),
    })
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (answer) {
          if (response.ok) {
            var key = response.status === 202 ? "done_void_requested" : done;
            showMessage(say(text[key], { id: award.id }), "done");
          } else {
            showMessage(refusalOf(response.status, answer), "refused");
          }
        });
      })
      .catch(function () { showMessage(text.offline, "refused"); })
      .then(poll);
  }

  // The review dialog: the footage range is typed in the tablet's local time and sent in UTC.
  function askReview(award) {
    var dialog = document.getElementById("review");
    var ids = ["camera", "from", "to", "reason", "note"];
    document.getElementById("review-title").textContent = say(text.review_title, { id: award.id });
    ids.forEach(function (id) { document.getElementById("review-" + id).value = ""; });
    document.getElementById("review-verdict").value = "confirmed";
    dialog.returnValue = "";
    return new Promise(function (resolve) {
      dialog.addEventListener("close", function done() {
        dialog.removeEventListener("close", done);
        if (dialog.returnValue !== "ok") return resolve(null);
        var value = function (id) { return document.getElementById("review-" + id).value.trim(); };
        var instant = function (id) {
          var moment = new Date(value(id));
          return isNaN(moment.getTime()) ? value(id) : moment.toISOString();
        };
        var body = {
          camera: value("camera"),
          from: instant("from"),
          to: instant("to"),
          verdict: document.getElementById("review-verdict").value,
        };
        if (value("reason")) body.reason = value("reason");
        if (value("note")) body.note = value("note");
        resolve(body);
      });
      dialog.showModal();
      document.getElementById("review-camera").focus();
    });
  }

  // Surveillance's latest review: its verdict confirmed, or a referral cleared by a manager.
  function reviewConfirmed(award) {
    var review = award.review;
    if (!review) return false;
    if (review.verdict === "confirmed") return true;
    return Boolean(review.decision && review.decision.outcome === "clear");
  }

  function referralOpen(award) {
    return Boolean(award.review && award.review.verdict === "referred" && !award.review.decision);
  }

  function reviewActions(award, box) {
    var open = award.status === "pending" || award.status === "verified";
    if (!open || award.void_requested_by) return;
    var me = config.user;
    if (config.canReview && !referralOpen(award)) {
      var mine = award.verified_by === me || award.approved_by === me;
      button(box, text.review, "primary review", function () {
        askReview(award).then(function (body) {
          if (body) post(award, "review", body, "done_review");
        });
      }, mine ? text.you_checked : null);
    }
    if (config.canDecide && referralOpen(award)) {
      var reviewer = award.review.reviewer === me ? text.you_reviewed : null;
      [["clear", text.referral_clear, "primary"], ["void", text.referral_void, "danger"]].forEach(
        function (choice) {
          button(box, choice[1], choice[2] + " referral-" + choice[0], function () {
            ask(text.ask_referral).then(function (reason) {
              if (!reason) return;
              withCode({ decision: choice[0], reason: reason }).then(function (body) {
                if (body) post(award, "referral", body, "done_referral");
              });
            });
          }, reviewer);
        }
      );
    }
  }

  function actionsFor(award) {
    var box = element("div", "actions");
    reviewActions(award, box);
    if (!config.canAct) return box;
    var me = config.user;
    var requested = award.void_requested_by;
    if (requested) {
      button(box, text.void_confirm, "danger", function () {
        withCode({}).then(function (body) {
          if (body) post(award, "void/confirm", body, "done_void_confirm");
        });
      }, requested === me ? text.you_requested : null);
      button(box, text.void_cancel, "quiet", function () {
        ask(text.ask_cancel).then(function (reason) {
          if (reason) post(award, "void/cancel", { reason: reason }, "done_void_cancel");
        });
      });
      return box;
    }
    if (award.status === "pending") {
      button(box, text.verify, "primary", function () {
        ask(text.ask_note).then(function (note) {
          if (note) post(award, "verify", { note: note }, "done_verify");
        });
      });
    } else if (award.status === "verified") {
      var waiting = award.waits_on_follows
        ? say(text.waits_follows, { id: award.follows })
        : referralOpen(award)
        ? text.referral_open
        : award.surveillance_required && !reviewConfirmed(award)
          ? text.review_needed
          : null;
      button(box, text.approve, "primary", function () {
        askOptional(text.ask_approve).then(function (note) {
          if (note === null) return;
          withCode(note ? { note: note } : {}).then(function (body) {
            if (body) post(award, "approve", body, "done_approve");
          });
        });
      }, award.verified_by === me ? text.you_verified : waiting);
    } else if (award.status === "approved") {
      button(box, text.pay, "primary", function () {
        askPayment(award).then(function (body) {
          if (body) post(award, "pay", body, "done_pay");
        });
      }, award.waits_on_follows ? say(text.waits_follows, { id: award.follows }) : null);
    }
    if (award.status === "pending" || award.status === "verified") {
      button(box, text.void, "danger", function () {
        ask(text.ask_reason).then(function (reason) {
          if (reason) post(award, "void", { reason: reason }, "done_void");
        });
      });
    }
    return box;
  }

  // --- the lists -------------------------------------------------------------------------------
  function awardNode(award) {
    var node = element("article", "award kind-" + award.kind);
    node.dataset.award = award.id;
    node.dataset.status = award.status;
    var head = element("header", "award-head");
    head.appendChild(element("span", "kind", text[award.kind] || award.kind));
    head.appendChild(element("span", "amount", money(award.due_cents, award.pool)));
    node.appendChild(head);
    var facts = element("div", "facts");
    facts.appendChild(field(text.table, award.table_name));
    facts.appendChild(field(text.seat, String(award.seat)));
    facts.appendChild(field(text.round, award.round_id, "round"));
    if (award.paid_at) {
      facts.appendChild(field(text.paid_at, clock(award.paid_at)));
    } else {
      var waited = field(text.age, age(award.created_at), "age");
      waited.dataset.since = award.created_at;
      facts.appendChild(waited);
    }
    facts.appendChild(field(text.status, text["status_" + award.status], "status"));
    node.appendChild(facts);
    node.appendChild(cardsNode(award));
    var who = [];
    if (award.verified_by) who.push(say(text.verified_by, { user: award.verified_by }));
    if (award.approved_by) who.push(say(text.approved_by, { user: award.approved_by }));
    if (award.paid_by) who.push(say(text.paid_by, { user: award.paid_by }));
    if (award.winner_identified) who.push(text.identified);
    if (award.void_requested_by) {
      who.push(say(text.void_requested_by, {
        user: award.void_requested_by, reason: award.void_request_reason,
      }));
    }
    if (who.length) node.appendChild(element("p", "people", who.join(" · ")));
    if (award.review) node.appendChild(reviewNode(award.review));
    if (award.status === "paid") {
      var slip = element("a", "button quiet slip-link", text.slip);
      slip.href = config.slipUrl.replace("{id}", award.id);
      node.appendChild(slip);
    } else {
      node.appendChild(actionsFor(award));
    }
    return node;
  }

  function reviewNode(review) {
    var when = new Intl.DateTimeFormat(text.locale, { dateStyle: "short", timeStyle: "short" });
    var shown = [say(text.reviewed, {
      verdict: text["verdict_" + review.verdict],
      user: review.reviewer,
      at: when.format(new Date(review.reviewed_at)),
      camera: review.camera,
      from: when.format(new Date(review.from)),
      to: when.format(new Date(review.to)),
    })];
    if (review.reason) shown.push(say(text.review_reason_shown, { reason: review.reason }));
    if (review.decision) {
      shown.push(say(text["referral_decided_" + review.decision.outcome], {
        user: review.decision.decided_by, reason: review.decision.reason,
      }));
    }
    var node = element("p", "review", shown.join(" · "));
    node.dataset.verdict = review.verdict;
    return node;
  }

  function fill(container, awards, empty) {
    container.replaceChildren.apply(
      container,
      awards.length ? awards.map(awardNode) : [element("p", "empty", empty)]
    );
  }

  function render() {
    var open = OPEN.reduce(function (all, status) { return all.concat(found[status]); }, []);
    open.sort(function (a, b) { return b.id - a.id; }); // newest first, as the API lists them
    var jackpots = open.filter(function (award) { return award.kind === JACKPOT; });
    var others = open.filter(function (award) { return award.kind !== JACKPOT; });
    document.getElementById("jackpot").hidden = jackpots.length === 0;
    fill(document.getElementById("jackpot-list"), jackpots, "");
    var queue = document.getElementById("queue");
    fill(queue, others, text.empty);
    queue.dataset.loaded = "true";
    fill(document.getElementById("paid"), found.paid, text.no_paid);
    if (!config.canAct && !introduced) {
      // Said once: a later render must not hide the answer to a review just recorded.
      introduced = true;
      showMessage(config.canReview ? text.read_only_surveillance : text.read_only, "info");
    }
  }

  function listUrl(status) {
    var limit = status === "paid" ? config.paidShown : 200;
    return config.awardsUrl + "?status=" + status + "&limit=" + limit;
  }

  function fetchList(status) {
    var headers = etags[status] ? { "If-None-Match": etags[status] } : {};
    return fetch(listUrl(status), { headers: headers, cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (response.status === 304) return false;
        if (!response.ok) {
          return response.json().catch(function () { return null; }).then(function (body) {
            throw { status: response.status, body: body };
          });
        }
        etags[status] = response.headers.get("ETag");
        return response.json().then(function (page) {
          found[status] = page.results;
          return true;
        });
      });
  }

  function poll() {
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    clearTimeout(timer);
    Promise.all(OPEN.concat(["paid"]).map(fetchList))
      .then(function (changed) {
        if (changed.indexOf(true) >= 0) render();
        var clock = new Intl.DateTimeFormat(text.locale, { timeStyle: "medium" });
        document.getElementById("updated").textContent = say(text.updated, {
          time: clock.format(new Date()),
        });
      })
      .catch(function (failure) {
        if (failure && (failure.status === 401 || failure.status === 403)) {
          showMessage(text.signed_out, "refused");
          window.location.assign(config.loginUrl + "?next=" + encodeURIComponent(location.pathname));
          return;
        }
        if (!(failure instanceof TypeError && /fetch/i.test(failure.message))) {
          console.error(failure); // not the network: a fault of this script, let it be seen
        }
        showMessage(text.offline, "refused");
      })
      .then(function () {
        polling = false;
        if (pollAgain) {
          pollAgain = false;
          poll();
        } else {
          timer = setTimeout(poll, config.pollMs);
        }
      });
  }

  setInterval(function () {
    document.querySelectorAll(".age[data-since] .value").forEach(function (node) {
      node.textContent = age(node.parentNode.dataset.since);
    });
  }, 1000);
  poll();
})();
