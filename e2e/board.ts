/**
 * `npm run e2e:board`: the plant board (`/board`) in a real browser, headless Debian
 * Chromium driven by playwright-core (no browser download: `/usr/bin/chromium`, installed
 * with `apt-get install chromium` when missing; `CHROMIUM_PATH` overrides the path).
 *
 * Against its own local Worker (fresh state, see stack.ts), it builds a plant in
 * Europe/Rome through the operator and public APIs: two machines running a 24-hour shift,
 * with `power` and `count` samples over the last 24 hours, a SKU write and an operator on
 * the first, an open stop on the second, a third whose counter has said no pieces for 12
 * minutes (a detected stop, which nobody recorded), a catalog of stop causes, and a bench
 * that runs no shift. The browser runs
 * in another zone (America/New_York). Then it loads the board, enters the key, and checks
 * what a person would: every time is the plant's (the update, the stop, the charts), not
 * the browser's; every machine is shown with its shift (a 24-hour one as such), SKU,
 * operator, production, OEE and stop ("Down since 14:05, reason not given"; a machine that
 * made nothing: "no production", not 0 %); the bench is not polled into an error every round;
 * a realtime write through the API shows on the board within 5 s (it follows the company's
 * stream events), and so do a stop that ended without a reason ("waiting for its reason") and
 * the reasons a scanner gives (`POST /v1/realtime/{machine_id}/stop-reason`); the keyboard
 * opens a machine, whose power and count plots and OEE per
 * shift are drawn; the page fits 390 px and 1,400 px without horizontal scrolling, and no
 * figure breaks across lines; the icon answers; a company without machines says so. It saves screenshots to
 * `docs/board.png` (1,400 px) and `docs/board-phone.png` (390 px, a reason being given).
 *
 * The reason queue: the second machine has 13 ended stops without a reason, every one listed
 * on its card (not "and 12 more"); its timeline shows a down stretch where its open stop is;
 * at 390 px (a phone at the machine) one of the 13 is given its reason from the page, which
 * the stops report (`POST /v1/reports/stops`) then shows, and the card keeps showing that
 * reason after the stop. The first machine, whose nominal speed is set below what it makes,
 * warns that it runs above its nominal speed.
 */
/// <reference lib="dom" />
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import type { components } from "../clients/typescript/src/generated/api";
import { PROJECT_ROOT, type Stack, startStack, stopStack } from "./stack";

type Api = components["schemas"];

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HOUR = 3_600_000;
const PLANT_ZONE = "Europe/Rome";
/** The browser's zone: not the plant's, so that a time in the browser's zone shows. */
const BROWSER_ZONE = "America/New_York";

/** `14:05` (or with `weekday`, `Thu 14:05`) of instant `ms` in `zone`, as the board writes it. */
function wallClock(ms: number, zone: string, weekday = false): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    hourCycle: "h23",
    hour: "2-digit",
    minute: "2-digit",
    ...(weekday ? { weekday: "short" } : {}),
  }).format(ms);
}

async function call<T>(
  stack: Stack,
  path: string,
  init: { method?: string; body?: unknown; key?: string } = {},
): Promise<T> {
  const headers: Record<string, string> = init.key
    ? { "x-api-key": init.key }
    : { authorization: `Bearer ${stack.operatorToken}` };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${stack.workerUrl}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

interface Plant {
  key: string;
  machines: { id: number; uuid: string; name: string }[];
  /** A machine that runs no shift. */
  bench: { id: number; name: string };
  skus: { id: string; sku: string }[];
  /** When the second machine's stop began, ms. */
  stopStart: number;
  /** A running machine whose count signal says no pieces since `detectedStart`. */
  capper: { id: number; name: string };
  detectedStart: number;
  /** The second machine's ended stops without a reason, oldest first. */
  queue: { id: number; start: number; end: number }[];
}

/** A company of its own with a key and no machine at all. */
async function emptyCompany(stack: Stack): Promise<string> {
  const [company] = await call<{ id: number }[]>(stack, "/operator/v1/companies", {
    body: [{ name: "Board Empty Plant", timezone: "Europe/Berlin" }],
  });
  if (!company) throw new Error("no company");
  const [apiKey] = await call<{ key: string }[]>(
    stack,
    `/operator/v1/companies/${company.id}/api-keys`,
    {
      body: [{ name: "board", scopes: ["machines.read", "production_logs.read", "realtime.read"] }],
    },
  );
  if (!apiKey) throw new Error("no key");
  return apiKey.key;
}

/** A company with two running machines, their signals, a SKU write, an operator and a stop. */
async function buildPlant(stack: Stack): Promise<Plant> {
  const [company] = await call<{ id: number }[]>(stack, "/operator/v1/companies", {
    body: [{ name: "Board Test Plant", timezone: PLANT_ZONE }],
  });
  if (!company) throw new Error("no company");
  const [apiKey] = await call<{ key: string }[]>(
    stack,
    `/operator/v1/companies/${company.id}/api-keys`,
    {
      body: [
        {
          name: "board",
          scopes: [
            "machines.read",
            "signals.read",
            "realtime.read",
            "realtime.write",
            "reports.read",
            "production_logs.read",
            "skus.create",
            "nominal_speeds.create",
            "operators.create",
          ],
          // "realtime.write" gives stop reasons too, as a scanner would.
          rateLimit: { requests: 100_000, periodSeconds: 60 },
        },
      ],
    },
  );
  if (!apiKey) throw new Error("no key");
  const key = apiKey.key;
  const [press, filler, bench, capper] = await call<{ id: number; uuid: string; name: string }[]>(
    stack,
    `/operator/v1/companies/${company.id}/machines`,
    {
      body: [{ name: "Press 1" }, { name: "Filler 2" }, { name: "Bench 3" }, { name: "Capper 4" }],
    },
  );
  if (!press || !filler || !bench || !capper) throw new Error("no machines");
  const machines = [press, filler];
  // 24-hour shifts: the instance of today runs now, whatever the hour; the bench has none.
  await call(stack, `/operator/v1/companies/${company.id}/shifts`, {
    body: [
      {
        name: "Day",
        startTime: "00:00",
        endTime: "00:00",
        machineIds: [press.id, filler.id, capper.id],
      },
    ],
  });
  const now = Date.now();
  // The capper's counter, every second: pieces, then none for the last 12 minutes. Nobody
  // records a stop: the machine tells it (a detected stop, open).
  const wholeSecond = Math.floor(now / 1000) * 1000;
  const detectedStart = wholeSecond - 12 * 60_000;
  const [capperCount] = await call<{ publicId: string }[]>(
    stack,
    `/operator/v1/machines/${capper.id}/signals`,
    { body: [{ name: "count", displayName: "Pieces", kind: "counter" }] },
  );
  if (!capperCount) throw new Error("no capper count signal");
  const capperTimes: string[] = [];
  const capperValues: number[] = [];
  for (let t = wholeSecond - 40 * 60_000; t <= wholeSecond; t += 1000) {
    capperTimes.push(new Date(t).toISOString());
    capperValues.push(t < detectedStart ? 1 : 0);
  }
  await call(stack, `/operator/v1/signals/${capperCount.publicId}/samples`, {
    body: { timestamps: capperTimes, values: capperValues },
  });
  for (const machine of machines) {
    const signals = await call<{ publicId: string; name: string }[]>(
      stack,
      `/operator/v1/machines/${machine.id}/signals`,
      {
        body: [
          { name: "power", displayName: "Power", kind: "analog" },
          { name: "count", displayName: "Pieces", kind: "counter" },
        ],
      },
    );
    for (const signal of signals) {
      const timestamps: string[] = [];
      const values: number[] = [];
      for (let t = now - 24 * HOUR; t < now; t += 60_000) {
        timestamps.push(new Date(t).toISOString());
        values.push(signal.name === "power" ? 3 + Math.sin(t / HOUR) : 10);
      }
      await call(stack, `/operator/v1/signals/${signal.publicId}/samples`, {
        body: { timestamps, values },
      });
    }
  }
  const skus = await call<{ id: string; sku: string }[]>(stack, "/v1/skus", {
    key,
    body: [
      { sku: "BOT-500", name: "Water 500 ml", unit: "bottles" },
      { sku: "BOT-1500", name: "Water 1.5 l", unit: "bottles" },
    ],
  });
  await call(stack, "/v1/nominal-speeds", {
    key,
    // The first machine makes 10 bottles a minute of the first SKU, set at 8: above its nominal speed.
    body: machines.flatMap((m) =>
      skus.map((s) => ({
        machine: { id: m.id },
        sku: { id: s.id },
        nominalSpeed: m === press && s === skus[0] ? 8 : 12,
      })),
    ),
  });
  const [operator] = await call<{ id: number }[]>(stack, "/v1/operators", {
    key,
    body: [{ firstName: "Ada", lastName: "Rossi" }],
  });
  const [first, second] = machines;
  if (!first || !second || !operator || !skus[0]) throw new Error("incomplete plant");
  const hourAgo = new Date(now - HOUR).toISOString();
  await call(stack, `/v1/realtime/${first.id}/sku`, {
    key,
    body: { skuId: skus[0].id, simpleWorkOrderName: "WO-7", start: hourAgo },
  });
  await call(stack, `/v1/realtime/${first.id}/operator`, {
    key,
    body: { operatorId: operator.id, start: hourAgo },
  });
  await call(stack, `/operator/v1/companies/${company.id}/stop-causes`, {
    body: [
      { kind: "generalCause", name: "Material shortage" },
      { kind: "generalCause", name: "Jam" },
      { kind: "specificCause", name: "Waiting for cartons" },
    ],
  });
  const stopStart = now - 10 * 60_000;
  await call(stack, `/operator/v1/machines/${second.id}/stops`, {
    body: [
      {
        startTime: new Date(stopStart).toISOString(),
        isProgrammed: false,
        isIncludedInAvailability: true,
        isIncludedInStops: true,
      },
    ],
  });
  // The second machine's queue: 13 stops of 3 minutes over the last 19 hours, no reason given.
  const queueSpans = Array.from({ length: 13 }, (_, i) => {
    const start = Math.floor((now - (19 - i) * HOUR) / 60_000) * 60_000;
    return { start, end: start + 3 * 60_000 };
  });
  const queued = await call<{ id: number }[]>(stack, `/operator/v1/machines/${second.id}/stops`, {
    body: queueSpans.map((q) => ({
      startTime: new Date(q.start).toISOString(),
      endTime: new Date(q.end).toISOString(),
      isProgrammed: false,
    })),
  });
  const queue = queueSpans.map((q, i) => ({ ...q, id: queued[i]?.id ?? 0 }));
  return { key, machines, bench, skus, stopStart, capper, detectedStart, queue };
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`board: ${message}`);
  console.log(`  ✓ ${message}`);
}

async function cardText(page: Page, machineId: number): Promise<string> {
  return page.locator(`[data-machine-id="${machineId}"]`).innerText();
}

async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: apt-get install chromium (or set CHROMIUM_PATH)`);
  }
  const stack = await startStack({});
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const plant = await buildPlant(stack);
    const [first, second] = plant.machines;
    if (!first || !second) throw new Error("no machines");
    const page = await browser.newPage({
      viewport: { width: 1400, height: 900 },
      timezoneId: BROWSER_ZONE,
    });
    check(
      (await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone)) ===
        BROWSER_ZONE,
      `the browser runs in ${BROWSER_ZONE}, the plant in ${PLANT_ZONE}`,
    );
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    let benchNoShift = 0;
    page.on("response", (response) => {
      if (response.url().endsWith(`/v1/realtime/${plant.bench.id}`) && response.status() === 409)
        benchNoShift += 1;
    });
    // The console's errors: a failed request is one ("Failed to load resource ... 409"). The
    // bench of this plant runs no shift, so its one 409 is the only one expected.
    const consoleErrors: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text());
    });
    await page.goto(`${stack.workerUrl}/`);
    await page.getByRole("link", { name: "Plant board" }).click();
    check(page.url().endsWith("/board"), "the landing page links the board");
    await page.getByLabel("API key").fill(plant.key);
    await page.getByRole("button", { name: "Show the plant" }).click();
    await page.locator(`[data-machine-id="${first.id}"] [data-field="oee"]`).waitFor();
    check(
      !(await page.evaluate(() => location.href)).includes(plant.key),
      "the key is not in the URL",
    );
    check(
      (await page.locator("#time-zone").innerText()).includes(PLANT_ZONE),
      "the header names the plant's zone",
    );
    const status = await page.locator("#status").innerText();
    const shown = /(\d\d:\d\d):\d\d/.exec(status)?.[1];
    const nowMs = Date.now();
    check(
      shown === wallClock(nowMs, PLANT_ZONE) || shown === wallClock(nowMs - 60_000, PLANT_ZONE),
      `"${status}" is the plant's time (${wallClock(nowMs, PLANT_ZONE)} in ${PLANT_ZONE}, ` +
        `${wallClock(nowMs, BROWSER_ZONE)} in the browser's)`,
    );
    const one = await cardText(page, first.id);
    check(one.includes("Press 1") && one.includes("Day"), "machine 1 shows its running shift");
    check(
      /Day, 24\sh from \w{3} 00:00/.test(one) && !one.includes("00:00–00:00"),
      "a 24-hour shift reads as such (24 h from 00:00 of the plant's day)",
    );
    check(
      one.includes("BOT-500") && one.includes("WO-7"),
      "machine 1 shows its SKU and work order",
    );
    check(one.includes("Ada Rossi"), "machine 1 shows its operator");
    check(/OEE \d+(\.\d)?\s%/.test(one), "machine 1 shows a live OEE in percent");
    check(/Availability \d/.test(one) && /Quality \d/.test(one), "with its three factors");
    check(/\d+\sbottles of \d+ at nominal speed/.test(one), "production against the nominal speed");
    const two = await cardText(page, second.id);
    const since = wallClock(plant.stopStart, PLANT_ZONE);
    check(
      two.includes(`Down since ${since}, reason not given`),
      `machine 2 shows "Down since ${since}, reason not given", the plant's time`,
    );
    check(one.includes("No open stop, none waiting for a reason"), "machine 1 has no stop to show");
    const queueLines = await Promise.all(
      plant.queue.map((q) =>
        page
          .locator(`[data-machine-id="${second.id}"] [data-field="stop"] [data-stop-id="${q.id}"]`)
          .innerText(),
      ),
    );
    check(
      plant.queue.every(
        (q, i) =>
          queueLines[i] ===
          `Stop ${wallClock(q.start, PLANT_ZONE)}–${wallClock(q.end, PLANT_ZONE)} waiting for its reason`,
      ) && !/\bmore\b/.test(two),
      `machine 2 lists each of its ${plant.queue.length} stops waiting for a reason, not "and ${plant.queue.length - 1} more"`,
    );
    const downStretch = page.locator(
      `[data-machine-id="${second.id}"] [data-band="day"] [data-state="down"]` +
        `[data-start="${new Date(plant.stopStart).toISOString()}"]`,
    );
    check(
      Date.parse((await downStretch.getAttribute("data-end")) ?? "") >=
        plant.stopStart + 9 * 60_000,
      "machine 2's timeline of the last 24 hours is down from its stop's start to now",
    );
    check(
      (await page.locator("#legend").innerText()).includes("Not scheduled"),
      "the legend names the timeline's classes",
    );
    check(
      /running above nominal speed: check the nominal speed/i.test(one) &&
        !/nominal speed: check/i.test(two),
      "machine 1, faster than its nominal speed, says so (and machine 2 does not)",
    );
    const detectedSince = wallClock(plant.detectedStart, PLANT_ZONE);
    await page
      .locator(`[data-machine-id="${plant.capper.id}"] [data-field="stop"]`)
      .filter({ hasText: `Down since ${detectedSince}, reason not given` })
      .waitFor({ timeout: 10_000 });
    check(
      true,
      `the capper, whose counter went silent, shows its detected stop: "Down since ${detectedSince}, reason not given"`,
    );
    check(
      /Quality no production/.test(two) && !/Quality 0\.0/.test(two),
      "machine 2, which made nothing, shows no production for its quality, not 0 %",
    );
    check(
      (await page.locator("[data-machine-id]").count()) === plant.machines.length + 2,
      "every machine is on the board",
    );
    check(
      (await cardText(page, plant.bench.id)).includes("No shift running now"),
      "the bench says it runs no shift",
    );
    check(await page.locator("#key-form").isHidden(), "the key form is hidden once the key is in");

    // A realtime write through the API shows within 5 s: the board follows the stream events
    // (polling alone comes every 15 s).
    const sku2 = plant.skus[1];
    if (!sku2) throw new Error("no second SKU");
    await call(stack, `/v1/realtime/${second.id}/sku`, {
      key: plant.key,
      body: { skuId: sku2.id, simpleWorkOrderName: "WO-9" },
    });
    await page
      .locator(`[data-machine-id="${second.id}"] [data-field="sku"]`)
      .filter({ hasText: "BOT-1500" })
      .waitFor({ timeout: 5_000 });
    check(
      (await cardText(page, second.id)).includes("WO-9"),
      "a realtime write shows on the board within 5 s (stream events)",
    );
    check(
      Number(await page.evaluate(() => document.body.dataset.liveEvents ?? "0")) > 0,
      "the board received the write as a stream event",
    );

    // A stop that ended without a reason shows as waiting for it within 5 s (stream events).
    const waitStart = Date.now() - 25 * 60_000;
    const waitEnd = Date.now() - 5 * 60_000;
    await call(stack, `/operator/v1/machines/${first.id}/stops`, {
      body: [
        {
          startTime: new Date(waitStart).toISOString(),
          endTime: new Date(waitEnd).toISOString(),
          isProgrammed: false,
        },
      ],
    });
    const waiting = `Stop ${wallClock(waitStart, PLANT_ZONE)}–${wallClock(waitEnd, PLANT_ZONE)} waiting for its reason`;
    await page
      .locator(`[data-machine-id="${first.id}"] [data-field="stop"]`)
      .filter({ hasText: waiting })
      .waitFor({ timeout: 5_000 });
    check(true, `machine 1 shows "${waiting}" within 5 s (stream events)`);

    // A polling round (every 15 s) passes: the bench, which runs no shift, is not asked again.
    await page.waitForTimeout(16_000);
    check(benchNoShift <= 1, `the bench is not polled into a 409 every round (${benchNoShift})`);
    const icon = await page.request.get(`${stack.workerUrl}/favicon.ico`);
    check(icon.status() === 200, "the icon answers (/favicon.ico)");

    // Keyboard: focus the first card, open it with Enter; its plots are drawn.
    await page.locator(`[data-machine-id="${first.id}"]`).focus();
    await page.keyboard.press("Enter");
    await page.locator('[data-chart="oee"] svg').waitFor();
    const power = await page.locator('[data-chart="power"] polyline').getAttribute("points");
    const count = await page.locator('[data-chart="count"] polyline').getAttribute("points");
    check((power?.split(" ").length ?? 0) >= 90, "the power plot is drawn (24 h at 15 min)");
    check((count?.split(" ").length ?? 0) >= 90, "the count plot is drawn");
    check((await page.locator('[data-chart="oee"] rect').count()) >= 1, "OEE per shift is drawn");
    const axisEnd =
      (await page.locator('[data-chart="power"] text[data-time="end"]').textContent()) ?? "";
    const lastBuckets = [0, 1, 2].map((k) =>
      wallClock((Math.floor(Date.now() / 900_000) - k) * 900_000, PLANT_ZONE, true),
    );
    check(
      lastBuckets.includes(axisEnd),
      `the power chart ends at ${axisEnd}, the plant's time (one of ${lastBuckets.join(", ")})`,
    );
    await page.screenshot({ path: join(PROJECT_ROOT, "docs", "board.png"), fullPage: true });

    // A scanner gives the reasons: the open stop of machine 2, the last stop of machine 1.
    await call(stack, `/v1/realtime/${second.id}/stop-reason`, {
      key: plant.key,
      body: {
        generalCause: { name: "Material shortage" },
        specificCause: { name: "Waiting for cartons" },
      },
    });
    await page
      .locator(`[data-machine-id="${second.id}"] [data-field="stop"]`)
      .filter({ hasText: `Down since ${since} · Material shortage · Waiting for cartons` })
      .waitFor({ timeout: 5_000 });
    check(true, "a reason given at machine 2 shows on its open stop within 5 s");
    await call(stack, `/v1/realtime/${first.id}/stop-reason`, {
      key: plant.key,
      body: { generalCause: { name: "Jam" } },
    });
    await page
      .locator(`[data-machine-id="${first.id}"] [data-field="stop"]`)
      .filter({ hasText: "No open stop, none waiting for a reason" })
      .waitFor({ timeout: 5_000 });
    check(true, "machine 1's stop no longer waits once its reason is given");
    await page.keyboard.press("Escape");
    check(await page.locator("#detail").isHidden(), "Escape closes the machine");
    check(await fitsWidth(page), "fits 1,400 px");

    await page.setViewportSize({ width: 390, height: 844 });
    check(await fitsWidth(page), "fits 390 px without horizontal scrolling");
    const broken = await page.evaluate(() =>
      Array.from(document.querySelectorAll(".fig"))
        .filter((node) => node.getClientRects().length > 1)
        .map((node) => node.textContent),
    );
    check(
      (await page.locator(".fig").count()) > 0 && broken.length === 0,
      `no figure breaks across lines at 390 px${broken.length ? `: ${broken.join(", ")}` : ""}`,
    );

    // A phone at the machine: the oldest stop of machine 2's queue gets its reason from the page.
    const [oldest] = plant.queue;
    if (!oldest) throw new Error("no queue");
    await page.locator(`[data-machine-id="${second.id}"]`).click();
    const row = page.locator(`#detail-stops li[data-stop-id="${oldest.id}"]`);
    await row.getByRole("button", { name: "Give reason" }).click();
    await row.getByLabel("General cause").selectOption({ label: "Material shortage" });
    await row.getByLabel("Specific cause").selectOption({ label: "Waiting for cartons" });
    await row.getByLabel("Note").fill("pallet late");
    check(await fitsWidth(page), "the reason form fits 390 px");
    await row.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(PROJECT_ROOT, "docs", "board-phone.png") });
    await row.getByRole("button", { name: "Save reason" }).click();
    await row
      .filter({ hasText: "Material shortage · Waiting for cartons (pallet late)" })
      .waitFor({ timeout: 5_000 });
    check(true, "a reason given from the page shows on the stop's row at once");
    const report = await call<Api["StopsReportPage"]>(stack, "/v1/reports/stops", {
      key: plant.key,
      body: { stopId: { include: [oldest.id] } },
    });
    const given = report.stops[0]?.classification;
    check(
      given?.generalCause.name === "Material shortage" &&
        given.specificCause.name === "Waiting for cartons" &&
        given.description === "pallet late",
      "the stops report shows the reason given from the board",
    );
    await page
      .locator(
        `[data-machine-id="${second.id}"] [data-field="reasons"] [data-stop-id="${oldest.id}"]`,
      )
      .filter({ hasText: "Material shortage" })
      .waitFor({ timeout: 5_000 });
    check(
      (await page
        .locator(
          `[data-machine-id="${second.id}"] [data-field="stop"] [data-stop-id="${oldest.id}"]`,
        )
        .count()) === 0,
      "machine 2's card no longer lists that stop as waiting, and shows its reason after the stop",
    );

    // A company without machines: the board says so.
    const empty = await browser.newPage({
      viewport: { width: 390, height: 844 },
      timezoneId: BROWSER_ZONE,
    });
    await empty.goto(`${stack.workerUrl}/board`);
    await empty.getByLabel("API key").fill(await emptyCompany(stack));
    await empty.getByRole("button", { name: "Show the plant" }).click();
    await empty.locator('[data-field="no-machines"]').waitFor();
    check(
      (await empty.locator("#machines").innerText()).includes("no machines"),
      "a company without machines says so",
    );
    check(
      (await empty.locator("#time-zone").innerText()).includes("Europe/Berlin"),
      "and gives its own zone (Europe/Berlin), not the browser's",
    );
    check(errors.length === 0, `no script error${errors.length ? `: ${errors.join("; ")}` : ""}`);
    const unexpected = consoleErrors.filter((text) => !/status of 409/.test(text));
    const conflicts = consoleErrors.length - unexpected.length;
    check(
      unexpected.length === 0 && conflicts <= benchNoShift,
      `no console error but the bench's 409 (${conflicts} of those${unexpected.length ? `; others: ${unexpected.join("; ")}` : ""})`,
    );
    console.log("Board: every check passed.");
  } finally {
    await browser.close();
    await stopStack(stack);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
