/**
 * A partner's code against the client, as its README shows it: imported by the package's name
 * and compiled by a plain `tsc` project of each kind (tsconfig.nodenext.json,
 * tsconfig.bundler.json in this folder; `npm run typecheck` runs both). It is compiled, not run.
 */
import { createClient, type SearchPath, searchPages, unwrap } from "@production-monitoring/client";
import { allSkuCodes } from "../examples/all-skus.js";
import { createSkus } from "../examples/create-skus.js";
import { hourlyPower } from "../examples/hourly-power.js";
import { kpisCsv } from "../examples/kpis-csv.js";

const client = createClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "pm_..." });
const machines: { id: number; name: string }[] = unwrap(await client.GET("/v1/machines"));

// searchPages takes the searches' paths (a path of another kind is refused), and its pages
// are typed by the path.
const skuSearch: SearchPath = "/v1/skus/filters";
// @ts-expect-error `/v1/machines` is not a search
const notASearch: SearchPath = "/v1/machines";
for await (const page of searchPages(client, skuSearch, { limit: 100 })) {
  const codes: string[] = page.skus.map((sku) => sku.sku);
  console.log(codes, machines.length, notASearch);
}

const points: [string, number][] = await hourlyPower(client, "uuid", "public-id");
const ids: string[] = await createSkus(client, ["A"]);
const codes: string[] = await allSkuCodes(client, "A");
const csv: string = await kpisCsv(client, "2022-09-05T00:00:00Z", "2022-09-12T00:00:00Z");
console.log(points, ids, codes, csv);
