import { type ProductionMonitoringClient, unwrap } from "../src/index.js";

/**
 * Example 2: creates SKUs in one call. The client gives the call an Idempotency-Key and
 * keeps it when it retries a 429 or 5XX, so the SKUs are created once whatever happens.
 */
export async function createSkus(
  client: ProductionMonitoringClient,
  codes: string[],
): Promise<string[]> {
  const created = unwrap(
    await client.POST("/v1/skus", {
      body: codes.map((sku) => ({ sku, name: `Product ${sku}` })),
    }),
  );
  return created.map((row) => row.id);
}
