// The plant board's formatting, shared by its other parts (board-charts.client.js,
// board.client.js; served together as one script by src/board/board-page.ts). Every time
// is written in the company's time zone, whatever the browser's: Intl.DateTimeFormat with
// `timeZone`. Figures keep their unit on the same line (a no-break space).

(() => {
  const NBSP = "\u00a0";
  const HOUR = 3_600_000;
  /** The zone every time is shown in; set once the company's is known. */
  let zone = "UTC";

  const formatters = new Map();
  /** An Intl.DateTimeFormat in the company's zone, 24-hour clock, cached by options. */
  function formatter(options) {
    const key = `${zone}|${JSON.stringify(options)}`;
    let f = formatters.get(key);
    if (!f) {
      f = new Intl.DateTimeFormat("en-GB", { timeZone: zone, hourCycle: "h23", ...options });
      formatters.set(key, f);
    }
    return f;
  }

  const toDate = (t) => (typeof t === "number" ? new Date(t) : new Date(Date.parse(t)));

  const format = {
    HOUR,
    NBSP,
    setZone(name) {
      zone = name;
    },
    zone: () => zone,
    /** `0.815` -> `81.5 %` (no-break space), `–` when not a number. */
    percent: (x) => (typeof x === "number" ? `${(x * 100).toFixed(1)}${NBSP}%` : "–"),
    /**
     * A figure that needs production (effectiveness, quality): its percent, or `no
     * production` when the API gives none (null: nothing ran, nothing was made; not 0 %).
     */
    perProduction: (x) =>
      typeof x === "number"
        ? `${(x * 100).toFixed(1)}${NBSP}%`
        : x === null
          ? "no production"
          : "–",
    /** A number with at most `digits` decimals, grouped; `–` when not a number. */
    number: (x, digits = 0) =>
      typeof x === "number"
        ? x.toLocaleString("en-GB", { maximumFractionDigits: digits, minimumFractionDigits: 0 })
        : "–",
    /** `14:05` in the company's zone. */
    clock: (t) => formatter({ hour: "2-digit", minute: "2-digit" }).format(toDate(t)),
    /** `14:05:09` in the company's zone. */
    clockSeconds: (t) =>
      formatter({ hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(toDate(t)),
    /** `Thu 14:05` in the company's zone. */
    dayClock: (t) =>
      formatter({ weekday: "short", hour: "2-digit", minute: "2-digit" }).format(toDate(t)),
    /**
     * A shift instance as a person reads it: `Morning, 06:00–14:00`; a 24-hour shift is
     * `Day, 24 h from Thu 00:00`, not `00:00–00:00`.
     */
    shiftSpan(shift) {
      const start = Date.parse(shift.start);
      const end = Date.parse(shift.end);
      const hours = Math.round((end - start) / HOUR);
      if (hours >= 24) return `${shift.name}, ${hours}${NBSP}h from ${format.dayClock(start)}`;
      return `${shift.name}, ${format.clock(start)}–${format.clock(end)}`;
    },
    /** An element with attributes and children (strings become text nodes: never HTML). */
    el(tag, attributes, ...children) {
      const node = document.createElement(tag);
      for (const [name, value] of Object.entries(attributes || {})) {
        if (value !== undefined && value !== null) node.setAttribute(name, String(value));
      }
      for (const child of children.flat()) {
        if (child === null || child === undefined) continue;
        node.append(typeof child === "string" ? document.createTextNode(child) : child);
      }
      return node;
    },
    /** A figure that never breaks across lines: `<span class="fig">text</span>`. */
    fig: (text) => format.el("span", { class: "fig" }, text),
  };

  globalThis.PMBoard = { ...(globalThis.PMBoard || {}), format };
})();
