/**
 * The DuckDB query of docs/api-guide.md ("Reading an export"), run as the document shows it
 * over a metrics export's files downloaded as its shell recipe does, against the metrics
 * report's JSON rows aggregated by hand.
 */

import { describe, expect, it } from "vitest";
import guide from "../../docs/api-guide.md?raw";
import type { Api } from "../fixtures/api-types";
import { download, duckdbSql, finishExport, startExport } from "../fixtures/export-harness";
import { api, createCompany, createMachines, operatorJson } from "../harness";

/** The code block after `<!-- snippet: name -->` in a document. */
function snippet(doc: string, name: string): string {
  const block = new RegExp(`<!-- snippet: ${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(
    doc,
  );
  if (!block?.[1]) throw new Error(`no snippet ${name}`);
  return block[1];
}

type MetricsRow = Api["MetricsReportRow"];

describe("docs/api-guide.md, Reading an export", () => {
  it("runs its DuckDB query over the export's files: OEE by machine and month", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [press, lathe] = (
      await createMachines(co.id, [{ name: "Press" }, { name: "Lathe" }])
    ).map((m) => m.id);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "06:00", endTime: "18:00" },
    ]);
    const [sku] = (await (
      await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "B-1" }] })
    ).json()) as { id: string }[];
    const logs = [];
    for (let day = 1; day <= 70; day += 3) {
      const date = new Date(Date.UTC(2026, 0, day)).toISOString().slice(0, 10);
      logs.push(
        {
          machine: { id: press },
          sku: { id: sku?.id },
          start: `${date}T06:00:00Z`,
          end: `${date}T14:00:00Z`,
          count: 4000 + day,
          nominalSpeed: 10,
        },
        {
          machine: { id: lathe },
          sku: { id: sku?.id },
          start: `${date}T08:00:00Z`,
          end: `${date}T18:00:00Z`,
          count: 5000 - day,
          nominalSpeed: 9.5,
        },
      );
    }
    const created = await api(co.key, "/v1/production-logs", { method: "POST", json: logs });
    expect(created.status, await created.clone().text()).toBe(200);
    const filters = {
      startDate: { between: { start: "2026-01-01T00:00:00Z", end: "2026-03-12T00:00:00Z" } },
    };

    const done = await finishExport(
      co.key,
      co.id,
      (await startExport(co.key, { dataset: "metrics", filters, rowsPerFile: 10_000 })).id,
    );
    const files: Record<string, Uint8Array> = {};
    for (const file of done.files) files[`export/${file.name}`] = await download(co.key, file);
    const answer = await duckdbSql(snippet(guide, "duckdb-export"), files);
    expect(answer.columns.map((c) => c.name)).toEqual(["machine", "month", "shifts", "oee"]);

    // The same from the report's JSON pages.
    const rows: MetricsRow[] = [];
    for (let page = 1; ; page++) {
      const res = await api(co.key, "/v1/reports/metrics", {
        method: "POST",
        json: { ...filters, page, limit: 100 },
      });
      const body = (await res.json()) as { metrics: MetricsRow[]; totalPages: number };
      rows.push(...body.metrics);
      if (page >= body.totalPages) break;
    }
    const groups = new Map<string, number[]>();
    for (const r of rows) {
      const key = `${r.machine.name}|${Date.UTC(Number(r.shift.startTime.slice(0, 4)), Number(r.shift.startTime.slice(5, 7)) - 1)}`;
      const { oee } = r.productionMetrics;
      // Every shift of the example ran: each has an OEE (null only without planned time).
      if (oee === null) throw new Error(`no OEE for ${key}`);
      groups.set(key, [...(groups.get(key) ?? []), oee]);
    }
    const expected = [...groups]
      .map(([key, oees]) => {
        const [machine = "", month = ""] = key.split("|");
        const mean = oees.reduce((a, b) => a + b, 0) / oees.length;
        return [machine, Number(month), String(oees.length), Math.round(mean * 1000) / 1000];
      })
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1]));
    expect(answer.rows.map((r) => [r[0], Number(r[1]), r[2], r[3]])).toEqual(expected);
    expect(expected).toHaveLength(6);
  });
});
