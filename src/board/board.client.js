// The plant board's script: runs in the browser, served by the Worker as a text module
// (src/board/board-page.ts). It uses only the public API, with the key the person enters,
// kept in this tab's session storage and sent as the x-api-key header, never in a URL.

(() => {
  const KEY_STORAGE = "pm-board-key";
  const HOUR = 3_600_000;
  const $ = (id) => document.getElementById(id);
  const state = {
    key: sessionStorage.getItem(KEY_STORAGE) || "",
    machines: [],
    realtime: new Map(),
    metrics: new Map(),
    stops: new Map(),
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    selected: null,
    timer: null,
    slowTimer: null,
    events: null,
    lastEventId: null,
    pending: new Set(),
    flushTimer: null,
  };

  /** The event kinds of the live streams, as the Worker lists them (src/events/names.ts). */
  const EVENT_KINDS = JSON.parse(document.body.dataset.eventKinds || "[]");

  /** A request to the public API with the key; JSON in and out; throws with the status. */
  async function api(path, body) {
    const init = { headers: { "x-api-key": state.key } };
    if (body !== undefined) {
      init.method = "POST";
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    if (res.status === 409) return { status: 409, body: null };
    if (!res.ok) {
      const error = new Error(`${path}: ${res.status}`);
      error.status = res.status;
      throw error;
    }
    return { status: res.status, body: await res.json() };
  }

  const percent = (x) => (typeof x === "number" ? `${(x * 100).toFixed(1)} %` : "–");
  const number = (x, digits = 0) =>
    typeof x === "number"
      ? x.toLocaleString(undefined, { maximumFractionDigits: digits, minimumFractionDigits: 0 })
      : "–";
  const clock = (iso) =>
    new Intl.DateTimeFormat(undefined, {
      timeZone: state.timeZone,
      hour: "2-digit",
      minute: "2-digit",
    }).format(new Date(iso));
  const dayClock = (ms) =>
    new Intl.DateTimeFormat(undefined, {
      timeZone: state.timeZone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
    }).format(new Date(ms));

  /** An element with attributes and children (strings become text nodes: never HTML). */
  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== undefined && value !== null) node.setAttribute(name, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function setStatus(text) {
    $("status").textContent = text;
  }

  /** Production of the running shift against what the nominal speeds allow so far. */
  function productionAgainstNominal(rt) {
    const now = Date.parse(rt.at);
    let target = 0;
    for (const s of rt.production.segments) {
      const start = Date.parse(s.start);
      const end = Math.min(s.end === null ? now : Date.parse(s.end), now);
      if (end > start) target += (s.nominalSpeed * (end - start)) / 60_000;
    }
    return { count: rt.production.count, target };
  }

  function machineCard(machine) {
    const rt = state.realtime.get(machine.id);
    const selected = state.selected && state.selected.id === machine.id;
    const card = el("button", {
      type: "button",
      class: `card${selected ? " selected" : ""}`,
      "data-machine-id": machine.id,
      "aria-pressed": selected ? "true" : "false",
    });
    card.append(el("h2", {}, machine.name));
    if (!rt) {
      card.append(el("p", { class: "idle" }, "No shift running"));
      card.addEventListener("click", () => openDetail(machine));
      return card;
    }
    const row = state.metrics.get(`${machine.id}:${rt.shift.id}`);
    const m = row ? row.productionMetrics : null;
    const current = rt.current;
    const stop = state.stops.get(machine.id);
    const production = productionAgainstNominal(rt);
    const unit = current?.sku.unit ? current.sku.unit : "units";
    card.append(
      el(
        "p",
        { class: "shift" },
        `${rt.shift.name}, ${clock(rt.shift.start)}–${clock(rt.shift.end)}`,
      ),
      el(
        "dl",
        {},
        el("dt", {}, "SKU"),
        el(
          "dd",
          { "data-field": "sku" },
          current ? `${current.sku.sku}${current.sku.name ? ` · ${current.sku.name}` : ""}` : "–",
        ),
        el("dt", {}, "Work order"),
        el(
          "dd",
          { "data-field": "work-order" },
          current?.simpleWorkOrder ? current.simpleWorkOrder.name : "–",
        ),
        el("dt", {}, "Operators"),
        el(
          "dd",
          { "data-field": "operators" },
          rt.operators.length
            ? rt.operators
                .map((o) => [o.firstName, o.lastName].filter(Boolean).join(" "))
                .join(", ")
            : "–",
        ),
        el("dt", {}, "Production"),
        el(
          "dd",
          { "data-field": "production" },
          `${number(production.count)} ${unit} of ${number(production.target)} at nominal speed`,
        ),
        el("dt", {}, "Stop"),
        el(
          "dd",
          { "data-field": "stop", class: stop ? "stopped" : "" },
          stop
            ? `Stopped since ${clock(stop.stop.startTime)}${
                stop.classification.generalCause.name
                  ? ` (${stop.classification.generalCause.name})`
                  : " (unclassified)"
              }`
            : "Running",
        ),
      ),
      el(
        "div",
        { class: "oee", "data-field": "oee" },
        el("span", { class: "big" }, `OEE ${percent(m?.oee)}`),
        el(
          "span",
          {},
          `Availability ${percent(m?.availability)} · Performance ${percent(
            m?.effectiveness,
          )} · Quality ${percent(m?.quality)}`,
        ),
      ),
    );
    card.addEventListener("click", () => openDetail(machine));
    return card;
  }

  function render() {
    const grid = $("machines");
    grid.replaceChildren(...state.machines.map(machineCard));
    grid.setAttribute("aria-busy", "false");
  }

  async function inBatches(items, size, work) {
    const out = [];
    for (let i = 0; i < items.length; i += size) {
      out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
    }
    return out;
  }

  async function refreshRealtime() {
    await inBatches(state.machines, 6, async (machine) => {
      const { status, body } = await api(`/v1/realtime/${machine.id}`);
      if (status === 409) state.realtime.delete(machine.id);
      else state.realtime.set(machine.id, body);
    });
  }

  /** The running shifts' metrics rows and the open stops of every machine. */
  async function refreshReports() {
    const ids = state.machines.map((m) => m.id);
    if (ids.length === 0) return;
    const after = new Date(Date.now() - 2 * 24 * HOUR).toISOString();
    const metrics = new Map();
    for (let page = 1; page <= 10; page += 1) {
      const { body } = await api("/v1/reports/metrics", {
        machines: { include: ids },
        startDate: { after },
        page,
        limit: 100,
      });
      for (const row of body.metrics) metrics.set(`${row.machine.id}:${row.shift.id}`, row);
      if (page >= body.totalPages) break;
    }
    state.metrics = metrics;
    const stops = new Map();
    for (let page = 1; page <= 10; page += 1) {
      const { body } = await api("/v1/reports/stops", {
        machines: { include: ids },
        startDate: { after },
        page,
        limit: 100,
      });
      for (const row of body.stops) if (row.stop.endTime === null) stops.set(row.machine.id, row);
      if (page >= body.totalPages) break;
    }
    state.stops = stops;
  }

  async function refresh(withReports) {
    try {
      await refreshRealtime();
      if (withReports) await refreshReports();
      render();
      setStatus(`Updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      setStatus(`Could not refresh: ${error.message}`);
      if (error.status === 401) forgetKey();
    }
  }

  /** A line chart of `points` ([ms, value]) as an SVG element, with its range labelled. */
  function lineChart(points, label, unit) {
    const width = 600;
    const height = 160;
    const pad = 28;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("class", "chart");
    if (points.length === 0) {
      svg.setAttribute("aria-label", `${label}: no samples in the last 24 hours`);
      const text = document.createElementNS(svg.namespaceURI, "text");
      text.setAttribute("x", "20");
      text.setAttribute("y", "80");
      text.textContent = "No samples in the last 24 hours";
      svg.append(text);
      return svg;
    }
    const t0 = points[0][0];
    const t1 = points[points.length - 1][0];
    const values = points.map((p) => p[1]);
    const lo = Math.min(0, ...values);
    const hi = Math.max(...values, lo + 1);
    const x = (t) => pad + ((t - t0) / Math.max(t1 - t0, 1)) * (width - 2 * pad);
    const y = (v) => height - pad - ((v - lo) / (hi - lo)) * (height - 2 * pad);
    const line = document.createElementNS(svg.namespaceURI, "polyline");
    line.setAttribute(
      "points",
      points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "),
    );
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "currentColor");
    line.setAttribute("stroke-width", "2");
    svg.append(line);
    const labels = [
      [pad, 14, `${number(hi, 2)} ${unit}`],
      [pad, height - pad + 14, `${number(lo, 2)} ${unit}`],
      [pad, height - 2, dayClock(t0)],
      [width - pad - 90, height - 2, dayClock(t1)],
    ];
    for (const [tx, ty, content] of labels) {
      const text = document.createElementNS(svg.namespaceURI, "text");
      text.setAttribute("x", String(tx));
      text.setAttribute("y", String(ty));
      text.setAttribute("font-size", "12");
      text.textContent = content;
      svg.append(text);
    }
    svg.setAttribute(
      "aria-label",
      `${label}: ${points.length} points from ${dayClock(t0)} to ${dayClock(t1)}, between ${number(lo, 2)} and ${number(hi, 2)} ${unit}`,
    );
    return svg;
  }

  /** OEE per shift as bars (one per shift instance), with each value in its title. */
  function oeeChart(rows) {
    const width = 600;
    const height = 160;
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("role", "img");
    svg.setAttribute("class", "chart");
    svg.setAttribute("aria-label", `OEE of ${rows.length} shifts in the last 7 days`);
    const left = 44;
    const step = (width - left - 10) / Math.max(rows.length, 1);
    for (const [text, y] of [
      ["100 %", 16],
      ["0 %", height - 20],
    ]) {
      const label = document.createElementNS(svg.namespaceURI, "text");
      label.setAttribute("x", "0");
      label.setAttribute("y", String(y));
      label.setAttribute("font-size", "12");
      label.textContent = text;
      svg.append(label);
    }
    rows.forEach((row, i) => {
      const oee = row.productionMetrics.oee || 0;
      const bar = document.createElementNS(svg.namespaceURI, "rect");
      const h = Math.max(1, oee * (height - 30));
      if (step >= 34) {
        const value = document.createElementNS(svg.namespaceURI, "text");
        value.setAttribute("x", String(left + i * step));
        value.setAttribute("y", String(height - 24 - h));
        value.setAttribute("font-size", "11");
        value.textContent = percent(oee);
        svg.append(value);
      }
      bar.setAttribute("x", String(left + i * step));
      bar.setAttribute("y", String(height - 20 - h));
      bar.setAttribute("width", String(Math.max(step - 2, 1)));
      bar.setAttribute("height", String(h));
      bar.setAttribute("fill", "currentColor");
      const title = document.createElementNS(svg.namespaceURI, "title");
      title.textContent = `${row.shift.name} ${dayClock(Date.parse(row.shift.startTime))}: OEE ${percent(oee)}`;
      bar.append(title);
      svg.append(bar);
    });
    return svg;
  }

  async function openDetail(machine) {
    state.selected = machine;
    render();
    const detail = $("detail");
    detail.hidden = false;
    $("detail-title").textContent = machine.name;
    const charts = $("detail-charts");
    charts.replaceChildren(el("p", {}, "Loading…"));
    const now = Date.now();
    const figures = [];
    if (machine.uuid) {
      const { body } = await api(`/v1/machines/${machine.uuid}/signals`);
      for (const [name, fn, unit] of [
        ["power", "avg", "kW"],
        ["count", "sum", "pieces"],
      ]) {
        const signal = body.signals.find((s) => s.name === name);
        if (!signal) continue;
        const query = new URLSearchParams({
          start_time: new Date(now - 24 * HOUR).toISOString(),
          end_time: new Date(now).toISOString(),
          agg_unit: "m",
          agg_period: "15",
          agg_function: fn,
        });
        const data = await api(`/v1/machines/${machine.uuid}/signals/${signal.public_id}?${query}`);
        const points = data.body.data.map((p) => [Date.parse(p.timestamp), p.value]);
        const label = `${signal.display_name || name}, ${fn} per 15 min`;
        figures.push(
          el(
            "figure",
            { "data-chart": name },
            el("figcaption", {}, `${label} (${unit}), last 24 hours`),
            lineChart(points, label, unit),
          ),
        );
      }
    }
    const { body } = await api("/v1/reports/metrics", {
      machines: { include: [machine.id] },
      startDate: { after: new Date(now - 7 * 24 * HOUR).toISOString() },
      limit: 100,
    });
    const rows = [...body.metrics].sort(
      (a, b) => Date.parse(a.shift.startTime) - Date.parse(b.shift.startTime),
    );
    figures.push(
      el(
        "figure",
        { "data-chart": "oee" },
        el("figcaption", {}, "OEE per shift, last 7 days"),
        oeeChart(rows),
      ),
    );
    if (state.selected === machine) charts.replaceChildren(...figures);
    $("close-detail").focus();
  }

  function closeDetail() {
    const machine = state.selected;
    state.selected = null;
    $("detail").hidden = true;
    render();
    const card = machine && document.querySelector(`[data-machine-id="${machine.id}"]`);
    if (card) card.focus();
  }

  function forgetKey() {
    sessionStorage.removeItem(KEY_STORAGE);
    state.key = "";
    clearInterval(state.timer);
    clearInterval(state.slowTimer);
    if (state.events) state.events.close();
    state.events = null;
    $("key-form").hidden = false;
    $("change-key").hidden = true;
    $("machines").replaceChildren();
    $("detail").hidden = true;
    $("key").focus();
  }

  /** Refreshes the machines that had events, at most every half second. */
  function machineChanged(machineId) {
    if (machineId === null || machineId === undefined) {
      for (const m of state.machines) state.pending.add(m.id);
    } else {
      state.pending.add(machineId);
    }
    if (state.flushTimer) return;
    state.flushTimer = setTimeout(async () => {
      state.flushTimer = null;
      const ids = new Set(state.pending);
      state.pending.clear();
      try {
        await inBatches(
          state.machines.filter((m) => ids.has(m.id)),
          6,
          async (machine) => {
            const { status, body } = await api(`/v1/realtime/${machine.id}`);
            if (status === 409) state.realtime.delete(machine.id);
            else state.realtime.set(machine.id, body);
          },
        );
        await refreshReports();
        render();
        setStatus(`Live · updated ${new Date().toLocaleTimeString()}`);
      } catch (error) {
        setStatus(`Could not refresh: ${error.message}`);
      }
    }, 500);
  }

  /**
   * Listens to the company's live events: a one-use ticket (asked for with the key in a
   * header) opens an EventSource, so the key never goes in a URL. A ticket serves one
   * connection: when it drops, a new ticket resumes after the last event seen.
   */
  async function listen() {
    if (state.events) state.events.close();
    state.events = null;
    if (!state.key || typeof EventSource === "undefined") return;
    try {
      const { body } = await api("/v1/realtime/tickets", {});
      const query = new URLSearchParams({ ticket: body.ticket });
      if (state.lastEventId !== null) query.set("since", state.lastEventId);
      const source = new EventSource(`/v1/realtime/events?${query}`);
      state.events = source;
      for (const kind of EVENT_KINDS) {
        source.addEventListener(kind, (message) => {
          state.lastEventId = message.lastEventId || state.lastEventId;
          let event = null;
          try {
            event = JSON.parse(message.data);
          } catch {
            return;
          }
          // How many events arrived: shown to tests and to a curious person's dev tools.
          document.body.dataset.liveEvents = String(
            Number(document.body.dataset.liveEvents || 0) + 1,
          );
          machineChanged(kind === "reset" ? null : event.machineId);
        });
      }
      source.addEventListener("error", () => {
        if (state.events !== source) return;
        source.close();
        state.events = null;
        setTimeout(listen, 5_000);
      });
    } catch (error) {
      setStatus(`Live events unavailable (${error.message}); polling`);
      setTimeout(listen, 30_000);
    }
  }

  async function start() {
    $("key-form").hidden = true;
    $("change-key").hidden = false;
    setStatus("Loading…");
    try {
      const machines = await api("/v1/machines");
      state.machines = machines.body;
      const logs = await api("/v1/production-logs/filters", { limit: 1 });
      const log = logs.body.productionLogs[0];
      if (log?.company.timezone) state.timeZone = log.company.timezone;
      $("time-zone").textContent = `Times in ${state.timeZone}`;
    } catch (error) {
      setStatus(error.status === 401 ? "That key is not valid." : `Error: ${error.message}`);
      if (error.status === 401) forgetKey();
      return;
    }
    await refresh(true);
    listen();
    // Live events drive the board; polling stays as a fallback, about 4 realtime reads a
    // second at most whatever the plant's size (a key's default limit is 600 a minute).
    const interval = Math.max(15_000, state.machines.length * 250);
    state.timer = setInterval(() => refresh(false), interval);
    state.slowTimer = setInterval(() => refresh(true), Math.max(30_000, interval));
  }

  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.key = $("key").value.trim();
    sessionStorage.setItem(KEY_STORAGE, state.key);
    $("key").value = "";
    start();
  });
  $("change-key").addEventListener("click", forgetKey);
  $("close-detail").addEventListener("click", closeDetail);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.selected) closeDetail();
  });
  if (state.key) start();
  else $("key").focus();
})();
