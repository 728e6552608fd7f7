// The auditor's view of a pool: reads the pool's history and its void watch from the API (with
// the session) and draws each chart as inline SVG. Every figure shown is one the API answered; amounts are whole
// cents, only formatted here. No library, nothing from outside the service.
(function () {
  "use strict";

  const config = JSON.parse(document.getElementById("page-config").textContent);
  const text = config.text;
  const SVG = "http://www.w3.org/2000/svg";
  const W = 640, H = 260, LEFT = 96, RIGHT = 44, TOP = 16, BOTTOM = 34;
  const money = new Intl.NumberFormat(text.locale, { style: "currency", currency: config.currency });
  const number = new Intl.NumberFormat(text.locale);
  const dayFormat = new Intl.DateTimeFormat(text.locale, { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });

  // Cents are integers below 2^53: cents / 100 is the nearest double to the amount, far closer
  // than the half cent the formatter rounds to, so the text is the exact amount.
  const euros = (cents) => money.format(cents / 100);
  const day = (iso) => dayFormat.format(new Date(iso + "T00:00:00Z"));
  const dayNumber = (iso) => Date.parse(iso + "T00:00:00Z") / 86400000;

  function query(extra) {
    const params = new URLSearchParams(config.days);
    for (const [key, value] of Object.entries(extra)) params.set(key, value);
    const built = params.toString();
    return built ? "?" + built : "";
  }

  function svg(name, attributes, parent, content) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
    if (content !== undefined) node.textContent = content;
    parent.appendChild(node);
    return node;
  }

  function cell(row, content, className) {
    const node = row.insertCell();
    node.textContent = content;
    if (className) node.className = className;
    return node;
  }

  function empty(plot) {
    svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "empty" }, plot, text.no_data);
  }

  function axes(plot, low, high, labels) {
    svg("line", { x1: LEFT, y1: H - BOTTOM, x2: W - RIGHT, y2: H - BOTTOM, class: "axis" }, plot);
    svg("line", { x1: LEFT, y1: TOP, x2: LEFT, y2: H - BOTTOM, class: "axis" }, plot);
    svg("text", { x: LEFT - 6, y: TOP + 4, "text-anchor": "end", class: "tick" }, plot, high);
    svg("text", { x: LEFT - 6, y: H - BOTTOM, "text-anchor": "end", class: "tick" }, plot, low);
    labels.forEach(([x, label]) =>
      svg("text", { x: x, y: H - BOTTOM + 18, "text-anchor": "middle", class: "tick" }, plot, label));
  }

  function drawMeter(days) {
    const plot = document.getElementById("meter-chart");
    if (!days.length) return empty(plot);
    const values = days.map((d) => d.closing_cents);
    let low = Math.min(...values), high = Math.max(...values);
    if (low === high) { low -= 100; high += 100; }
    const first = dayNumber(days[0].day), last = dayNumber(days[days.length - 1].day);
    const x = (iso) => last === first ? (LEFT + W - RIGHT) / 2
      : LEFT + 10 + (dayNumber(iso) - first) / (last - first) * (W - RIGHT - LEFT - 20);
    const y = (cents) => TOP + (high - cents) / (high - low) * (H - TOP - BOTTOM);
    const ends = days.length > 1 ? [days[0], days[days.length - 1]] : [days[0]];
    axes(plot, euros(low), euros(high), ends.map((d) => [x(d.day), day(d.day)]));
    svg("polyline", {
      id: "meter-line", class: "line",
      points: days.map((d) => x(d.day).toFixed(1) + "," + y(d.closing_cents).toFixed(1)).join(" "),
    }, plot);
    for (const d of days) {
      const point = svg("circle", {
        class: "point", cx: x(d.day), cy: y(d.closing_cents), r: 5,
        "data-day": d.day, "data-cents": d.closing_cents,
      }, plot);
      svg("title", {}, point, day(d.day) + " · " + euros(d.closing_cents));
      if (d.corrections_cents) {
        // A day the meter was corrected: a diamond above its point, the correction in its title.
        const cx = x(d.day), cy = y(d.closing_cents) - 14;
        const mark = svg("polygon", {
          class: "correction-mark", "data-day": d.day, "data-cents": d.corrections_cents,
          points: [[cx, cy - 6], [cx + 6, cy], [cx, cy + 6], [cx - 6, cy]].map((p) => p.join(",")).join(" "),
        }, plot);
        svg("title", {}, mark, day(d.day) + " · " + text.correction_mark + " " + euros(d.corrections_cents));
      }
    }
  }

  function drawCorrections(corrections) {
    const body = document.querySelector("#corrections-table tbody");
    if (!corrections.length) {
      const only = cell(body.insertRow(), text.no_data, "empty");
      only.colSpan = 7;
      return;
    }
    for (const c of corrections) {
      const row = body.insertRow();
      row.className = "correction";
      row.dataset.change = c.change;
      row.dataset.cents = c.amount_cents;
      const target = c.target === "award"
        ? text.target_award.replace("{award}", c.award) : text["target_" + c.target];
      cell(row, day(c.day));
      cell(row, target, "target " + c.target);
      cell(row, euros(c.amount_cents), "number amount");
      cell(row, c.reason);
      cell(row, c.reference, "reference");
      cell(row, c.proposed_by + " / " + c.approved_by);
      cell(row, euros(c.meter_after_cents), "number");
    }
  }

  function drawStakes(days) {
    const plot = document.getElementById("stakes-chart");
    if (!days.length) return empty(plot);
    const high = Math.max(...days.map((d) => d.stakes_cents));
    const slot = (W - LEFT - RIGHT) / days.length;
    const width = Math.max(4, Math.min(48, slot * 0.7));
    const ends = days.length > 1 ? [0, days.length - 1] : [0];
    axes(plot, euros(0), euros(high), ends.map((i) => [LEFT + slot * (i + 0.5), day(days[i].day)]));
    days.forEach((d, i) => {
      const height = d.stakes_cents / high * (H - TOP - BOTTOM);
      const left = LEFT + slot * (i + 0.5) - width / 2;
      const bar = svg("rect", {
        class: "bar", x: left, y: H - BOTTOM - height, width: width, height: height,
        "data-day": d.day, "data-count": d.count, "data-cents": d.stakes_cents,
      }, plot);
      svg("title", {}, bar, day(d.day) + " · " + number.format(d.count) + " · " + euros(d.stakes_cents)
        + (d.refunded_count ? " · " + text.refunded + " " + euros(d.refunded_cents) : ""));
      if (slot > 28) {
        svg("text", { x: left + width / 2, y: H - BOTTOM - height - 4, "text-anchor": "middle", class: "value" },
          plot, number.format(d.count));
      }
    });
  }

  function oneIn(rate) {
    const [numerator, denominator] = rate.split("/").map(Number);
    return numerator ? text.one_in.replace("{n}", number.format(Math.round(denominator / numerator))) : "–";
  }

  function drawAwards(history) {
    document.getElementById("basis").textContent = text.rounds
      .replace("{rounds}", number.format(history.settled_rounds))
      .replace("{stakes}", number.format(history.settled_stakes));
    const body = document.querySelector("#awards-table tbody");
    const plot = document.getElementById("awards-chart");
    const slot = (W - 20) / history.awards.length;
    const width = Math.min(30, slot * 0.35);
    svg("line", { x1: 10, y1: H - BOTTOM, x2: W - 10, y2: H - BOTTOM, class: "axis" }, plot);
    history.awards.forEach((line, i) => {
      const row = body.insertRow();
      row.dataset.kind = line.kind;
      cell(row, text[line.kind] || line.kind);
      cell(row, number.format(line.observed), "number observed");
      cell(row, line.expected_decimal, "number expected");
      cell(row, oneIn(line.expected_rate), "number");
      // Each kind on its own scale (its larger figure full height): a full house is expected
      // some 10,000 times more often than a royal, and both pairs must be readable.
      const expected = Number(line.expected_decimal);
      const top = Math.max(line.observed, expected) || 1;
      const centre = 10 + slot * (i + 0.5);
      [["observed", line.observed, line.observed], ["expected", expected, line.expected_decimal]]
        .forEach(([name, value, label], side) => {
          const height = value / top * (H - TOP - BOTTOM - 16);
          const left = centre + (side ? 2 : -2 - width);
          const bar = svg("rect", {
            class: "bar " + name, x: left, y: H - BOTTOM - height, width: width, height: height,
            "data-kind": line.kind, "data-value": label,
          }, plot);
          svg("title", {}, bar, (text[line.kind] || line.kind) + " · " + text[name] + " " + label);
          svg("text", { x: left + width / 2, y: H - BOTTOM - height - 4, "text-anchor": "middle", class: "value" },
            plot, name === "observed" ? number.format(value) : label);
        });
      svg("text", { x: centre, y: H - BOTTOM + 16, "text-anchor": "middle", class: "tick" },
        plot, text[line.kind] || line.kind);
    });
    const legend = svg("g", { class: "legend" }, plot);
    [["observed", 0], ["expected", 1]].forEach(([name, i]) => {
      svg("rect", { class: "bar " + name, x: W - 200 + i * 100, y: 4, width: 12, height: 12 }, legend);
      svg("text", { x: W - 184 + i * 100, y: 14, class: "tick" }, legend, text[name]);
    });
  }

  function drawHits(hits) {
    const body = document.querySelector("#hits-table tbody");
    if (!hits.length) {
      const row = body.insertRow();
      const only = cell(row, text.no_data, "empty");
      only.colSpan = 8;
      return;
    }
    for (const hit of hits) {
      const row = body.insertRow();
      row.className = "hit";
      row.dataset.award = hit.award;
      row.dataset.cents = hit.amount_cents;
      cell(row, day(hit.day));
      cell(row, hit.table);
      cell(row, hit.round);
      cell(row, String(hit.seat), "number");
      cell(row, euros(hit.amount_cents), "number amount");
      cell(row, text[hit.status] || hit.status, "status " + hit.status);
      cell(row, euros(hit.reset_reserve_cents), "number reset-reserve");
      cell(row, euros(hit.reset_house_cents), "number reset-house");
    }
  }

  function drawReconciliation(status, figures) {
    const badge = document.getElementById("reconciliation");
    if (!status) {
      badge.dataset.ok = "none";
      badge.textContent = text.reconciliation_none;
      return;
    }
    badge.dataset.ok = String(status.ok);
    const when = new Date(status.finished_at).toLocaleString(text.locale);
    let words = (status.ok ? text.reconciliation_ok : text.reconciliation_failed) + " · " + when;
    if (figures) words += " · " + text.identity + " " + text[figures.identity];
    if (!status.ok && status.first_problem) words += " · " + status.first_problem;
    badge.textContent = words;
  }

  // The void watch: a row per table, its window's figures and a strip of its shifts (each cell
  // darker for a higher void rate, outlined where the check raised an alarm), then the alarms.
  function drawVoids(watch) {
    const zone = { timeZone: watch.time_zone };
    const shiftDay = new Intl.DateTimeFormat(text.locale, { day: "numeric", month: "short", ...zone });
    const clock = new Intl.DateTimeFormat(text.locale, { hour: "2-digit", minute: "2-digit", ...zone });
    const moment = new Intl.DateTimeFormat(text.locale, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit", ...zone });
    // A shift: its day and hours; a longer span (a window's flag): both ends in full.
    const span = (from, to) => shiftDay.format(new Date(from)) === shiftDay.format(new Date(to))
      || Date.parse(to) - Date.parse(from) <= watch.shift_hours * 3600000
      ? text.shift_label.replace("{day}", shiftDay.format(new Date(from)))
        .replace("{from}", clock.format(new Date(from))).replace("{to}", clock.format(new Date(to)))
      : moment.format(new Date(from)) + " \u2013 " + moment.format(new Date(to));
    document.getElementById("voids-basis").textContent = text.voids_note
      .replace("{shifts}", number.format(watch.shifts.length))
      .replace("{hours}", number.format(watch.shift_hours))
      .replace("{min}", number.format(watch.min_rounds));
    const body = document.querySelector("#voids-table tbody");
    if (!watch.tables.length) {
      cell(body.insertRow(), text.no_data, "empty").colSpan = 6;
    }
    const CELL = 14, GAP = 2;
    for (const line of watch.tables) {
      const row = body.insertRow();
      row.className = "void-table";
      row.dataset.table = line.table;
      row.dataset.flagged = String(line.window.flag !== null);
      cell(row, line.table_name);
      cell(row, number.format(line.window.rounds), "number rounds");
      cell(row, number.format(line.window.voids), "number voids");
      cell(row, line.window.expected, "number expected");
      cell(row, euros(line.window.refunded_cents), "number refunded");
      const strip = svg("svg", {
        class: "shifts", viewBox: "0 0 " + watch.shifts.length * (CELL + GAP) + " " + CELL,
        width: watch.shifts.length * (CELL + GAP), height: CELL, role: "img", "aria-label": text.by_shift,
      }, row.insertCell());
      watch.shifts.forEach((shift, i) => {
        const figures = line.shifts[i];
        const attributes = { x: i * (CELL + GAP), y: 0, width: CELL, height: CELL, "data-start": shift.start };
        if (figures === null) {
          svg("rect", { ...attributes, class: "shift none" }, strip);
          return;
        }
        const rect = svg("rect", {
          ...attributes,
          class: "shift" + (figures.flag === null ? "" : " flagged"),
          "data-rounds": figures.rounds, "data-voids": figures.voids, "data-expected": figures.expected,
          "fill-opacity": (0.12 + 0.88 * Math.min(1, figures.voids / figures.rounds * 5)).toFixed(2),
        }, strip);
        svg("title", {}, rect, span(shift.start, shift.end) + " · " + text.voided + " "
          + number.format(figures.voids) + " / " + number.format(figures.rounds) + " · " + text.expected
          + " " + figures.expected + (figures.flag === null ? "" : " · " + text.alarm));
      });
    }
    const flags = document.querySelector("#void-flags tbody");
    if (!watch.flags.length) {
      cell(flags.insertRow(), text.no_alarm, "empty").colSpan = 6;
    }
    for (const flag of watch.flags) {
      const row = flags.insertRow();
      row.className = "void-flag";
      row.dataset.flag = flag.id;
      row.dataset.kind = flag.kind;
      cell(row, flag.table_name);
      cell(row, span(flag.window_from, flag.window_to) + " · " + text[flag.kind]);
      cell(row, number.format(flag.observed), "number voids");
      cell(row, number.format(flag.rounds), "number rounds");
      cell(row, flag.expected, "number expected");
      cell(row, flag.adjusted, "number adjusted");
    }
  }

  function fail(message) {
    document.body.dataset.state = "failed";
    document.getElementById("status").textContent = text.failed + (message ? " · " + message : "");
  }

  for (const link of document.querySelectorAll("a.csv")) {
    link.href = config.csvUrl + query({ chart: link.dataset.chart });
  }

  const read = (url) => fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((response) => response.json().then((body) => ({ ok: response.ok, body: body })));

  Promise.all([read(config.historyUrl + query({})), read(config.voidsUrl)])
    .then(([history, voids]) => {
      const refused = [history, voids].find((answer) => !answer.ok);
      if (refused) return fail(refused.body && refused.body.error ? refused.body.error.message : "");
      const body = history.body;
      drawReconciliation(body.reconciliation, body.reconciled);
      drawMeter(body.meter);
      drawStakes(body.stakes);
      drawAwards(body);
      drawHits(body.hits);
      drawCorrections(body.corrections);
      drawVoids(voids.body);
      document.getElementById("status").textContent = "";
      document.body.dataset.state = "drawn";
    })
    .catch(() => fail(""));
})();
