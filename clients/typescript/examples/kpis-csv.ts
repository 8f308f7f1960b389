import type { ProductionMonitoringClient } from "../src/index.js";

/**
 * Example 4: the KPIs by machine and SKU of the shifts that start between `start` and `end`
 * (ISO 8601), as CSV text for a spreadsheet: every group (not one page), a header row,
 * nested fields as dotted columns.
 */
export async function kpisCsv(
  client: ProductionMonitoringClient,
  start: string,
  end: string,
): Promise<string> {
  const { response } = await client.POST("/v1/reports/kpis", {
    body: { groupBy: ["machine", "sku"], startDate: { between: { start, end } } },
    headers: { accept: "text/csv" },
    // The client is typed with the JSON answers: take the CSV text from the response itself.
    parseAs: "stream",
  });
  if (!response.ok) throw new Error(`KPIs as CSV: ${response.status}: ${await response.text()}`);
  return response.text();
}
