// The plant board's detail panel: for the selected machine, its signals over the last 24
// hours (power and count first, at most four) and its OEE per shift over the last 7 days.
// Part of the board's script (src/board/board-page.ts); `ctx` is the board's state and
// helpers (board.client.js).

(() => {
  const { format, charts } = globalThis.PMBoard;
  const { el, HOUR } = format;
  const $ = (id) => document.getElementById(id);

  globalThis.PMBoard.detail = (ctx) => {
    const { state, api, render } = ctx;

    /**
     * The signals' window: the last 24 hours up to the start of the 15 minutes running now
     * (buckets are aligned to the epoch), so that every point drawn is a whole bucket: a sum
     * over the 5 minutes of a quarter so far would read as a drop.
     */
    const BUCKET = 15 * 60_000;

    async function signalFigures(machine, now) {
      const until = Math.floor(now / BUCKET) * BUCKET;
      const figures = [];
      const { body } = await api(`/v1/machines/${machine.uuid}/signals`);
      // power and count first (the demo's), then the machine's other signals, at most four.
      const order = (s) => ["power", "count"].indexOf(s.name) + 1 || 3;
      const signals = [...body.signals].sort((a, b) => order(a) - order(b)).slice(0, 4);
      for (const signal of signals) {
        const fn = signal.kind === "counter" || signal.name === "count" ? "sum" : "avg";
        const unit = signal.name === "power" ? "kW" : signal.name === "count" ? "pieces" : "";
        const query = new URLSearchParams({
          start_time: new Date(until - 24 * HOUR).toISOString(),
          end_time: new Date(until).toISOString(),
          agg_unit: "m",
          agg_period: "15",
          agg_function: fn,
        });
        const data = await api(`/v1/machines/${machine.uuid}/signals/${signal.public_id}?${query}`);
        const points = data.body.data.map((p) => [Date.parse(p.timestamp), p.value]);
        const label = `${signal.display_name || signal.name}, ${fn} per 15 min`;
        figures.push(
          el(
            "figure",
            { "data-chart": signal.name },
            el(
              "figcaption",
              {},
              `${label}${unit ? ` (${unit})` : ""}, last 24 hours to ${format.clock(until)} ` +
                "(the quarter running now is left out until it ends)",
            ),
            charts.lineChart(points, label, unit, "No samples in the last 24 hours"),
          ),
        );
      }
      if (signals.length === 0) figures.push(el("p", {}, "This machine has no signals."));
      return figures;
    }

    async function openDetail(machine) {
      state.selected = machine;
      render();
      $("detail").hidden = false;
      $("detail-title").textContent = machine.name;
      const box = $("detail-charts");
      box.replaceChildren(el("p", {}, "Loading…"));
      const now = Date.now();
      const figures = machine.uuid
        ? await signalFigures(machine, now)
        : [el("p", {}, "This machine has no signals (no uuid).")];
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
          charts.oeeChart(rows),
        ),
      );
      if (state.selected === machine) box.replaceChildren(...figures);
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

    return { openDetail, closeDetail };
  };
})();
