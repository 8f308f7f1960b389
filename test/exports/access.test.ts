/**
 * Who may start and read an export, and what a start refuses: each dataset needs the `read`
 * scope of its section (to start it, and to read its state and files), another company's
 * export is a 404, and a request the export could not serve is a 422 at once, naming why.
 */
import { describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { DATASET_SCOPES, EXPORT_DATASETS } from "../../src/exports/schemas";
import { finishExport, startExport } from "../fixtures/export-harness";
import {
  api,
  call,
  createCompany,
  createKey,
  createMachines,
  createSignal,
  ingest,
} from "../harness";

const T0 = Date.UTC(2026, 1, 2);
const window = (days: number) => ({
  start_time: new Date(T0).toISOString(),
  end_time: new Date(T0 + days * 86_400_000).toISOString(),
});

/** A valid request of each dataset for a company with one signal. */
function requests(signal: string): Record<string, object> {
  return {
    signals: { dataset: "signals", filters: { signals: [signal], ...window(1) } },
    production_logs: { dataset: "production_logs", filters: { isReviewed: false } },
    stops: { dataset: "stops" },
    metrics: { dataset: "metrics", format: "csv" },
    kpis: { dataset: "kpis", filters: { groupBy: ["machine"] } },
  };
}

async function company() {
  const co = await createCompany();
  const uuid = crypto.randomUUID();
  const [machine] = await createMachines(co.id, [{ name: "Press", uuid }]);
  const signal = await createSignal(machine?.id ?? 0, { name: "power" });
  await ingest(signal, [[T0 + 1000, 1.5]]);
  return { co, uuid, signal };
}

async function expect422(res: Response, issues: { loc: unknown[]; type?: string }[]) {
  const body = (await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] };
  expect(res.status, JSON.stringify(body)).toBe(422);
  for (const issue of issues) {
    expect(body.detail).toContainEqual(expect.objectContaining(issue));
  }
}

describe("export scopes", () => {
  it("starts each dataset with its section's read scope only, and refuses a key without it", async () => {
    const { co, signal } = await company();
    for (const dataset of EXPORT_DATASETS) {
      const scope = DATASET_SCOPES[dataset];
      const body = requests(signal)[dataset];
      const without = await createKey(
        co.id,
        ALL_SCOPES.filter((s) => s !== scope),
      );
      const refused = await api(without, "/v1/exports", { method: "POST", json: body });
      expect(refused.status, dataset).toBe(403);
      expect(await refused.json()).toEqual({
        detail: `Not enough permissions. Missing scope: ${scope}`,
      });
      // The scope is checked before the body: a key without it learns nothing of the filters.
      const invalid = await api(without, "/v1/exports", {
        method: "POST",
        json: { ...body, filters: { nonsense: true } },
      });
      expect(invalid.status, dataset).toBe(403);
      const only = await createKey(co.id, [scope]);
      const started = await startExport(only, body);
      expect(started.dataset).toBe(dataset);
      expect((await finishExport(only, co.id, started.id)).state).toBe("succeeded");
    }
  });

  it("reads an export's state and files with its dataset's scope; another company gets a 404", async () => {
    const { co } = await company();
    const done = await finishExport(
      co.key,
      co.id,
      (await startExport(co.key, { dataset: "metrics" })).id,
    );
    const file = done.files[0]?.url ?? "";
    const paths = [`/v1/exports/${done.id}`, file];

    for (const path of paths) {
      expect((await call(path)).status).toBe(401);
      const without = await createKey(
        co.id,
        ALL_SCOPES.filter((s) => s !== "reports.read"),
      );
      const refused = await api(without, path);
      expect(refused.status, path).toBe(403);
      expect(await refused.json()).toEqual({
        detail: "Not enough permissions. Missing scope: reports.read",
      });
      const only = await createKey(co.id, ["reports.read"]);
      expect((await api(only, path)).status, path).toBe(200);
    }

    const intruder = await createCompany();
    for (const path of paths) {
      const res = await api(intruder.key, path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ detail: "Export not found" });
    }
    // An id in another case is the same export; a malformed one is a 422.
    expect((await api(co.key, `/v1/exports/${done.id.toUpperCase()}`)).status).toBe(200);
    await expect422(await api(co.key, "/v1/exports/not-an-id"), [{ loc: ["path", "export_id"] }]);
  });
});

describe("what a start refuses at once", () => {
  it("names the unknown machines and signals of a signal export", async () => {
    const { co, uuid, signal } = await company();
    const other = await company();
    const res = await api(co.key, "/v1/exports", {
      method: "POST",
      json: {
        dataset: "signals",
        filters: {
          machines: [uuid, other.uuid],
          signals: [signal.toUpperCase(), other.signal, crypto.randomUUID()],
          ...window(1),
        },
      },
    });
    await expect422(res, [
      { loc: ["body", "filters", "machines", 1], type: "not_found" },
      { loc: ["body", "filters", "signals", 1], type: "not_found" },
      { loc: ["body", "filters", "signals", 2], type: "not_found" },
    ]);
  });

  it("refuses bodies that are not an export", async () => {
    const { co, signal } = await company();
    const post = (json: unknown) => api(co.key, "/v1/exports", { method: "POST", json });
    await expect422(await post({ dataset: "skus" }), [{ loc: ["body", "dataset"] }]);
    await expect422(await post({ dataset: "metrics", format: "xlsx" }), [
      { loc: ["body", "format"] },
    ]);
    // An export holds every row: page and limit are not its filters.
    await expect422(await post({ dataset: "metrics", filters: { page: 2 } }), [
      { loc: ["body", "filters", "page"], type: "extra_forbidden" },
    ]);
    await expect422(await post({ dataset: "stops", rowsPerFile: 10 }), [
      { loc: ["body", "rowsPerFile"] },
    ]);
    await expect422(await post({ dataset: "signals", filters: window(1) }), [
      { loc: ["body", "filters", "signals"] },
    ]);
    await expect422(
      await post({
        dataset: "signals",
        filters: {
          signals: [signal],
          start_time: window(1).end_time,
          end_time: window(1).start_time,
        },
      }),
      [{ loc: ["body", "filters", "end_time"] }],
    );
  });

  it("refuses an export larger than its bounds, before any work", async () => {
    const { co, signal } = await company();
    // Ten years of 1-second points is 315 million: more than 100 million rows.
    const res = await api(co.key, "/v1/exports", {
      method: "POST",
      json: { dataset: "signals", filters: { signals: [signal], ...window(3650) } },
    });
    await expect422(res, [{ loc: ["body", "filters", "end_time"], type: "export_too_large" }]);
    // With small files the bound is 1,000 files: 10,000-row files hold 10 million rows.
    const small = await api(co.key, "/v1/exports", {
      method: "POST",
      json: {
        dataset: "signals",
        rowsPerFile: 10_000,
        filters: { signals: [signal], ...window(200) },
      },
    });
    await expect422(small, [{ loc: ["body", "filters", "end_time"], type: "export_too_large" }]);
    // The same window in minutes is fine.
    await startExport(co.key, {
      dataset: "signals",
      filters: { signals: [signal], ...window(3650), agg_unit: "m" },
    });
  });
});
