// The plant board's charts (small SVG drawings, no chart library): a line chart of a
// signal and the OEE of each shift as bars. Times are labelled in the company's zone
// (board-format.client.js).

(() => {
  const { format } = globalThis.PMBoard;
  const SVG = "http://www.w3.org/2000/svg";

  function svgElement(label) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("viewBox", "0 0 600 160");
    svg.setAttribute("role", "img");
    svg.setAttribute("class", "chart");
    if (label) svg.setAttribute("aria-label", label);
    return svg;
  }

  function text(svg, x, y, content, size = 12) {
    const node = document.createElementNS(SVG, "text");
    node.setAttribute("x", String(x));
    node.setAttribute("y", String(y));
    node.setAttribute("font-size", String(size));
    node.textContent = content;
    svg.append(node);
    return node;
  }

  /**
   * A line chart of `points` ([ms, value]) with its range labelled.
   *
   * @param empty what to say when there are no points (for example "No samples in the
   *   last 24 hours").
   */
  function lineChart(points, label, unit, empty) {
    const width = 600;
    const height = 160;
    const pad = 28;
    if (points.length === 0) {
      const svg = svgElement(`${label}: ${empty}`);
      text(svg, 20, 80, empty, 14);
      return svg;
    }
    const svg = svgElement();
    const t0 = points[0][0];
    const t1 = points[points.length - 1][0];
    const values = points.map((p) => p[1]);
    const lo = Math.min(0, ...values);
    const hi = Math.max(...values, lo + 1);
    const x = (t) => pad + ((t - t0) / Math.max(t1 - t0, 1)) * (width - 2 * pad);
    const y = (v) => height - pad - ((v - lo) / (hi - lo)) * (height - 2 * pad);
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute(
      "points",
      points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "),
    );
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", "currentColor");
    line.setAttribute("stroke-width", "2");
    svg.append(line);
    text(svg, pad, 14, `${format.number(hi, 2)} ${unit}`);
    text(svg, pad, height - pad + 14, `${format.number(lo, 2)} ${unit}`);
    text(svg, pad, height - 2, format.dayClock(t0)).setAttribute("data-time", "start");
    text(svg, width - pad - 90, height - 2, format.dayClock(t1)).setAttribute("data-time", "end");
    svg.setAttribute(
      "aria-label",
      `${label}: ${points.length} points from ${format.dayClock(t0)} to ${format.dayClock(t1)}` +
        ` (${format.zone()}), between ${format.number(lo, 2)} and ${format.number(hi, 2)} ${unit}`,
    );
    return svg;
  }

  /** OEE per shift as bars (one per shift instance), each with its shift and value in its title. */
  function oeeChart(rows) {
    const width = 600;
    const height = 160;
    const svg = svgElement(`OEE of ${rows.length} shifts in the last 7 days`);
    if (rows.length === 0) {
      text(svg, 20, 80, "No shift in the last 7 days counts in the reports", 14);
      return svg;
    }
    const left = 44;
    const step = (width - left - 10) / Math.max(rows.length, 1);
    text(svg, 0, 16, "100 %");
    text(svg, 0, height - 20, "0 %");
    rows.forEach((row, i) => {
      const oee = row.productionMetrics.oee || 0;
      const h = Math.max(1, oee * (height - 30));
      if (step >= 34) text(svg, left + i * step, height - 24 - h, format.percent(oee), 11);
      const bar = document.createElementNS(SVG, "rect");
      bar.setAttribute("x", String(left + i * step));
      bar.setAttribute("y", String(height - 20 - h));
      bar.setAttribute("width", String(Math.max(step - 2, 1)));
      bar.setAttribute("height", String(h));
      bar.setAttribute("fill", "currentColor");
      const title = document.createElementNS(SVG, "title");
      title.textContent = `${row.shift.name} ${format.dayClock(row.shift.startTime)}: OEE ${format.percent(oee)}`;
      bar.append(title);
      svg.append(bar);
    });
    const first = rows[0].shift.startTime;
    const last = rows[rows.length - 1].shift.startTime;
    text(svg, left, height - 4, format.dayClock(first)).setAttribute("data-time", "start");
    text(svg, width - 100, height - 4, format.dayClock(last)).setAttribute("data-time", "end");
    return svg;
  }

  globalThis.PMBoard = { ...globalThis.PMBoard, charts: { lineChart, oeeChart } };
})();
