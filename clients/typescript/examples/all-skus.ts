import { type ProductionMonitoringClient, searchPages } from "../src/index.js";

/** Example 3: every SKU whose code contains `search`, page by page (100 rows a page). */
export async function allSkuCodes(
  client: ProductionMonitoringClient,
  search: string,
): Promise<string[]> {
  const codes: string[] = [];
  for await (const page of searchPages(client, "/v1/skus/filters", {
    limit: 100,
    skus: { search },
  })) {
    codes.push(...page.skus.map((row) => row.sku));
  }
  return codes;
}
