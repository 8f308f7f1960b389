import type { ProductionMonitoringClient } from "../src/index";

/**
 * Example 4: the KPIs of March 2026 by machine and SKU, as CSV text for a spreadsheet:
 * every group (not one page), a header row, nested fields as dotted columns.
 */
export async function kpisCsv(client: ProductionMonitoringClient): Promise<string> {
  const { response } = await client.POST("/v1/reports/kpis", {
    body: {
      groupBy: ["machine", "sku"],
      startDate: { between: { start: "2026-03-01T00:00:00Z", end: "2026-03-31T23:59:59Z" } },
    },
    headers: { accept: "text/csv" },
    // The client is typed with the JSON answers: take the CSV text from the response itself.
    parseAs: "stream",
  });
  if (!response.ok) throw new Error(`KPIs as CSV: ${response.status}: ${await response.text()}`);
  return response.text();
}
