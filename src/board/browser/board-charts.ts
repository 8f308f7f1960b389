/**
 * The plant board's charts (small SVG drawings, no chart library): a line chart of a signal
 * and the OEE of each shift as bars. Times are labelled in the company's zone
 * (./board-format.ts).
 */
import { dayClock, number, percent, zoneName } from "./board-format";
import { aboveNominalSpeed, type MetricsRow } from "./board-types";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 160;

function svgElement(label?: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("class", "chart");
  if (label) svg.setAttribute("aria-label", label);
  return svg;
}

function text(svg: SVGSVGElement, x: number, y: number, content: string, size = 12) {
  const node = document.createElementNS(SVG, "text");
  node.setAttribute("x", String(x));
  node.setAttribute("y", String(y));
  node.setAttribute("font-size", String(size));
  node.textContent = content;
  svg.append(node);
  return node;
}

/** A point of a line chart: `[ms, value]`. */
export type Point = [number, number];

/**
 * A line chart of `points` with its range labelled.
 *
 * @param empty what to say when there are no points (for example "No samples in the last
 *   24 hours").
 */
export function lineChart(points: Point[], label: string, unit: string, empty: string) {
  const pad = 28;
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last) {
    const svg = svgElement(`${label}: ${empty}`);
    text(svg, 20, 80, empty, 14);
    return svg;
  }
  const svg = svgElement();
  const [t0] = first;
  const [t1] = last;
  const values = points.map((p) => p[1]);
  const lo = Math.min(0, ...values);
  const hi = Math.max(...values, lo + 1);
  const x = (t: number) => pad + ((t - t0) / Math.max(t1 - t0, 1)) * (WIDTH - 2 * pad);
  const y = (v: number) => HEIGHT - pad - ((v - lo) / (hi - lo)) * (HEIGHT - 2 * pad);
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute(
    "points",
    points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" "),
  );
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", "currentColor");
  line.setAttribute("stroke-width", "2");
  svg.append(line);
  text(svg, pad, 14, `${number(hi, 2)} ${unit}`);
  text(svg, pad, HEIGHT - pad + 14, `${number(lo, 2)} ${unit}`);
  text(svg, pad, HEIGHT - 2, dayClock(t0)).setAttribute("data-time", "start");
  text(svg, WIDTH - pad - 90, HEIGHT - 2, dayClock(t1)).setAttribute("data-time", "end");
  svg.setAttribute(
    "aria-label",
    `${label}: ${points.length} points from ${dayClock(t0)} to ${dayClock(t1)}` +
      ` (${zoneName()}), between ${number(lo, 2)} and ${number(hi, 2)} ${unit}`,
  );
  return svg;
}

/**
 * OEE per shift as bars (one per shift instance), each with its shift and value in its
 * title; a shift that ran above its nominal speed says so in its title and is drawn apart.
 */
export function oeeChart(rows: MetricsRow[]) {
  const svg = svgElement(`OEE of ${rows.length} shifts in the last 7 days`);
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last) {
    text(svg, 20, 80, "No shift in the last 7 days counts in the reports", 14);
    return svg;
  }
  const left = 44;
  const step = (WIDTH - left - 10) / rows.length;
  text(svg, 0, 16, "100 %");
  text(svg, 0, HEIGHT - 20, "0 %");
  rows.forEach((row, i) => {
    const oee = row.productionMetrics.oee ?? 0;
    const h = Math.max(1, oee * (HEIGHT - 30));
    if (step >= 34) text(svg, left + i * step, HEIGHT - 24 - h, percent(oee), 11);
    const bar = document.createElementNS(SVG, "rect");
    bar.setAttribute("x", String(left + i * step));
    bar.setAttribute("y", String(HEIGHT - 20 - h));
    bar.setAttribute("width", String(Math.max(step - 2, 1)));
    bar.setAttribute("height", String(h));
    bar.setAttribute("fill", "currentColor");
    const above = aboveNominalSpeed(row);
    if (above) bar.setAttribute("class", "above-nominal");
    const title = document.createElementNS(SVG, "title");
    title.textContent =
      `${row.shift.name} ${dayClock(row.shift.startTime)}: OEE ${percent(oee)}` +
      (above ? ", above nominal speed: check the nominal speed" : "");
    bar.append(title);
    svg.append(bar);
  });
  text(svg, left, HEIGHT - 4, dayClock(first.shift.startTime)).setAttribute("data-time", "start");
  text(svg, WIDTH - 100, HEIGHT - 4, dayClock(last.shift.startTime)).setAttribute(
    "data-time",
    "end",
  );
  return svg;
}
