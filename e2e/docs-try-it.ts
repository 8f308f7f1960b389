/**
 * `npm run e2e:docs`: "Try it out" on `/docs` in a real browser, on every operation, with the
 * demo key. Headless Debian Chromium driven by playwright-core (no browser download:
 * `/usr/bin/chromium`; `CHROMIUM_PATH` overrides the path).
 *
 * Against its own local Worker (fresh state, see stack.ts) loaded with Demo Plant A by the
 * demo seed (scripts/lib/demo-seed.ts, without Fleet B), it opens `/docs`, enters the
 * `demo-full-access` key in "Authorize", then, for each operation in the page's order,
 * expands it, presses "Try it out" and "Execute" without editing anything but what no
 * example can know (an export's id and file name, pasted from the earlier answers as a person
 * does; the export's GET pressed again until it has succeeded), and reads the status of the
 * request the page sent. It passes when every one is 2XX and the demo is as it
 * was before (every record of Demo Plant A and Asset 0's running shift compared, as
 * `npm run requests` does: scripts/lib/requests-restore.ts), and prints
 * `N of N operations answered 2XX; the demo as it was`. The examples it relies on are in
 * src/http/examples.ts, what the page fills in from earlier answers in
 * src/http/try-it-fills.ts; the fixed ids of the records they name in docs/demo-data.md.
 *
 * Options: `--url URL` runs against a Worker already loaded with the demo (for example the
 * one `npm start` runs, whose replay may begin a segment meanwhile: that is not counted as a
 * difference) instead of starting one; `--key KEY` is then its full-access key (default: from
 * `.wrangler/demo-keys.json`).
 */
/// <reference lib="dom" />
import { parseArgs } from "node:util";
import { chromium, type Page, type Response } from "playwright-core";
import { DEMO_PLANT_A } from "../scripts/lib/demo-data";
import { readDemoKeys, seedDemo } from "../scripts/lib/demo-seed";
import { connectOperator } from "../scripts/lib/operator-api";
import { compareWith, takeSnapshot } from "../scripts/lib/requests-restore";
import { EXAMPLE_OPERATOR_ID, EXAMPLE_RECORDS } from "../src/http/examples";
import { type Stack, startStack, stopStack } from "./stack";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FULL_ACCESS_KEY = "demo-full-access";
/** How long one operation may take to answer (an event stream answers with its headers). */
const ANSWER_TIMEOUT_MS = 30_000;

/** One operation as the page shows it, and what its Execute got. */
interface Outcome {
  method: string;
  path: string;
  status: number;
  body: string;
}

/** A regular expression of a templated path: `{name}` matches one segment. */
function pathPattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
  return new RegExp(`^${escaped}$`);
}

/** Enters the key in Swagger UI's "Authorize" dialog, as a person does. */
async function authorize(page: Page, key: string): Promise<void> {
  await page.locator("button.authorize").first().click();
  const dialog = page.locator(".dialog-ux .modal-ux");
  const section = dialog.locator(".auth-container").filter({ hasText: "ApiKeyAuth" });
  await section.locator("input").fill(key);
  await section.locator("button.authorize").click();
  await dialog.locator("button.close-modal").click();
}

/**
 * What a person pastes from an earlier answer into a path parameter that has no example: an
 * export's id from `POST /v1/exports`, and its first file's name from
 * `GET /v1/exports/{export_id}` once the export has succeeded (docs/exports.md).
 */
type Pasted = Record<string, string>;

/** How long an export of the example may take to succeed: its GET is sent again until then. */
const EXPORT_WAIT_MS = 120_000;

/**
 * Expands one operation, presses "Try it out", types what was `pasted` into its empty path
 * parameters, presses "Execute" (again every half second while an export is still running, as
 * a person following it does, or after a 503 that asks to try again), and returns what it
 * got; notes in `pasted` what a later operation needs from the answer.
 */
async function tryOperation(page: Page, index: number, pasted: Pasted): Promise<Outcome> {
  const block = page.locator(".opblock").nth(index);
  const method = (await block.locator(".opblock-summary-method").innerText()).trim();
  const path = (await block.locator(".opblock-summary-path").getAttribute("data-path")) ?? "";
  await block.locator(".opblock-summary").first().click();
  // `.reset` is the Reset of a body the page filled in (src/http/docs-page.ts), not Try it out.
  await block.locator("button.try-out__btn:not(.reset)").click();
  for (const [name, value] of Object.entries(pasted)) {
    const input = block.locator(`tr[data-param-name="${name}"][data-param-in="path"] input`);
    if ((await input.count()) === 1 && (await input.inputValue()) === "") await input.fill(value);
  }
  const pattern = pathPattern(path);
  const deadline = Date.now() + EXPORT_WAIT_MS;
  let outcome: Outcome;
  for (;;) {
    const answered = page.waitForResponse(
      (response: Response) =>
        response.request().method() === method && pattern.test(new URL(response.url()).pathname),
      { timeout: ANSWER_TIMEOUT_MS },
    );
    await block.locator("button.execute").click();
    const response = await answered;
    const stream = (response.headers()["content-type"] ?? "").startsWith("text/event-stream");
    const body = stream ? "(event stream)" : await response.text().catch(() => "");
    outcome = { method, path, status: response.status(), body };
    const running = path === "/v1/exports/{export_id}" && !/"state":"succeeded"/.test(body);
    // A 503 with Retry-After says nothing was done, to try again: `wrangler dev`'s proxy lost
    // the request (docs/demo-data.md); a person presses Execute again.
    const retry = outcome.status === 503 && response.headers()["retry-after"] !== undefined;
    if (!(retry || (running && outcome.status === 200)) || Date.now() > deadline) break;
    await page.waitForTimeout(500);
  }
  if (
    outcome.status >= 200 &&
    outcome.status < 300 &&
    method === "POST" &&
    path === "/v1/exports"
  ) {
    pasted.export_id = (JSON.parse(outcome.body) as { id: string }).id;
  }
  if (outcome.status === 200 && path === "/v1/exports/{export_id}") {
    const [file] = (JSON.parse(outcome.body) as { files?: { name: string }[] }).files ?? [];
    if (file) pasted.file_name = file.name;
  }
  // Collapse it again: an open event stream stays open in its block, harmless to the others.
  await block.locator(".opblock-summary").first().click();
  return outcome;
}

/** Its own Worker with Demo Plant A, stopped again when loading it fails. */
async function seededWorker(): Promise<{ stack: Stack; key: string }> {
  const stack = await startStack({});
  try {
    const client = connectOperator(stack.workerUrl, stack.operatorToken);
    console.log(`Loading ${DEMO_PLANT_A} into ${stack.workerUrl} ...`);
    const { keys } = await seedDemo(client, () => {}, {
      companies: [DEMO_PLANT_A],
      saveKeys: false,
    });
    const key = keys.find((k) => k.company === DEMO_PLANT_A && k.name === FULL_ACCESS_KEY)?.key;
    if (!key) throw new Error(`The seed issued no ${FULL_ACCESS_KEY} key`);
    await playAssetZero(stack.workerUrl, key);
    return { stack, key };
  } catch (error) {
    await stopStack(stack);
    throw error;
  }
}

/**
 * Asset 0 (machine 1) making a SKU with an operator from now on, as it does on the demo that
 * `npm start` plays live: the realtime examples of the page are filled in from what the
 * machine does (src/http/try-it-fills.ts), and a machine that does nothing leaves their
 * static examples, which change it. The seed alone plays nothing.
 */
async function playAssetZero(baseUrl: string, key: string): Promise<void> {
  const writes: [string, unknown][] = [
    ["/v1/realtime/1/sku", { skuId: EXAMPLE_RECORDS.sku }],
    [
      "/v1/realtime/1/operator",
      { operatorId: EXAMPLE_OPERATOR_ID, start: new Date().toISOString() },
    ],
  ];
  for (const [path, body] of writes) {
    const res = await fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { url: { type: "string" }, key: { type: "string" } } });
  let stack: Stack | undefined;
  let baseUrl: string;
  let key: string;
  if (values.url) {
    baseUrl = values.url.replace(/\/+$/, "");
    const saved = readDemoKeys(baseUrl).find(
      (k) => k.company === DEMO_PLANT_A && k.name === FULL_ACCESS_KEY,
    );
    const given = values.key ?? saved?.key;
    if (!given) throw new Error(`No --key, and no ${FULL_ACCESS_KEY} key saved for ${baseUrl}`);
    key = given;
  } else {
    const seeded = await seededWorker();
    stack = seeded.stack;
    baseUrl = stack.workerUrl;
    key = seeded.key;
  }
  // Asset 0 (machine 1): the machine of the realtime examples.
  const target = { baseUrl, key };
  const before = await takeSnapshot(target, 1);
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${baseUrl}/docs`);
    await page.locator(".opblock").first().waitFor();
    await authorize(page, key);
    const count = await page.locator(".opblock").count();
    const outcomes: Outcome[] = [];
    const pasted: Pasted = {};
    for (let i = 0; i < count; i++) {
      const outcome = await tryOperation(page, i, pasted);
      outcomes.push(outcome);
      const ok = outcome.status >= 200 && outcome.status < 300;
      console.log(`${ok ? "ok  " : "FAIL"} ${outcome.status} ${outcome.method} ${outcome.path}`);
      if (!ok) console.log(`     ${outcome.body.slice(0, 400)}`);
    }
    const passed = outcomes.filter((o) => o.status >= 200 && o.status < 300).length;
    const { differences, checked } = await compareWith(target, before, {
      replayRuns: stack === undefined,
    });
    console.log(
      `${passed} of ${outcomes.length} operations answered 2XX; ` +
        (differences.length === 0
          ? `the demo as it was (checked: ${checked}).`
          : `the demo differs: ${differences.join("; ")}.`),
    );
    if (errors.length > 0) console.log(`Script errors on the page: ${errors.join("; ")}`);
    if (
      passed !== outcomes.length ||
      outcomes.length === 0 ||
      errors.length > 0 ||
      differences.length > 0
    ) {
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
    if (stack) await stopStack(stack);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
