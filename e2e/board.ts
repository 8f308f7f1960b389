/**
 * `npm run e2e:board`: the plant board (`/board`) in a real browser, headless Debian
 * Chromium driven by playwright-core (no browser download: `/usr/bin/chromium`, installed
 * with `apt-get install chromium` when missing; `CHROMIUM_PATH` overrides the path).
 *
 * Against its own local Worker (fresh state, see stack.ts), it builds a plant through the
 * operator and public APIs: two machines running a 24-hour shift, with `power` and
 * `count` samples over the last 24 hours, a SKU write and an operator on the first, an
 * open stop on the second. Then it loads the board, enters the key, and checks what a
 * person would: every machine is shown with its shift, SKU, operator, production, OEE
 * and stop; a realtime write through the API shows on the board within 5 s (it follows the
 * company's live events); the
 * keyboard opens a machine, whose power and count plots and OEE per shift are drawn; the
 * page fits 390 px and 1,400 px without horizontal scrolling. It saves screenshots to
 * `docs/board.png` (1,400 px) and `docs/board-phone.png` (390 px).
 */
/// <reference lib="dom" />
import { existsSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { PROJECT_ROOT, type Stack, startStack, stopStack } from "./stack";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const HOUR = 3_600_000;

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
  skus: { id: string; sku: string }[];
}

/** A company with two running machines, their signals, a SKU write, an operator and a stop. */
async function buildPlant(stack: Stack): Promise<Plant> {
  const [company] = await call<{ id: number }[]>(stack, "/operator/v1/companies", {
    body: [{ name: "Board Test Plant", timezone: "Europe/Rome" }],
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
          rateLimit: { requests: 100_000, periodSeconds: 60 },
        },
      ],
    },
  );
  if (!apiKey) throw new Error("no key");
  const key = apiKey.key;
  const machines = await call<{ id: number; uuid: string; name: string }[]>(
    stack,
    `/operator/v1/companies/${company.id}/machines`,
    { body: [{ name: "Press 1" }, { name: "Filler 2" }] },
  );
  // 24-hour shifts: the instance of today runs now, whatever the hour.
  await call(stack, `/operator/v1/companies/${company.id}/shifts`, {
    body: [{ name: "Day", startTime: "00:00", endTime: "00:00" }],
  });
  const now = Date.now();
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
    body: machines.flatMap((m) =>
      skus.map((s) => ({ machine: { id: m.id }, sku: { id: s.id }, nominalSpeed: 12 })),
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
  await call(stack, `/operator/v1/machines/${second.id}/stops`, {
    body: [
      {
        startTime: new Date(now - 10 * 60_000).toISOString(),
        isProgrammed: false,
        isIncludedInAvailability: true,
        isIncludedInStops: true,
      },
    ],
  });
  return { key, machines, skus };
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
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
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
    const one = await cardText(page, first.id);
    check(one.includes("Press 1") && one.includes("Day"), "machine 1 shows its running shift");
    check(
      one.includes("BOT-500") && one.includes("WO-7"),
      "machine 1 shows its SKU and work order",
    );
    check(one.includes("Ada Rossi"), "machine 1 shows its operator");
    check(/OEE \d+(\.\d)? %/.test(one), "machine 1 shows a live OEE in percent");
    check(/Availability \d/.test(one) && /Quality \d/.test(one), "with its three factors");
    check(/\d+ bottles of \d+ at nominal speed/.test(one), "production against the nominal speed");
    const two = await cardText(page, second.id);
    check(/Stopped since \d\d:\d\d/.test(two), "machine 2 shows its open stop");
    check(
      (await page.locator("[data-machine-id]").count()) === plant.machines.length,
      "every machine is on the board",
    );
    check(await page.locator("#key-form").isHidden(), "the key form is hidden once the key is in");

    // A realtime write through the API shows within 5 s: the board follows the live events
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
      "a realtime write shows on the board within 5 s (live events)",
    );
    check(
      Number(await page.evaluate(() => document.body.dataset.liveEvents ?? "0")) > 0,
      "the board received the write as a live event",
    );

    // Keyboard: focus the first card, open it with Enter; its plots are drawn.
    await page.locator(`[data-machine-id="${first.id}"]`).focus();
    await page.keyboard.press("Enter");
    await page.locator('[data-chart="oee"] svg').waitFor();
    const power = await page.locator('[data-chart="power"] polyline').getAttribute("points");
    const count = await page.locator('[data-chart="count"] polyline').getAttribute("points");
    check((power?.split(" ").length ?? 0) >= 90, "the power plot is drawn (24 h at 15 min)");
    check((count?.split(" ").length ?? 0) >= 90, "the count plot is drawn");
    check((await page.locator('[data-chart="oee"] rect').count()) >= 1, "OEE per shift is drawn");
    await page.screenshot({ path: join(PROJECT_ROOT, "docs", "board.png"), fullPage: true });
    await page.keyboard.press("Escape");
    check(await page.locator("#detail").isHidden(), "Escape closes the machine");
    check(await fitsWidth(page), "fits 1,400 px");

    await page.setViewportSize({ width: 390, height: 844 });
    check(await fitsWidth(page), "fits 390 px without horizontal scrolling");
    await page.screenshot({ path: join(PROJECT_ROOT, "docs", "board-phone.png") });
    check(errors.length === 0, `no script error${errors.length ? `: ${errors.join("; ")}` : ""}`);
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
