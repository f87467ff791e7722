// Keras Nightly Bench dashboard. Reads data/index.json (written by
// `python -m bench site`, format documented in bench/present/site.py): the
// table and each series' newest nights; draws the table, one chart per series
// on demand (its whole history, data/series/<name>.js, loaded then), and small
// multiples per device.
//
// Every string from the data (labels, versions, messages, URLs) came from a
// run record that another machine wrote: it is inserted with textContent /
// text nodes only, never as HTML, and links are kept only for http(s) URLs.
"use strict";

(function () {
  const DAY = 86400;
  const STATUS_ORDER = ["Failed", "Regressed", "Watch", "Stale", "New", "Faster", "Steady", "Skipped"];
  // The one status palette (bench/present/palette.json), from data.palette.
  let STATUS_COLOUR = {};
  const KEY = ["backend", "device", "model", "mode"];
  // Points are whole days: time ticks no finer than a day (uPlot's own steps from a day up).
  const MONTH = 30 * DAY, YEAR = 365 * DAY;
  const DAY_INCRS = [1, 2, 3, 4, 5, 7, 10, 15].map((d) => d * DAY)
    .concat([1, 2, 3, 4, 6].map((m) => m * MONTH), [1, 2, 5, 10].map((y) => y * YEAR));
  const COLUMNS = [
    { key: "backend", label: "BACKEND" },
    { key: "device", label: "DEVICE" },
    { key: "model", label: "MODEL" },
    { key: "mode", label: "MODE" },
    { key: "latest", label: "LATEST", num: true, text: (r) => r.latest_text },
    { key: "delta_prev", label: "Δ PREV", num: true, text: (r) => r.delta_text },
    // The sparkline string sorts by the size of the detected change.
    { key: "trend", label: "TREND", value: (r) => (r.change ? r.change.relative : null) },
    { key: "runs", label: "RUNS", num: true },
    // Status sorts by urgency (Failed first), an unknown word after the known ones.
    { key: "status", label: "STATUS", value: (r) => (STATUS_ORDER.includes(r.status) ? STATUS_ORDER.indexOf(r.status) : STATUS_ORDER.length) },
    // Why the status says what it says (the change, or the last failure), as in the README.
    { key: "note", label: "NOTE", value: (r) => r.note || null },
  ];
  // Metric first: the page opens on throughput, latency/memory/energy a click away (issue 13).
  const FILTERS = [
    { key: "metric", label: "Metric" },
    { key: "device", label: "Device" }, { key: "backend", label: "Backend" },
    { key: "model", label: "Model" }, { key: "mode", label: "Mode" }, { key: "status", label: "Status" },
  ];

  const state = {
    data: null, runs: [], rows: [],
    sort: { key: "backend", dir: 1 },
    filters: {},
    selected: null, chart: null, multiples: [],
  };
  const $ = (id) => document.getElementById(id);

  // -- small helpers ---------------------------------------------------

  // el("td", {class: "x"}, "text", node): attribute values and children are
  // set as attributes and text nodes, so data can never become markup.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null) continue;
      if (k === "class") e.className = v;
      else if (k.startsWith("data-")) e.dataset[k.slice(5)] = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) {
      if (c == null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  // Only http(s) links: a record's url could be "javascript:...".
  function safeUrl(u) {
    if (typeof u !== "string" || !u) return null;
    try {
      const url = new URL(u, location.href);
      return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  // A CI run link only to a GitHub Actions run page (bench site keeps only
  // this repository's; this is the second fence).
  const RUN_URL = /^https:\/\/github\.com\/[A-Za-z0-9-]+\/[A-Za-z0-9._-]+\/actions\/runs\/[0-9]+(\/attempts\/[0-9]+)?$/;

  function runLink(u, text) {
    return typeof u === "string" && RUN_URL.test(u) ? link(u, text) : null;
  }

  function link(u, text) {
    const href = safeUrl(u);
    return href ? el("a", { href, rel: "noopener noreferrer" }, text) : null;
  }

  const isoDay = (day) => new Date(day * DAY * 1000).toISOString().slice(0, 10);

  // Same shape as bench.present.format.format_value: 288.7k, 1.2M, 950.
  function short(v) {
    if (v == null || !isFinite(v)) return "—";
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(1) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1e3) return (v / 1e3).toFixed(1) + "k";
    if (a >= 99.5) return v.toFixed(0);
    if (a >= 9.95) return v.toFixed(1);
    if (a >= 0.995) return v.toFixed(2);
    return v.toPrecision(3);
  }

  function pct(f) {
    if (f == null || !isFinite(f)) return "—";
    return (f >= 0 ? "+" : "") + (f * 100).toFixed(1) + "%";
  }

  const seriesName = (r) => KEY.map((k) => r[k]).join(" · ");

  // Points are delta-encoded on disk; expand them once, when a chart needs them.
  function points(r) {
    if (!r._days) {
      const n = r.days.length, days = new Array(n), run = new Array(n), env = new Array(n);
      let d = 0, k = 0, e = 0;
      for (let i = 0; i < n; i++) {
        d += r.days[i]; k += r.run[i]; e += (r.env || [])[i] || 0;
        days[i] = d; run[i] = k; env[i] = r.env && r.env.length ? e : null;
      }
      r._days = days; r._run = run; r._env = env;
    }
    return { days: r._days, values: r.values, run: r._run, env: r._env };
  }

  function runInfo(i) {
    const run = state.runs[i] || [];
    return { id: run[0], attempt: run[1], keras: run[2], url: run[3] };
  }

  // -- the table -------------------------------------------------------

  function compare(a, b) {
    const col = COLUMNS.find((c) => c.key === state.sort.key);
    const get = col.value || ((r) => r[col.key]);
    const va = get(a), vb = get(b);
    // Missing values (no points yet, no previous point) sort last either way.
    if (va == null || vb == null) {
      if ((va == null) !== (vb == null)) return va == null ? 1 : -1;
    } else if (va !== vb) {
      const c = typeof va === "number" && typeof vb === "number" ? va - vb : String(va).localeCompare(String(vb));
      if (c) return c * state.sort.dir;
    }
    for (const k of KEY) {
      const c = String(a[k]).localeCompare(String(b[k]));
      if (c) return c;
    }
    return 0;
  }

  function visibleRows() {
    const f = state.filters;
    return state.rows.filter((r) => FILTERS.every(({ key }) => !f[key] || r[key] === f[key])).sort(compare);
  }

  function buildHeader() {
    const tr = document.querySelector("#series-table thead tr");
    for (const col of COLUMNS) {
      const btn = el("button", { type: "button", class: "sort", "data-key": col.key }, col.label);
      btn.addEventListener("click", () => {
        state.sort = { key: col.key, dir: state.sort.key === col.key ? -state.sort.dir : 1 };
        renderTable();
      });
      tr.append(el("th", { scope: "col", class: col.num ? "num" : null, "data-key": col.key }, btn));
    }
  }

  function updateHeader() {
    for (const th of document.querySelectorAll("#series-table thead th")) {
      const col = COLUMNS.find((c) => c.key === th.dataset.key);
      const on = state.sort.key === col.key;
      th.querySelector("button").textContent = col.label + (on ? (state.sort.dir > 0 ? "↑" : "↓") : "");
      th.setAttribute("aria-sort", on ? (state.sort.dir > 0 ? "ascending" : "descending") : "none");
    }
  }

  // Colour only a move beyond the series' own noise band (row.delta_off, from
  // bench/present/table.py): 0.3 % of jitter is neither good nor bad news.
  function deltaClass(r) {
    if (r.delta_off === "better") return "delta good";
    if (r.delta_off === "worse") return "delta bad";
    return "delta";
  }

  function rowElement(r) {
    const cells = COLUMNS.map((col) => {
      const text = col.text ? col.text(r) : r[col.key];
      if (col.key === "status") return el("td", null, el("span", { class: "badge", "data-status": r.status }, text));
      if (col.key === "trend") return el("td", { class: "spark", "data-status": r.status, title: "last points, oldest first" }, text || "—");
      if (col.key === "note") return el("td", { class: "note", title: text || null }, text);
      if (col.key === "delta_prev") return el("td", { class: "num " + deltaClass(r) }, text);
      if (KEY.includes(col.key)) return el("td", { class: "label", title: text }, text);
      return el("td", { class: col.num ? "num" : null }, text);
    });
    const tr = el("tr", { tabindex: "0", "data-status": r.status, "aria-selected": r === state.selected ? "true" : "false" }, ...cells);
    tr._row = r;
    tr.addEventListener("click", () => openDetail(r));
    tr.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openDetail(r); }
    });
    return tr;
  }

  function renderTable() {
    const rows = visibleRows();
    const tbody = document.querySelector("#series-table tbody");
    tbody.replaceChildren(...rows.map(rowElement));
    if (!rows.length) {
      tbody.append(el("tr", { class: "empty" }, el("td", { colspan: String(COLUMNS.length) }, "No series match these filters.")));
    }
    $("count").textContent = `${rows.length} of ${state.rows.length} series`;
    updateHeader();
  }

  function buildFilters() {
    const form = $("filters");
    form.addEventListener("submit", (e) => e.preventDefault());
    const count = $("count");
    for (const { key, label } of FILTERS) {
      const values = [...new Set(state.rows.map((r) => r[key]))];
      values.sort(key === "status"
        ? (a, b) => STATUS_ORDER.indexOf(a) - STATUS_ORDER.indexOf(b)
        : (a, b) => String(a).localeCompare(String(b)));
      const select = el("select", { id: "filter-" + key, name: key });
      select.append(new Option("all", ""));
      for (const v of values) select.append(new Option(v, v));  // Option(text, value): text, not markup
      select.value = state.filters[key] || "";
      select.addEventListener("change", () => {
        state.filters[key] = select.value;
        renderTable();
        if (key === "metric" && state.data) renderOverview($("overview-device").value);
      });
      form.insertBefore(el("label", null, label + " ", select), count);
    }
    const reset = el("button", { type: "button", id: "filter-reset" }, "Reset");
    reset.addEventListener("click", () => {
      state.filters = {};
      for (const s of form.querySelectorAll("select")) s.value = "";
      renderTable();
    });
    form.insertBefore(reset, count);
  }

  // -- the chart of one series ------------------------------------------

  function chartData(r) {
    const p = points(r);
    const byDay = new Map();
    p.days.forEach((d, i) => byDay.set(d, { i, value: p.values[i], run: p.run[i], env: p.env[i] }));
    const fails = new Map();
    for (const [day, run, kind, message] of r.failures) {
      if (!fails.has(day)) fails.set(day, []);
      fails.get(day).push({ day, run, kind, message });
    }
    const days = [...new Set([...p.days, ...fails.keys()])].sort((a, b) => a - b);
    const xs = days.map((d) => d * DAY);
    const values = days.map((d) => (byDay.has(d) ? byDay.get(d).value : null));
    const before = days.map(() => null), after = days.map(() => null);
    const c = r.change;
    if (c) {
      // The level before is drawn over the points it was judged on (from_day).
      const from = c.from_day;
      days.forEach((d, i) => {
        if (d >= from && d < c.day) before[i] = c.before;
        if (d >= c.day) after[i] = c.after;
      });
      // Join the two steps at the change so the level line reads as one step.
      const at = days.indexOf(c.day);
      if (at > 0) before[at] = c.before;
    }
    return { days, data: [xs, values, before, after], byDay, fails };
  }

  const PROTOCOL_1 = "single-process v1";  // records from before run.protocol (bench.analyse.series)

  function drawMarks(r, cd, small) {
    return (u) => {
      const ctx = u.ctx, dpr = devicePixelRatio || 1;
      const { left, top, width, height } = u.bbox;
      ctx.save();
      ctx.font = `${11 * dpr}px system-ui, sans-serif`;
      ctx.textBaseline = "top";
      let lastLabel = -Infinity;
      for (const [day, list] of cd.fails) {
        const x = Math.round(u.valToPos(day * DAY, "x", true));
        if (x < left || x > left + width) continue;
        ctx.strokeStyle = small ? "rgba(185, 28, 28, 0.25)" : "rgba(185, 28, 28, 0.45)";
        ctx.lineWidth = dpr;
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
        ctx.fillStyle = "#b91c1c";
        ctx.beginPath(); ctx.moveTo(x - 4 * dpr, top); ctx.lineTo(x + 4 * dpr, top); ctx.lineTo(x, top + 6 * dpr); ctx.fill();
        // Kinds are labelled where there is room; the tooltip has every one.
        if (!small && x - lastLabel > 60 * dpr) {
          ctx.fillText(list.map((f) => f.kind).join(","), x + 3 * dpr, top + 8 * dpr);  // canvas text: never markup
          lastLabel = x;
        }
      }
      // A new measurement protocol moves the numbers by itself: mark its first
      // point (the status compares only nights of the newest protocol).
      const pts = points(r);
      for (let i = 1; i < pts.days.length; i++) {
        const a = envOf({ env: pts.env[i - 1] }), b = envOf({ env: pts.env[i] });
        const pa = (a && a.protocol) || PROTOCOL_1, pb = (b && b.protocol) || PROTOCOL_1;
        if (!a || !b || pa === pb) continue;
        const x = Math.round(u.valToPos(pts.days[i] * DAY, "x", true));
        if (x < left || x > left + width) continue;
        ctx.strokeStyle = "#64748b";
        ctx.setLineDash([2 * dpr, 3 * dpr]);
        ctx.lineWidth = dpr;
        ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
        ctx.setLineDash([]);
        if (!small) {
          ctx.fillStyle = "#475569";
          ctx.fillText(`protocol ${pb}`, x + 3 * dpr, top + 20 * dpr);  // canvas text: never markup
        }
      }
      // A ring around each night the host itself read slow (its reference
      // workload, data: series[].host): a dip there may be the machine.
      if (!small) {
        ctx.strokeStyle = HOST_RING;
        ctx.lineWidth = 1.5 * dpr;
        for (const i of slowHostNights(r)) {
          const x = u.valToPos(pts.days[i] * DAY, "x", true), y = u.valToPos(pts.values[i], "y", true);
          if (x < left || x > left + width || y < top || y > top + height) continue;
          ctx.beginPath(); ctx.arc(x, y, 6 * dpr, 0, 2 * Math.PI); ctx.stroke();
        }
      }
      const c = r.change;
      if (c && !small) {
        const x = Math.round(u.valToPos(c.day * DAY, "x", true));
        if (x >= left && x <= left + width) {
          ctx.strokeStyle = STATUS_COLOUR[r.status] || "#334155";
          ctx.setLineDash([5 * dpr, 4 * dpr]);
          ctx.lineWidth = 1.5 * dpr;
          ctx.beginPath(); ctx.moveTo(x, top); ctx.lineTo(x, top + height); ctx.stroke();
          ctx.setLineDash([]);
          ctx.fillStyle = STATUS_COLOUR[r.status] || "#334155";
          ctx.textBaseline = "bottom";
          const label = `change ${pct(c.relative)}`;
          const w = ctx.measureText(label).width;
          ctx.fillText(label, Math.min(x + 4 * dpr, left + width - w), top + height - 4 * dpr);
        }
      }
      ctx.restore();
    };
  }

  function pointLines(r, cd, day) {
    const lines = [isoDay(day)];
    const p = cd.byDay.get(day);
    if (p) {
      const run = runInfo(p.run);
      lines.push(`${short(p.value)} ${r.unit}  (${Number(p.value).toLocaleString("en-US")})`);
      lines.push(`keras-nightly ${run.keras || "unknown"}`);
      lines.push(`run ${run.id}${run.attempt > 1 ? ` attempt ${run.attempt}` : ""}`);
      const tenths = (r.host || [])[p.i];  // tenths of a percent
      const host = hostWords(tenths == null ? null : tenths / 1000);
      if (host) lines.push(`${host}, against the nights before`);
      lines.push(...envLines(r, p));
    }
    for (const f of cd.fails.get(day) || []) {
      const msg = f.message.length > 300 ? f.message.slice(0, 299) + "…" : f.message;  // the table below has it all
      lines.push(`FAILED (${f.kind}): ${msg}`);
      const run = runInfo(f.run);
      if (!p) lines.push(`keras-nightly ${run.keras || "unknown"}`);
    }
    return lines;
  }

  // That night's machine and software (data.envs, bench/analyse/envsummary.py),
  // then what changed since the previous point: the first thing to check after a drop.
  const ENV_LINES = [
    ["GPU", ["gpu", "sm_clock_mhz", "memory_clock_mhz", "power_limit_w", "power_draw_w", "temperature_c", "throttle", "gpu_processes"],
      { sm_clock_mhz: "SM %s MHz", memory_clock_mhz: "mem %s MHz", power_limit_w: "limit %s W", power_draw_w: "draw %s W",
        temperature_c: "%s °C", throttle: "throttle: %s", gpu_processes: "other processes: %s" }],
    ["driver", ["driver", "cuda", "cudnn"], { cuda: "CUDA %s", cudnn: "cuDNN %s" }],
    ["CPU", ["cpu", "governor", "cpu_mhz", "load", "steal_percent", "cpu_pressure", "threads", "malloc"],
      { cpu_mhz: "%s MHz", load: "load %s", steal_percent: "steal %s%", cpu_pressure: "pressure %s%", threads: "%s threads",
        malloc: "malloc %s" }],
    ["backend", ["backend"], {}],
    ["keras", ["floatx", "dtype_policy", "protocol"], { dtype_policy: "policy %s", protocol: "protocol %s" }],
  ];

  const HOST_RING = "#c026d3";  // style.css .k-host

  // The points whose host read at least host_held slower than the nights before.
  function slowHostNights(r) {
    if (state.hostHeld == null) return [];
    return (r.host || []).flatMap((t, i) => (t != null && t / 1000 >= state.hostHeld ? [i] : []));
  }

  // A night's host reading against the nights before (data: series[].host),
  // in bench/analyse/host.py describe()'s words, so the table's note and the tooltip agree.
  function hostWords(v) {
    if (v == null || state.hostHeld == null) return null;
    const pctText = (Math.abs(v) * 100).toFixed(1);
    if (Math.abs(v) < state.hostHeld) return `the host as before (reference workload ${v < 0 ? "-" : "+"}${pctText} %)`;
    return `the host ${pctText} % ${v > 0 ? "slower" : "faster"} (reference workload)`;
  }

  function envOf(p) {
    return p && p.env != null ? state.envs[p.env] || null : null;
  }

  function envLines(r, p) {
    const env = envOf(p);
    if (!env) return [];
    const lines = [];
    for (const [label, fields, fmt] of ENV_LINES) {
      const parts = fields.filter((f) => env[f] != null).map((f) => (fmt[f] || "%s").replace("%s", env[f]));
      if (parts.length) lines.push(`${label}: ${parts.join(", ")}`);
    }
    const prev = p.i > 0 ? envOf({ env: points(r).env[p.i - 1] }) : null;
    if (prev) {
      const changed = envChanges(prev, env);
      lines.push(changed.length ? `changed since the previous point: ${changed.join("; ")}` : "nothing changed since the previous point");
    }
    return lines;
  }

  function envChanges(before, after) {
    return state.envChanges.filter((f) => before[f] !== after[f])
      .map((f) => `${f} ${before[f] == null ? "—" : before[f]} → ${after[f] == null ? "—" : after[f]}`);
  }

  function showTooltip(u, r, cd) {
    const tip = $("tooltip");
    const idx = u.cursor.idx;
    if (idx == null || u.cursor.left < 0) { tip.hidden = true; return; }
    tip.replaceChildren(...pointLines(r, cd, cd.days[idx]).map((t, i) => el("div", { class: i ? null : "tip-day" }, t)));
    tip.hidden = false;
    const box = u.over.getBoundingClientRect(), host = tip.parentElement.getBoundingClientRect();
    let x = box.left - host.left + u.cursor.left + 12;
    const y = box.top - host.top + Math.max(0, u.cursor.top - 10);
    if (x + tip.offsetWidth > host.width) x = Math.max(0, x - tip.offsetWidth - 24);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
  }

  function pinPoint(r, cd, day) {
    const box = $("detail-point");
    const p = cd.byDay.get(day);
    const parts = [el("strong", null, "Pinned: "), pointLines(r, cd, day).join(" · ")];
    const run = p ? runInfo(p.run) : cd.fails.has(day) ? runInfo(cd.fails.get(day)[0].run) : null;
    const a = run && runLink(run.url, "open the CI run");
    if (a) parts.push(" · ", a);
    box.replaceChildren(...parts);
  }

  // Tick labels share one suffix and just enough decimals for the tick step:
  // 250k 275k 300k, or 1.05k 1.10k, never 1k 1k 1.1k.
  function axisValues(u, ticks, axisIdx, space, incr) {
    const m = Math.max(...ticks.map((v) => Math.abs(v)));
    const [div, suffix] = m >= 1e9 ? [1e9, "G"] : m >= 1e6 ? [1e6, "M"] : m >= 1e3 ? [1e3, "k"] : [1, ""];
    const decimals = Math.max(0, Math.min(4, Math.ceil(-Math.log10(incr / div) - 1e-9)));
    return ticks.map((v) => (v / div).toFixed(decimals) + suffix);
  }

  function chartOptions(r, cd, width, height, small) {
    const colour = STATUS_COLOUR[r.status] || "#0f766e";
    // A series with one point: draw the point (a line needs two) on a day either side.
    const single = cd.byDay.size === 1;
    return {
      width, height,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),  // points are UTC days
      legend: { show: false },
      cursor: small ? { show: false } : { drag: { x: true, y: false }, points: { size: 7 } },
      scales: { x: { time: true, range: (u, min, max) => (min === max ? [min - DAY, max + DAY] : [min, max]) } },
      axes: [
        { stroke: "#475569", grid: { stroke: "#e2e8f0" }, ticks: { stroke: "#cbd5e1" }, size: small ? 30 : 50,
          incrs: DAY_INCRS },
        { stroke: "#475569", grid: { stroke: "#e2e8f0" }, ticks: { stroke: "#cbd5e1" },
          values: axisValues, size: small ? 48 : 56, label: small ? null : r.unit, labelSize: 18 },
      ],
      series: [
        {},
        { label: "value", stroke: "#2563eb", width: small ? 1 : 1.5, spanGaps: true,
          points: small && !single ? { show: false } : { show: true, size: single ? 7 : 4, fill: "#2563eb" } },
        { label: "level before", stroke: "#64748b", width: 2, dash: [6, 4], points: { show: false } },
        { label: "level after", stroke: colour, width: 2.5, points: { show: false } },
      ],
      hooks: {
        draw: [drawMarks(r, cd, small)],
        setCursor: small ? [] : [(u) => showTooltip(u, r, cd)],
      },
    };
  }

  // Show the newest `nights` of a chart (0: all); double-click zooms back out to all.
  function showRange(u, nights) {
    const xs = u.data[0];
    if (!xs.length) return;
    const max = xs[xs.length - 1];
    const min = nights > 0 ? Math.max(xs[0], max - (nights - 1) * DAY) : xs[0];
    u.setScale("x", { min, max: min === max ? max + DAY : max });
  }

  function summary(r) {
    const n = r.nights == null ? r.days.length : r.nights;
    const bits = [`Latest ${r.latest_text} ${r.unit}`, `Δ prev ${r.delta_text}`, `${n} nightly point${n === 1 ? "" : "s"}`];
    if (n) bits.push(`since ${isoDay(points(r).days[0])}`);
    bits.push(r.better === "smaller" ? "smaller is better" : "bigger is better");
    if (r.change) {
      bits.push(`change ${pct(r.change.relative)} from ${isoDay(r.change.day)}: level ${short(r.change.before)} → ${short(r.change.after)}`);
      if (r.window) bits.push(windowText(r.window));
      if (r.origin) bits.push(`whose change: ${r.origin.text}`);  // bench/analyse/triangulate.py
    } else {
      bits.push("no recent change detected");
    }
    if (r.mark) bits.push(`triage: ${r.mark.mark} #${r.mark.issue} (change of ${r.mark.night})${r.mark.link ? " " + r.mark.link : ""}`);  // docs/triage.md
    const fails = r.failures_total == null ? r.failures.length : r.failures_total;
    if (fails) bits.push(`${fails} failure${fails === 1 ? "" : "s"}`);
    if (r.skipped) bits.push(`${r.skipped} skipped`);
    return bits.join(" · ");
  }

  // The change window (bench/analyse/window.py): the last nightly before the
  // change and the first at the new level, and what else changed there.
  function windowText(w) {
    const side = (n) => `${n.keras_version || "?"} (${n.day})`;
    const also = (w.env_changes || []).map((c) => `${c.name} ${c.before || "—"} → ${c.after || "—"}`);
    return `Keras ${side(w.before)} → ${side(w.after)}` + (also.length ? `; also ${also.join(", ")}` : "");
  }

  function failureTable(r) {
    if (!r.failures.length) return null;
    const limit = 50;
    const list = r.failures.slice(-limit).reverse();  // newest first
    const body = list.map(([day, run, kind, message]) => {
      const info = runInfo(run);
      return el("tr", null,
        el("td", null, isoDay(day)),
        el("td", null, el("span", { class: "kind" }, kind)),
        el("td", null, info.keras || "—"),
        el("td", { class: "msg" }, message),
        el("td", null, runLink(info.url, "run") || "—"));
    });
    const more = r.failures.length > limit ? el("p", { class: "hint" }, `${r.failures.length - limit} older failures not shown.`) : null;
    return el("div", null,
      el("h3", null, "Failures"),
      el("table", { class: "failures" },
        el("thead", null, el("tr", null, ...["DATE", "KIND", "KERAS", "MESSAGE", "RUN"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", null, ...body)),
      more);
  }

  function latestUrl(r) {
    const p = points(r);
    const last = [];
    if (p.run.length) last.push(p.run[p.run.length - 1]);
    if (r.failures.length) last.push(r.failures[r.failures.length - 1][1]);
    const newest = Math.max(...last);  // run indices are in time order (a loaded history's among themselves)
    return last.length ? runInfo(newest).url : null;
  }

  // A series' whole history (data/series/<name>.js, a script so that it loads
  // from disk too), fetched when its chart opens; the overview holds its
  // newest nights.
  const scripts = new Map();
  function loadScript(src) {
    if (!scripts.has(src)) {
      scripts.set(src, new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = src;
        s.onload = resolve;
        s.onerror = () => reject(new Error(`${src} did not load`));
        document.head.appendChild(s);
      }));
    }
    return scripts.get(src);
  }

  // Every run and environment the histories index (data/tables.js), joined
  // once after the overview's own: a history's index i is the page's i + offset.
  let tables = null;
  function loadTables() {
    if (!tables) {
      tables = loadScript("data/tables.js").then(() => {
        const t = window.BENCH_TABLES || { runs: [], envs: [] };
        const offset = { runs: state.runs.length, envs: state.envs.length };
        state.runs.push(...t.runs);
        state.envs.push(...t.envs);
        return offset;
      });
    }
    return tables;
  }

  function loadHistory(r) {
    if (!r.history || r._full) return Promise.resolve();
    return Promise.all([loadTables(), loadScript(r.history)]).then(([offset]) => {
      const h = (window.BENCH_SERIES || {})[r.history];
      if (!h || r._full) return;
      const n = h.days.length, days = new Array(n), run = new Array(n), env = new Array(n);
      let d = 0, k = 0, e = 0;
      for (let i = 0; i < n; i++) {
        d += h.days[i]; k += h.run[i]; e += (h.env || [])[i] || 0;
        days[i] = d; run[i] = k + offset.runs; env[i] = h.env && h.env.length ? e + offset.envs : null;
      }
      Object.assign(r, { days: h.days, values: h.values, host: h.host, _days: days, _run: run, _env: env, _full: true,
                         failures: h.failures.map(([day, i, kind, msg]) => [day, i + offset.runs, kind, msg]) });
    });
  }

  function openDetail(r, opts = {}) {
    if (r.history && !r._full) {
      state.selected = r;
      loadHistory(r).then(() => { if (state.selected === r) openDetail(r, opts); }, (e) => {
        const err = $("error");
        err.textContent = `Could not load the history of ${seriesName(r)} (${e.message}).`;
        err.hidden = false;
      });
      return;
    }
    const { scroll = true } = opts;
    state.selected = r;
    for (const tr of document.querySelectorAll("#series-table tbody tr")) {
      tr.setAttribute("aria-selected", tr._row === r ? "true" : "false");
    }
    const section = $("detail");
    section.hidden = false;
    $("detail-title").textContent = seriesName(r);
    const badge = $("detail-status");
    badge.textContent = r.status;
    badge.dataset.status = r.status;
    section.style.setProperty("--after", STATUS_COLOUR[r.status] || "#0f766e");  // the legend's "level after" swatch
    section.dataset.change = r.change ? "yes" : "no";  // the level keys show only with a change
    section.dataset.host = slowHostNights(r).length ? "yes" : "no";  // the host key only where a ring is drawn
    $("detail-summary").textContent = summary(r);
    $("detail-point").replaceChildren();
    const links = [];
    const run = runLink(latestUrl(r), "newest CI run");
    if (run) links.push(run);
    if (r.plot) links.push(link(r.plot, "PNG plot"));
    const commits = r.window ? link(r.window.commits_url, "Keras commits in the change window") : null;
    if (commits) links.push(commits);
    const joined = [];
    links.forEach((a, i) => { if (i) joined.push(" · "); joined.push(a); });
    $("detail-links").replaceChildren(...joined);
    $("detail-failures").replaceChildren(...[failureTable(r)].filter(Boolean));

    if (state.chart) { state.chart.destroy(); state.chart = null; }
    const host = $("detail-chart");
    host.replaceChildren();
    $("tooltip").hidden = true;
    const cd = chartData(r);
    if (!cd.days.length || !r.days.length) {
      host.append(el("p", { class: "nochart" }, "No points yet: every result so far failed or was skipped."));
    } else {
      state.chart = new uPlot(chartOptions(r, cd, host.clientWidth || 800, 340, false), cd.data, host);
      showRange(state.chart, Number($("detail-range").value));
      state.chart.over.addEventListener("mouseleave", () => { $("tooltip").hidden = true; });
      state.chart.over.addEventListener("click", () => {
        const u = state.chart;
        if (u && u.cursor.idx != null && !u.select.width) pinPoint(r, cd, cd.days[u.cursor.idx]);
      });
    }
    history.replaceState(null, "", "#" + new URLSearchParams(KEY.map((k) => [k, r[k]])).toString());
    if (scroll) section.scrollIntoView({ block: "nearest" });
  }

  function closeDetail() {
    if (state.chart) { state.chart.destroy(); state.chart = null; }
    state.selected = null;
    $("detail").hidden = true;
    for (const tr of document.querySelectorAll("#series-table tbody tr")) tr.setAttribute("aria-selected", "false");
    history.replaceState(null, "", location.pathname + location.search);
  }

  // -- small multiples: every series of one device ----------------------

  function renderOverview(device) {
    for (const u of state.multiples) u.destroy();
    state.multiples = [];
    const grid = $("multiples");
    grid.replaceChildren();
    const metric = state.filters.metric;
    const rows = state.rows.filter((r) => r.device === device && (!metric || r.metric === metric)).sort(compare);
    for (const r of rows) {
      const chart = el("div", { class: "mini-chart" });
      const card = el("button", { type: "button", class: "card", "data-status": r.status, title: "open the chart" },
        el("span", { class: "card-head" },
          el("span", { class: "card-title" }, [r.backend, r.model, r.mode].join(" · ")),
          el("span", { class: "badge", "data-status": r.status }, r.status)),
        el("span", { class: "card-sub" }, `${r.latest_text} ${r.unit} · ${r.delta_text}`),
        chart);
      card.addEventListener("click", () => openDetail(r));
      grid.append(card);
      const cd = chartData(r);
      if (r.days.length) {
        const u = new uPlot(chartOptions(r, cd, Math.max(200, chart.clientWidth || 260), 150, true), cd.data, chart);
        showRange(u, Number($("overview-range").value));
        state.multiples.push(u);
      } else {
        chart.append(el("p", { class: "nochart" }, "no points yet"));
      }
    }
  }

  function buildOverview() {
    const select = $("overview-device");
    const devices = [...new Set(state.rows.map((r) => r.device))].sort();
    for (const d of devices) select.append(new Option(d, d));
    select.addEventListener("change", () => renderOverview(select.value));
    $("overview-range").addEventListener("change", () => {
      for (const u of state.multiples) showRange(u, Number($("overview-range").value));
    });
    if (devices.length) renderOverview(devices[0]);
  }

  // -- backends side by side ---------------------------------------------

  const seriesLabel = (r) => `${r.model} · ${r.mode}`;

  function buildBackends() {
    const device = $("backends-device"), which = $("backends-series");
    const devices = [...new Set(state.rows.map((r) => r.device))].sort();
    for (const d of devices) device.append(new Option(d, d));
    const fillSeries = () => {
      const keep = which.value;
      const labels = [...new Set(state.rows.filter((r) => r.device === device.value).map(seriesLabel))].sort();
      which.replaceChildren(...labels.map((l) => new Option(l, l)));
      if (labels.includes(keep)) which.value = keep;
      renderBackends();
    };
    device.addEventListener("change", fillSeries);
    which.addEventListener("change", renderBackends);
    fillSeries();
  }

  function renderBackends() {
    const device = $("backends-device").value, label = $("backends-series").value;
    const rows = state.rows.filter((r) => r.device === device && seriesLabel(r) === label && r.latest != null);
    const sign = rows.length && rows[0].better === "smaller" ? 1 : -1;
    rows.sort((a, b) => sign * (a.latest - b.latest) || a.backend.localeCompare(b.backend));
    const top = Math.max(...rows.map((r) => Math.max(r.latest, r.iqr ? r.iqr[1] : 0)), 0) || 1;
    const pctOf = (v) => `${(100 * v / top).toFixed(2)}%`;
    $("backends-table").querySelector("tbody").replaceChildren(...rows.map((r) => {
      const bar = el("div", { class: "bar-box" }, el("span", { class: "bar", "data-status": r.status }));
      bar.firstChild.style.width = pctOf(r.latest);
      if (r.iqr) {
        const w = el("span", { class: "whisker" });
        w.style.left = pctOf(r.iqr[0]);
        w.style.width = pctOf(r.iqr[1] - r.iqr[0]);
        bar.append(w);
      }
      return el("tr", null,
        el("td", { class: "label" }, r.backend),
        el("td", { class: "num" }, `${r.latest_text} ${r.unit}`),
        el("td", { class: "num" }, r.spread == null ? "—" : `${(100 * r.spread).toFixed(1)}%`),
        el("td", { class: "bar-cell" }, bar),
        el("td", null, el("span", { class: "badge", "data-status": r.status }, r.status)));
    }));
  }

  // -- start -------------------------------------------------------------

  function metaLine(data) {
    const bits = [`${data.series.length} series`, `${state.runs.length} runs`];
    if (data.newest_run) bits.push(`newest run ${data.newest_run.replace("T", " ").replace("Z", " UTC")}`);
    bits.push(`built ${data.generated_at.replace("T", " ").replace("Z", " UTC")}`);
    return bits.join(" · ");
  }

  function openFromHash() {
    if (!location.hash) return;
    const q = new URLSearchParams(location.hash.slice(1));
    const r = state.rows.find((row) => KEY.every((k) => row[k] === q.get(k)));
    if (r) openDetail(r, { scroll: false });
  }

  let resizeTimer = null;
  function onResize() {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      if (state.chart) state.chart.setSize({ width: $("detail-chart").clientWidth, height: 340 });
      for (const u of state.multiples) {
        u.setSize({ width: Math.max(200, u.root.parentElement.clientWidth), height: 150 });
      }
    }, 150);
  }

  // Over http: data/index.json (the <link rel=preload> download). Opened from
  // disk (file://), fetch() is refused: the same data as a script, data/index.js.
  async function loadData() {
    try {
      const res = await fetch("data/index.json");
      if (!res.ok) throw new Error(`data/index.json: HTTP ${res.status}`);
      return await res.json();
    } catch (e) {
      if (location.protocol !== "file:") throw e;
      await new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = "data/index.js";
        s.onload = resolve;
        s.onerror = () => reject(new Error("data/index.js did not load"));
        document.head.appendChild(s);
      });
      if (!window.BENCH_DATA) throw new Error("data/index.js holds no data");
      return window.BENCH_DATA;
    }
  }

  async function start() {
    let data;
    try {
      data = await loadData();
    } catch (e) {
      const err = $("error");
      err.textContent = `Could not load the data (${e.message}). Build the site with ` +
        "`bench site --data DIR --out SITE`, then open SITE/index.html or run `bench serve SITE`.";
      err.hidden = false;
      $("meta").textContent = "";
      document.documentElement.dataset.ready = "error";
      return;
    }
    if (data.format !== 1 && data.format !== 2) {
      const err = $("error");
      err.textContent = `data/index.json is format ${data.format}; this page reads formats 1 and 2. Rebuild the site.`;
      err.hidden = false;
    }
    state.data = data;
    STATUS_COLOUR = data.palette || {};
    state.runs = data.runs || [];
    state.rows = data.series || [];
    state.envs = data.envs || [];
    state.envChanges = data.env_changes || [];
    state.hostHeld = data.host_held == null ? null : data.host_held;  // an index from before 2026-12-06 has none
    for (const r of state.rows) r.metric = r.metric || "throughput";  // sites before issue 13
    if (state.rows.some((r) => r.metric === "throughput") && state.rows.some((r) => r.metric !== "throughput")) {
      state.filters.metric = "throughput";
    }
    $("meta").textContent = metaLine(data);
    buildHeader();
    buildFilters();
    renderTable();
    $("detail-close").addEventListener("click", closeDetail);
    $("detail-range").addEventListener("change", () => {
      if (state.chart) showRange(state.chart, Number($("detail-range").value));
    });
    document.documentElement.dataset.ready = "table";
    window.__benchTableMs = performance.now();
    // Charts after the table has painted: the table is what people come for.
    requestAnimationFrame(() => setTimeout(() => {
      buildOverview();
      buildBackends();
      openFromHash();
      window.addEventListener("hashchange", openFromHash);  // a pasted link on an open page
      window.addEventListener("resize", onResize);
      document.documentElement.dataset.ready = "all";
      window.__benchAllMs = performance.now();
    }, 0));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
