/**
 * The plant board's detail panel: for the selected machine, its stops of the last 24 hours
 * with their reasons (./board-reasons.ts), its signals over the last 24 hours (power and
 * count first, at most four) and its OEE per shift over the last 7 days.
 */
import { DAY_MS, MINUTE_MS } from "../../time/units";
import { answer, api } from "./board-api";
import { lineChart, oeeChart, type Point } from "./board-charts";
import { byId, el } from "./board-dom";
import { clock } from "./board-format";
import { hideMachineStops, loadMachineStops, showMachineStops } from "./board-reasons";
import { state } from "./board-state";
import type { Machine } from "./board-types";

/**
 * The signals' window: the last 24 hours up to the start of the 15 minutes running now
 * (buckets are aligned to the epoch), so that every point drawn is a whole bucket: a sum
 * over the 5 minutes of a quarter so far would read as a drop.
 */
const BUCKET = 15 * MINUTE_MS;

/** power and count first (the demo's), then the machine's other signals. */
const signalOrder = (name: string) => ["power", "count"].indexOf(name) + 1 || 3;

async function signalFigures(uuid: string, now: number): Promise<HTMLElement[]> {
  const until = Math.floor(now / BUCKET) * BUCKET;
  const figures: HTMLElement[] = [];
  const list = answer(
    await api().GET("/v1/machines/{machine_uuid}/signals", {
      params: { path: { machine_uuid: uuid } },
    }),
  );
  const signals = [...list.signals]
    .sort((a, b) => signalOrder(a.name) - signalOrder(b.name))
    .slice(0, 4);
  for (const signal of signals) {
    const fn = signal.name === "count" ? "sum" : "avg";
    const unit = signal.name === "power" ? "kW" : signal.name === "count" ? "pieces" : "";
    const data = answer(
      await api().GET("/v1/machines/{machine_uuid}/signals/{public_id}", {
        params: {
          path: { machine_uuid: uuid, public_id: signal.public_id },
          query: {
            start_time: new Date(until - DAY_MS).toISOString(),
            end_time: new Date(until).toISOString(),
            agg_unit: "m",
            agg_period: 15,
            agg_function: fn,
          },
        },
      }),
    );
    const points = (data.data ?? []).map((p): Point => [Date.parse(p.timestamp), p.value]);
    const label = `${signal.display_name || signal.name}, ${fn} per 15 min`;
    figures.push(
      el(
        "figure",
        { "data-chart": signal.name },
        el(
          "figcaption",
          {},
          `${label}${unit ? ` (${unit})` : ""}, last 24 hours to ${clock(until)} ` +
            "(the quarter running now is left out until it ends)",
        ),
        lineChart(points, label, unit, "No samples in the last 24 hours"),
      ),
    );
  }
  if (signals.length === 0) figures.push(el("p", {}, "This machine has no signals."));
  return figures;
}

async function oeeFigure(machine: Machine, now: number): Promise<HTMLElement> {
  const data = answer(
    await api().POST("/v1/reports/metrics", {
      body: {
        machines: { include: [machine.id] },
        startDate: { after: new Date(now - 7 * DAY_MS).toISOString() },
        limit: 100,
      },
    }),
  );
  const rows = [...data.metrics].sort(
    (a, b) => Date.parse(a.shift.startTime) - Date.parse(b.shift.startTime),
  );
  return el(
    "figure",
    { "data-chart": "oee" },
    el("figcaption", {}, "OEE per shift, last 7 days"),
    oeeChart(rows),
  );
}

/**
 * Opens a machine: its stops at once (then read again with the catalog), its charts once
 * read.
 *
 * @param render draws the cards (the selected one is marked).
 */
export async function openDetail(machine: Machine, render: () => void): Promise<void> {
  state.selected = machine;
  render();
  byId("detail").hidden = false;
  byId("detail-title").textContent = machine.name;
  showMachineStops(machine, byId("detail-stops"), render);
  byId("close-detail").focus();
  const box = byId("detail-charts");
  box.replaceChildren(el("p", {}, "Loading…"));
  const now = Date.now();
  await loadMachineStops(machine);
  if (state.selected !== machine) return;
  render();
  const figures = machine.uuid
    ? await signalFigures(machine.uuid, now)
    : [el("p", {}, "This machine has no signals (no uuid).")];
  figures.push(await oeeFigure(machine, now));
  if (state.selected === machine) box.replaceChildren(...figures);
}

/** Closes the machine and gives the focus back to its card. */
export function closeDetail(render: () => void): void {
  const machine = state.selected;
  state.selected = null;
  hideMachineStops();
  byId("detail").hidden = true;
  render();
  const card = machine && document.querySelector<HTMLElement>(`[data-machine-id="${machine.id}"]`);
  if (card) card.focus();
}
