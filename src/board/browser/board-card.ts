/**
 * A machine's card: its running shift, SKU, work order, operators, production against the
 * nominal speed, its stops (the open one, every one waiting for its reason, the reasons
 * given in the last 24 hours), its timeline and its live OEE (with a warning when it runs
 * above its nominal speed). The card is a button that opens the machine (./board-detail.ts).
 */
import { MINUTE_MS } from "../../time/units";
import { el, fig } from "./board-dom";
import { clock, number, percent, perProduction, shiftSpan } from "./board-format";
import { state } from "./board-state";
import { boardStops, reasonText, type StopEntry } from "./board-stops";
import type { TimelineRecords } from "./board-timeline";
import { timelineBlock } from "./board-timeline-view";
import {
  aboveNominalSpeed,
  type Machine,
  type MetricsRow,
  type RealtimeState,
} from "./board-types";

/** Reasons given in the last 24 hours shown on a card; the machine's detail lists them all. */
const REASONS_ON_CARD = 3;

const span = (entry: StopEntry) =>
  `${clock(entry.stop.startTime)}–${entry.stop.endTime === null ? "now" : clock(entry.stop.endTime)}`;

/**
 * The card's "Stop" entry (a `dd`), in the company's time zone: the open stop ("Down since
 * 14:05, reason not given", or its reason), then every stop waiting for its reason.
 */
function stopEntry(machineId: number, now: number): HTMLElement {
  const { open, waiting } = boardStops.summary(machineId, now);
  const lines: HTMLElement[] = [];
  if (open) {
    const since = clock(open.stop.startTime);
    const words = open.stop.isProgrammed ? `Planned stop since ${since}` : `Down since ${since}`;
    const reason = open.classification ? reasonText(open.classification) : null;
    lines.push(
      el(
        "span",
        { class: "line stopped", "data-stop-id": open.stop.id },
        reason ? `${words} · ${reason}` : `${words}, reason not given`,
      ),
    );
  }
  for (const entry of waiting) {
    lines.push(
      el(
        "span",
        { class: "line waiting", "data-stop-id": entry.stop.id },
        `Stop ${span(entry)} waiting for its reason`,
      ),
    );
  }
  if (lines.length === 0) lines.push(el("span", {}, "No open stop, none waiting for a reason"));
  return el("dd", { "data-field": "stop" }, ...lines);
}

/** The card's "Reasons" entries: the latest reasons given to stops that ended (or nothing). */
function reasonEntries(machineId: number, now: number): HTMLElement[] {
  const { given } = boardStops.summary(machineId, now);
  if (given.length === 0) return [];
  const shown = given
    .slice(0, REASONS_ON_CARD)
    .map((entry) =>
      el(
        "span",
        { class: "line", "data-stop-id": entry.stop.id },
        `${span(entry)} · ${entry.classification ? reasonText(entry.classification) : ""}`,
      ),
    );
  const rest = given.length - shown.length;
  if (rest > 0) {
    shown.push(el("span", { class: "line muted" }, `${rest} more: open the machine for all`));
  }
  return [el("dt", {}, "Reasons"), el("dd", { "data-field": "reasons" }, ...shown)];
}

/** Production of the running shift against what the nominal speeds allow so far. */
function productionAgainstNominal(rt: RealtimeState): { count: number; target: number } {
  const now = Date.parse(rt.at);
  let target = 0;
  for (const s of rt.production.segments) {
    const start = Date.parse(s.start);
    const end = Math.min(s.end === null ? now : Date.parse(s.end), now);
    if (end > start) target += (s.nominalSpeed * (end - start)) / MINUTE_MS;
  }
  return { count: rt.production.count, target };
}

/** What the card says about production: figures, or plainly why there are none. */
function productionText(machine: Machine, rt: RealtimeState): (string | HTMLElement)[] {
  const current = rt.current;
  if (!current && rt.production.segments.length === 0) {
    return [
      machine.isCountEnabled === false
        ? "Not measured: no SKU set this shift and no count signal"
        : "No SKU set this shift",
    ];
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
function oeeBlock(rt: RealtimeState, row: MetricsRow | undefined): HTMLElement {
  const m = row?.productionMetrics;
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
    aboveNominalSpeed(row)
      ? el(
          "span",
          { class: "warn", "data-field": "nominal-speed" },
          "⚠ Running above nominal speed: check the nominal speed",
        )
      : null,
  );
}

/**
 * What a machine's timeline is made of, from the board's state: the shift instances of its
 * report rows and the running one, its stops, and its production logs (a live one, whose
 * segment is still open, up to now).
 */
function timelineRecords(machineId: number, rt: RealtimeState | undefined, now: number) {
  const records: TimelineRecords = { shifts: [], stops: [], production: [] };
  for (const row of state.metrics.values()) {
    if (row.machine.id !== machineId) continue;
    records.shifts.push({
      start: Date.parse(row.shift.startTime),
      end: Date.parse(row.shift.endTime),
    });
  }
  const open = new Set<string>();
  if (rt) {
    records.shifts.push({ start: Date.parse(rt.shift.start), end: Date.parse(rt.shift.end) });
    for (const s of rt.production.segments) {
      if (s.end === null) open.add(s.productionLogId);
      records.production.push({
        start: Date.parse(s.start),
        end: s.end === null ? now : Date.parse(s.end),
      });
    }
  }
  for (const log of state.logs?.get(machineId) ?? []) {
    if (open.has(log.id)) continue;
    records.production.push({ start: Date.parse(log.start), end: Date.parse(log.end) });
  }
  for (const entry of boardStops.entries(machineId)) {
    const end = entry.stop.endTime === null ? now : Date.parse(entry.stop.endTime);
    records.stops.push({
      start: Date.parse(entry.stop.startTime),
      end,
      isProgrammed: entry.stop.isProgrammed,
    });
  }
  return records;
}

/** The timeline of a machine, or why there is none (a key without `production_logs.read`). */
function timeline(machineId: number, rt: RealtimeState | undefined, now: number): HTMLElement {
  if (state.logs === null) {
    return el(
      "p",
      { class: "idle", "data-field": "timeline" },
      "No timeline: this key cannot read production logs (production_logs.read)",
    );
  }
  return timelineBlock(rt ? rt.shift : null, timelineRecords(machineId, rt, now), now);
}

/**
 * A machine's card.
 *
 * @param onOpen called when the card is chosen (click, or Enter and Space on it).
 */
export function machineCard(machine: Machine, onOpen: (machine: Machine) => void): HTMLElement {
  const now = Date.now();
  const rt = state.realtime.get(machine.id);
  const selected = state.selected?.id === machine.id;
  const card = el("button", {
    type: "button",
    class: `card${selected ? " selected" : ""}`,
    "data-machine-id": machine.id,
    "aria-pressed": selected ? "true" : "false",
  });
  card.append(el("h2", {}, machine.name));
  card.addEventListener("click", () => onOpen(machine));
  if (!rt) {
    card.append(el("p", { class: "idle" }, "No shift running now"));
    // A stop needs no shift: one recorded by hand, or one still waiting for its reason.
    const { open, waiting, given } = boardStops.summary(machine.id, now);
    if (open || waiting.length > 0 || given.length > 0) {
      card.append(
        el(
          "dl",
          {},
          el("dt", {}, "Stop"),
          stopEntry(machine.id, now),
          ...reasonEntries(machine.id, now),
        ),
      );
    }
    card.append(timeline(machine.id, undefined, now));
    return card;
  }
  const current = rt.current;
  card.append(
    el("p", { class: "shift", "data-field": "shift" }, shiftSpan(rt.shift)),
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
      el("dd", { "data-field": "work-order" }, current?.simpleWorkOrder?.name ?? "–"),
      el("dt", {}, "Operators"),
      el(
        "dd",
        { "data-field": "operators" },
        rt.operators.length
          ? rt.operators.map((o) => [o.firstName, o.lastName].filter(Boolean).join(" ")).join(", ")
          : "–",
      ),
      el("dt", {}, "Production"),
      el("dd", { "data-field": "production" }, ...productionText(machine, rt)),
      el("dt", {}, "Stop"),
      stopEntry(machine.id, now),
      ...reasonEntries(machine.id, now),
    ),
    timeline(machine.id, rt, now),
    oeeBlock(rt, state.metrics.get(`${machine.id}:${rt.shift.id}`)),
  );
  return card;
}
