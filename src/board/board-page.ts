/**
 * `/board`: the plant board, a shop-floor page served by the Worker itself (no CDN, no chart
 * library). Its browser script is TypeScript in ./browser/ (type-checked with the DOM's
 * types, reading the public API through the generated client), bundled into one script by
 * the build (scripts/lib/board-bundle.ts: wrangler's `[build]` writes dist/board.js, the
 * tests bundle it in memory) and served here as text. The script calls only the public API
 * with the key a person enters (kept in the tab's session storage, sent as `x-api-key`,
 * never in a URL), follows the company's stream events and polls as a fallback. What it
 * shows: README.md ("The plant board").
 */
import type { Context } from "hono";
import boardScript from "../../dist/board.js";
import type { AppEnv } from "../app-env";
import { serveText } from "../http/docs-page";
import { EVENT_KINDS } from "../streams/names";

/** The icon of the Worker's pages (a gauge), served at /favicon.svg and /favicon.ico. */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<circle cx="16" cy="16" r="15" fill="#1f6feb"/>' +
  '<path d="M7 21a9 9 0 1 1 18 0" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/>' +
  '<path d="M16 21l6-7" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>';

/** Serves the icon (an SVG, which browsers take at /favicon.ico too). */
export function serveFavicon(c: Context<AppEnv>): Response {
  return c.body(FAVICON_SVG, 200, {
    "content-type": "image/svg+xml",
    "cache-control": "public, max-age=86400",
  });
}

const escapeAttribute = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;");

/** Path of the board's script. */
export const BOARD_SCRIPT_PATH = "/board/board.js";

const STYLE = `
:root{color-scheme:light dark;--accent:#1f6feb;--bad:#c62828;--warn:#b35c00;--muted:#666}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{font:16px/1.45 system-ui,sans-serif;margin:0;padding:0 1rem 2rem}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:baseline;padding:1rem 0}
h1{font-size:1.4rem;margin:0}
#status,#time-zone{color:var(--muted);font-size:.9rem}
button{font:inherit;cursor:pointer}
button:focus-visible,input:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;max-width:40rem}
form p{flex-basis:100%;color:var(--muted);font-size:.9rem;margin:0}
input{font:inherit;padding:.4rem;min-width:16rem;max-width:100%}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,20rem),1fr));gap:1rem}
.card{display:flex;flex-direction:column;justify-content:flex-start;text-align:left;border:1px solid #8884;border-radius:8px;padding:.75rem 1rem;background:Canvas;color:CanvasText;width:100%}
.card.selected{border-color:var(--accent);box-shadow:0 0 0 2px var(--accent)}
.card h2{font-size:1.1rem;margin:0 0 .25rem}
.card dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem .75rem;margin:.5rem 0}
.card dt{color:var(--muted)}.card dd{margin:0;overflow-wrap:break-word}
.fig{white-space:nowrap}
.shift,.idle{color:var(--muted);margin:0}
.stopped{color:var(--bad);font-weight:600}
.waiting{color:var(--warn);font-weight:600}
.oee{display:flex;flex-direction:column}.oee .big{font-size:1.5rem;font-weight:700}
#detail{margin-top:1.5rem;border-top:1px solid #8884;padding-top:1rem}
#detail-head{display:flex;gap:1rem;align-items:center}
figure{margin:1rem 0}figcaption{font-weight:600}
.chart{width:100%;max-width:600px;height:auto;color:var(--accent)}
.chart text{fill:CanvasText}
.chart .above-nominal{color:var(--warn)}
.line{display:block}
.line.waiting{font-size:.9rem;font-weight:500}
.muted,.ends{color:var(--muted)}
.warn{color:var(--warn);font-weight:600}
.timeline{display:flex;flex-direction:column;gap:.25rem;margin:.25rem 0 .5rem}
.band{display:grid;grid-template-columns:2.75rem 1fr;column-gap:.5rem;align-items:center;font-size:.8rem}
.band-name{color:var(--muted)}
.track{position:relative;display:block;height:.9rem;border-radius:3px;box-shadow:inset 0 0 0 1px #8886;overflow:hidden}
.stretch{position:absolute;top:0;bottom:0}
.ends{grid-column:2;display:flex;justify-content:space-between;font-size:.75rem}
.s-running,.key-running{background:#2e7d32}
.s-down,.key-down{background:var(--bad)}
.s-planned,.key-planned{background:#7b61a8}
.s-no-data,.key-no-data{background:repeating-linear-gradient(135deg,#888b 0 2px,transparent 2px 5px)}
.s-not-scheduled,.key-not-scheduled{background:#8884}
.legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0 0 .75rem;font-size:.85rem}
.legend span{display:inline-flex;align-items:center;gap:.35rem}
.legend i{display:inline-block;width:1.1rem;height:.8rem;border-radius:2px;box-shadow:inset 0 0 0 1px #8886}
#detail-stops h3{font-size:1.05rem;margin:0 0 .5rem}
.stop-list{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:.5rem;max-width:40rem}
.stop-row{display:flex;flex-wrap:wrap;gap:.25rem .75rem;align-items:center;border:1px solid #8884;border-radius:6px;padding:.5rem .75rem}
.stop-row .reason{flex:1 1 12rem}
.reason.waiting{color:var(--warn);font-weight:600}
.origin{font-size:.8rem;border:1px solid #8886;border-radius:1rem;padding:0 .5rem}
.stop-row button,.reason-form select,.reason-form input{min-height:2.75rem;padding:.25rem .75rem}
.reason-form{flex-basis:100%;display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.5rem .75rem;align-items:center}
.reason-form select,.reason-form input{min-width:0;width:100%}
.reason-form .actions{grid-column:1/-1;display:flex;gap:.5rem}
.form-error{color:var(--bad);margin:0;grid-column:1/-1}
@media (max-width:30rem){.reason-form{grid-template-columns:1fr}}
`;

/** The board's HTML: the key form, the machine grid and the detail panel. */
export function boardPageHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Plant board · Production Monitoring</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg">
<style>${STYLE}</style>
<script src="${BOARD_SCRIPT_PATH}" defer></script>
</head>
<body data-event-kinds="${escapeAttribute(JSON.stringify(EVENT_KINDS))}">
<header>
<h1>Plant board</h1>
<span id="time-zone"></span>
<span id="status" role="status" aria-live="polite"></span>
<button id="change-key" type="button" hidden>Change key</button>
</header>
<main>
<form id="key-form">
<label for="key">API key</label>
<input id="key" name="key" type="password" autocomplete="off" required>
<button type="submit">Show the plant</button>
<p>The key stays in this browser tab (session storage) and is sent only as the
<code>x-api-key</code> header. It needs the read scopes of machines, signals, realtime,
reports and production logs; with <code>realtime.write</code> it can give a stop its reason.</p>
</form>
<p id="legend" class="legend" hidden></p>
<section id="machines" class="grid" aria-label="Machines" aria-busy="true"></section>
<section id="detail" hidden aria-labelledby="detail-title">
<div id="detail-head"><h2 id="detail-title"></h2>
<button id="close-detail" type="button">Close</button></div>
<div id="detail-stops" aria-labelledby="detail-stops-title"></div>
<div id="detail-charts"></div>
</section>
</main>
</body>
</html>
`;
}

/** Serves the board's script (with an ETag, as the /docs files). */
export function serveBoardScript(c: Context<AppEnv>): Promise<Response> {
  return serveText(c, "board.js", {
    text: boardScript,
    contentType: "text/javascript; charset=utf-8",
  });
}
