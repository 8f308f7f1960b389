/**
 * `npm run client:examples`: runs the four examples of clients/typescript/README.md
 * against a running Worker (`npm start`), through the package import the README shows
 * (`@production-monitoring/client`, an npm workspace of this repository), and prints what
 * each one answered; it fails when one answers nothing on the demo.
 *
 * The Worker is `$PM_URL`, else the one `npm start` runs (./lib/local-server.ts); the key `$PM_KEY`, else the demo's
 * "demo-full-access" key of Demo Plant A (`.wrangler/demo-keys.json`). Example 2 creates
 * two SKUs with codes of its own (`EXAMPLE-<time>-A`, `-B`), example 3 finds them, and the
 * script deletes them at the end, so the demo is left as it was. Exits 1 on an error.
 */
import { createClient, unwrap } from "@production-monitoring/client";
import { allSkuCodes } from "../clients/typescript/examples/all-skus";
import { createSkus } from "../clients/typescript/examples/create-skus";
import { hourlyPower } from "../clients/typescript/examples/hourly-power";
import { kpisCsv } from "../clients/typescript/examples/kpis-csv";
import { ASSET_0_POWER_ID, ASSET_0_UUID } from "./lib/demo-ids";
import { readDemoKeys } from "./lib/demo-seed";
import { resolveBaseUrl } from "./lib/local-server";

async function main(): Promise<number> {
  const baseUrl = resolveBaseUrl();
  const apiKey =
    process.env.PM_KEY ??
    readDemoKeys(baseUrl).find((k) => k.company === "Demo Plant A" && k.name === "demo-full-access")
      ?.key;
  if (!apiKey) {
    console.error(
      `No key for ${baseUrl}: set PM_KEY (eval "$(npm run --silent demo-env)") or run npm start.`,
    );
    return 2;
  }
  const client = createClient({ baseUrl, apiKey });
  const uuid = process.env.PM_MACHINE_UUID ?? ASSET_0_UUID;
  const powerId = process.env.PM_POWER_ID ?? ASSET_0_POWER_ID;

  const points = await hourlyPower(client, uuid, powerId);
  const first = points[0];
  const last = points[points.length - 1];
  console.log(
    `1. hourlyPower: ${points.length} hourly averages on 2022-09-05` +
      (first && last
        ? `, ${first[0]} (${first[1].toFixed(2)} kW) to ${last[0]} (${last[1].toFixed(2)} kW)`
        : ""),
  );

  const prefix = `EXAMPLE-${Date.now()}`;
  const ids = await createSkus(client, [`${prefix}-A`, `${prefix}-B`]);
  let codes: string[] = [];
  try {
    console.log(
      `2. createSkus: created ${ids.length} SKUs (${prefix}-A, ${prefix}-B): ${ids.join(", ")}`,
    );
    codes = await allSkuCodes(client, prefix);
    console.log(`3. allSkuCodes("${prefix}"): ${codes.join(", ")}`);
  } finally {
    for (const id of ids) {
      unwrap(await client.DELETE("/v1/skus/{sku_id}", { params: { path: { sku_id: id } } }));
    }
  }
  // The demo's recorded week (the same week is replayed onto the last 7 days).
  const csv = await kpisCsv(client, "2022-09-05T00:00:00Z", "2022-09-12T00:00:00Z");
  const [header = "", ...rows] = csv.trimEnd().split("\r\n");
  console.log(
    `4. kpisCsv: ${rows.length} rows (machine x SKU) of the week from 2022-09-05, ` +
      `${header.split(",").length} columns: ${header.split(",").slice(0, 6).join(",")},...`,
  );
  const empty = [
    ["1. hourlyPower", points.length],
    ["3. allSkuCodes", codes.length],
    ["4. kpisCsv", rows.length],
  ].filter(([, count]) => count === 0);
  if (empty.length > 0) {
    console.error(`No data from ${empty.map(([name]) => name).join(", ")}: is the demo loaded?`);
    return 1;
  }
  console.log(
    `Done: 4 examples ran against ${baseUrl}; the ${ids.length} SKUs of example 2 were deleted again.`,
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
