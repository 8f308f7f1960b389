/**
 * requests/exports.http runs as a person would run it: it starts an export of the demo's
 * power, sends the export's GET again until it has succeeded, and downloads its first file
 * with the name that answer gave. The company's exports object's alarm is also run after
 * each GET, standing in for Cloudflare running it between a person's clicks (the pool runs
 * alarms on its own too, so this small export may be done at the first GET; the polling
 * itself is tested in collection.test.ts).
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import exportsFile from "../../requests/exports.http?raw";
import { ASSET_0_POWER_ID } from "../../scripts/lib/demo-ids";
import { parseHttpFile, runHttpFile } from "../../scripts/lib/http-files";
import { exportsStub } from "../fixtures/export-harness";
import { call, createCompany, ingest, operatorJson } from "../harness";

describe("requests/exports.http", () => {
  it("starts an export, follows it to its end and downloads its file", async () => {
    const co = await createCompany();
    const [machine] = await operatorJson<{ id: number }[]>("POST", `/companies/${co.id}/machines`, [
      { name: "Asset 0" },
    ]);
    await operatorJson("POST", `/machines/${machine?.id}/signals`, [
      { name: "power", displayName: "Power", kind: "analog", publicId: ASSET_0_POWER_ID },
    ]);
    const t0 = Date.parse("2022-09-05T06:00:00Z");
    await ingest(ASSET_0_POWER_ID, [
      [t0, 2],
      [t0 + 60_000, 3],
      [t0 + 3_600_000, 4],
    ]);
    const sent: string[] = [];
    let lastBody = new Uint8Array();
    let exportState = "";
    const send = async (request: Request) => {
      const path = new URL(request.url).pathname;
      sent.push(`${request.method} ${path}`);
      const res = await call(path, request);
      if (/^\/v1\/exports\/[^/]+$/.test(path)) {
        exportState = ((await res.clone().json()) as { state: string }).state;
        await runDurableObjectAlarm(exportsStub(co.id));
      }
      lastBody = new Uint8Array(await res.clone().arrayBuffer());
      return res;
    };
    const results = await runHttpFile(parseHttpFile(exportsFile), send, {
      env: { PM_KEY: co.key, PM_URL: "http://api.test" },
      until: { pollMs: 1, timeoutMs: 30_000 },
    });
    expect(results.map((r) => `${r.status} ${r.method}`)).toEqual([
      "202 POST",
      "200 GET",
      "200 GET",
    ]);
    expect(exportState).toBe("succeeded");
    expect(sent.at(-1)).toMatch(/^GET \/v1\/exports\/[0-9a-f-]{36}\/files\/part-00001\.parquet$/);
    // A Parquet file: its magic bytes at both ends.
    const magic = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    expect(magic(lastBody.subarray(0, 4))).toBe("PAR1");
    expect(magic(lastBody.subarray(-4))).toBe("PAR1");
  });
});
