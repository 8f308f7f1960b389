/**
 * A machine's timeline as its card shows it: the running shift (from its start to its end,
 * the part still to come left blank) and the last 24 hours, each a bar of stretches coloured
 * by class (./board-timeline.ts), with its ends written in the plant's clock. Each stretch
 * carries `data-state`, `data-start` and `data-end` (ISO instants) and a title; each bar an
 * `aria-label` with the minutes of each class.
 */
import { DAY_MS } from "../../time/units";
import { el } from "./board-dom";
import { clock, dayClock, duration } from "./board-format";
import {
  minutesByState,
  type Stretch,
  type TimelineRecords,
  type TimelineSpan,
  type TimelineState,
  timelineStretches,
} from "./board-timeline";

/** The words of each class, as the legend and the titles write them. */
const STATE_WORDS: Record<TimelineState, string> = {
  running: "Running",
  down: "Down",
  planned: "Planned stop",
  "no-data": "No data",
  "not-scheduled": "Not scheduled",
};

function stretchNode(stretch: Stretch, from: number, to: number): HTMLElement {
  const node = el("span", {
    class: `stretch s-${stretch.state}`,
    "data-state": stretch.state,
    "data-start": new Date(stretch.start).toISOString(),
    "data-end": new Date(stretch.end).toISOString(),
    title: `${STATE_WORDS[stretch.state]} ${clock(stretch.start)}–${clock(stretch.end)}`,
  });
  node.style.left = `${((stretch.start - from) / (to - from)) * 100}%`;
  node.style.width = `${((stretch.end - stretch.start) / (to - from)) * 100}%`;
  return node;
}

/** What a bar's stretches add up to, for a screen reader: `running 1 h 05 min, down 10 min`. */
function spoken(stretches: Stretch[]): string {
  const minutes = minutesByState(stretches);
  const parts = (Object.keys(STATE_WORDS) as TimelineState[])
    .filter((state) => minutes[state] >= 0.5)
    .map((state) => `${STATE_WORDS[state].toLowerCase()} ${duration(minutes[state])}`);
  return parts.length > 0 ? parts.join(", ") : "nothing yet";
}

/**
 * One bar: `[from, to)` drawn whole, classified up to `now` (what comes later is left blank).
 *
 * @param band `shift` or `day`, the bar's `data-band`.
 */
function bar(
  band: string,
  name: string,
  records: TimelineRecords,
  span: TimelineSpan,
  now: number,
  ends: [string, string],
): HTMLElement {
  const stretches = timelineStretches(records, span.start, Math.min(now, span.end));
  const track = el(
    "span",
    { class: "track", role: "img", "aria-label": `${name}: ${spoken(stretches)}` },
    ...stretches.map((s) => stretchNode(s, span.start, span.end)),
  );
  return el(
    "span",
    { class: "band", "data-band": band },
    el("span", { class: "band-name" }, name),
    track,
    el("span", { class: "ends" }, el("span", {}, ends[0]), el("span", {}, ends[1])),
  );
}

/**
 * The timeline block of a card.
 *
 * @param shift the running shift instance, when the machine runs one.
 * @param records the machine's shift instances, stops and production (ms).
 */
export function timelineBlock(
  shift: { name: string; start: string; end: string } | null,
  records: TimelineRecords,
  now: number,
): HTMLElement {
  const bars: HTMLElement[] = [];
  if (shift) {
    const span = { start: Date.parse(shift.start), end: Date.parse(shift.end) };
    // A shift of a day or more reads with its days: `Mon 00:00` to `Tue 00:00`.
    const end = span.end - span.start >= DAY_MS ? dayClock : clock;
    bars.push(bar("shift", "Shift", records, span, now, [end(span.start), end(span.end)]));
  }
  const day = { start: now - DAY_MS, end: now };
  bars.push(bar("day", "24 h", records, day, now, [dayClock(day.start), clock(day.end)]));
  return el("span", { class: "timeline", "data-field": "timeline" }, ...bars);
}

/** The legend of the timelines' colours: one entry per class, and the blank of what is to come. */
export function legendEntries(): HTMLElement[] {
  return [
    ...(Object.keys(STATE_WORDS) as TimelineState[]).map((state) =>
      el("span", {}, el("i", { class: `key-${state}` }), STATE_WORDS[state]),
    ),
    el("span", {}, el("i", {}), "Still to come"),
  ];
}
