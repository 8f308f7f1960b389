// The plant board's script: runs in the browser, served by the Worker together with
// board-format.client.js and board-charts.client.js (src/board/board-page.ts). It uses only
// the public API, with the key the person enters, kept in this tab's session storage and
// sent as the x-api-key header, never in a URL.

(() => {
  const { format } = globalThis.PMBoard;
  const { el, percent, perProduction, number, fig, HOUR } = format;
  const stops = globalThis.PMBoard.stops();
  const KEY_STORAGE = "pm-board-key";
  /** How long a machine that runs no shift is left alone before it is asked again. */
  const NO_SHIFT_RETRY_MS = 10 * 60_000;
  const $ = (id) => document.getElementById(id);
  const state = {
    key: sessionStorage.getItem(KEY_STORAGE) || "",
    machines: [],
    realtime: new Map(),
    /** Machines that answered 409 (no shift now): when to ask again, ms. */
    noShift: new Map(),
    metrics: new Map(),
    selected: null,
    timer: null,
    slowTimer: null,
    events: null,
    lastEventId: null,
    /** A ticket taken with the company's zone, for the stream's first connection. */
    ticket: null,
    pending: new Set(),
    flushTimer: null,
  };

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

  function setStatus(text) {
    $("status").textContent = text;
  }

  /** `Updated 14:05:09` in the company's zone. */
  const updated = (prefix) => `${prefix} ${format.clockSeconds(Date.now())}`;

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

  /** What the card says about production: figures, or plainly why there are none. */
  function productionText(machine, rt) {
    const current = rt.current;
    if (!current && rt.production.segments.length === 0) {
      return machine.isCountEnabled === false
        ? "Not measured: no SKU set this shift and no count signal"
        : "No SKU set this shift";
    }
    const production = productionAgainstNominal(rt);
    const unit = current?.sku.unit ? current.sku.unit : "units";
    return [
      fig(`${number(production.count)} ${unit}`),
      " of ",
      fig(number(production.target)),
      " at nominal speed",
    ];
  }

  /** The OEE block: the running shift's figures, or why the reports have none. */
  function oeeBlock(rt, row) {
    const m = row ? row.productionMetrics : null;
    if (!m && rt.shift.isConsidered === false) {
      return el(
        "div",
        { class: "oee", "data-field": "oee" },
        el("span", {}, "No OEE: this shift is not counted in the reports"),
      );
    }
    return el(
      "div",
      { class: "oee", "data-field": "oee" },
      el("span", { class: "big" }, "OEE ", fig(percent(m?.oee))),
      el(
        "span",
        {},
        "Availability ",
        fig(percent(m?.availability)),
        " · Performance ",
        fig(perProduction(m?.effectiveness)),
        " · Quality ",
        fig(perProduction(m?.quality)),
      ),
    );
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
    card.addEventListener("click", () => openDetail(machine));
    if (!rt) {
      card.append(el("p", { class: "idle" }, "No shift running now"));
      // A stop needs no shift: one recorded by hand, or one still waiting for its reason.
      if (stops.hasStopToShow(machine.id)) {
        card.append(el("dl", {}, el("dt", {}, "Stop"), stops.stopEntry(machine.id)));
      }
      return card;
    }
    const current = rt.current;
    card.append(
      el("p", { class: "shift", "data-field": "shift" }, format.shiftSpan(rt.shift)),
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
        el("dd", { "data-field": "production" }, productionText(machine, rt)),
        el("dt", {}, "Stop"),
        stops.stopEntry(machine.id),
      ),
      oeeBlock(rt, state.metrics.get(`${machine.id}:${rt.shift.id}`)),
    );
    return card;
  }

  function render() {
    const grid = $("machines");
    grid.replaceChildren(
      ...(state.machines.length === 0
        ? [
            el(
              "p",
              { class: "idle", "data-field": "no-machines" },
              "This company has no machines yet.",
            ),
          ]
        : state.machines.map(machineCard)),
    );
    grid.setAttribute("aria-busy", "false");
  }

  async function inBatches(items, size, work) {
    const out = [];
    for (let i = 0; i < items.length; i += size) {
      out.push(...(await Promise.all(items.slice(i, i + size).map(work))));
    }
    return out;
  }

  /**
   * The realtime state of each machine. A machine that runs no shift (409) is asked again
   * only after NO_SHIFT_RETRY_MS, or at once when one of its events arrives: a machine
   * without shifts is not polled into an error every round.
   */
  async function refreshRealtime(machines = state.machines) {
    const now = Date.now();
    const due = machines.filter((m) => !(state.noShift.get(m.id) > now));
    await inBatches(due, 6, async (machine) => {
      const { status, body } = await api(`/v1/realtime/${machine.id}`);
      if (status === 409) {
        state.realtime.delete(machine.id);
        state.noShift.set(machine.id, Date.now() + NO_SHIFT_RETRY_MS);
      } else {
        state.noShift.delete(machine.id);
        state.realtime.set(machine.id, body);
      }
    });
  }

  async function allPages(path, body, list) {
    const rows = [];
    for (let page = 1; page <= 10; page += 1) {
      const answer = await api(path, { ...body, page, limit: 100 });
      rows.push(...answer.body[list]);
      if (page >= answer.body.totalPages) break;
    }
    return rows;
  }

  /** The running shifts' metrics rows, and the stops of every machine (./board-stops.client.js). */
  async function refreshReports() {
    const ids = state.machines.map((m) => m.id);
    if (ids.length === 0) return;
    const after = new Date(Date.now() - 2 * 24 * HOUR).toISOString();
    const body = { machines: { include: ids }, startDate: { after } };
    const metrics = new Map();
    for (const row of await allPages("/v1/reports/metrics", body, "metrics")) {
      metrics.set(`${row.machine.id}:${row.shift.id}`, row);
    }
    state.metrics = metrics;
    const requestedAt = Date.now();
    stops.fromReport(await allPages("/v1/reports/stops", body, "stops"), requestedAt);
  }

  async function refresh(withReports) {
    try {
      await refreshRealtime();
      if (withReports) await refreshReports();
      render();
      setStatus(updated("Updated"));
    } catch (error) {
      setStatus(`Could not refresh: ${error.message}`);
      if (error.status === 401) forgetKey();
    }
  }

  const ctx = { state, api, render, setStatus, updated, refreshRealtime, refreshReports, stops };
  const { openDetail, closeDetail } = globalThis.PMBoard.detail(ctx);
  const { listen } = globalThis.PMBoard.live(ctx);

  function forgetKey() {
    sessionStorage.removeItem(KEY_STORAGE);
    state.key = "";
    clearInterval(state.timer);
    clearInterval(state.slowTimer);
    if (state.events) state.events.close();
    state.events = null;
    $("key-form").hidden = false;
    $("change-key").hidden = true;
    $("time-zone").textContent = "";
    $("machines").replaceChildren();
    $("detail").hidden = true;
    $("key").focus();
  }

  /**
   * The company's time zone, from the one-use ticket of its stream events
   * (`company.timezone`); the ticket is kept for the stream's first connection. Null when the
   * key cannot take a ticket (no `realtime.read`): the board then says the zone is unknown
   * rather than pass the browser's zone or UTC off as the plant's.
   */
  async function companyZone() {
    try {
      const { body } = await api("/v1/realtime/tickets", {});
      state.ticket = body.ticket;
      return body.company.timezone;
    } catch (error) {
      if (error.status === 403) return null;
      throw error;
    }
  }

  async function start() {
    $("key-form").hidden = true;
    $("change-key").hidden = false;
    setStatus("Loading…");
    try {
      const machines = await api("/v1/machines");
      state.machines = machines.body;
      const zone = await companyZone();
      format.setZone(zone ?? "UTC");
      document.body.dataset.timeZone = zone ?? "";
      $("time-zone").textContent = zone
        ? `Times in ${zone} (the plant's)`
        : "Times in UTC: the company's zone is not known (this key has no realtime.read)";
    } catch (error) {
      setStatus(error.status === 401 ? "That key is not valid." : `Error: ${error.message}`);
      if (error.status === 401) forgetKey();
      return;
    }
    await refresh(true);
    listen();
    // Stream events drive the board; polling stays as a fallback, about 4 realtime reads a
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
