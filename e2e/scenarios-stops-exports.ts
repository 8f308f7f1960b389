/**
 * Scenario steps of the end-to-end suite for the routes added after the first round: a
 * machine's recent stops and the reason given to one at the machine, and a bulk export
 * started, followed to its end and downloaded (whole and by range). Like every step, each
 * call goes through Prism, so the answers are checked against the document too.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { expectData, expectStatus, type Step } from "./scenario-kit";

/** How long an export of a few rows may take to succeed in `wrangler dev` (2 cores, loaded). */
const EXPORT_WAIT_MS = 60_000;

export const STOP_AND_EXPORT_STEPS: Step[] = [
  {
    name: "realtime stops: recent stops, give a reason",
    async run({ full, machines }) {
      const machine_id = machines.line1.id;
      // The seed's two stops of line 1 ended less than 24 hours ago: both are recent.
      const recent = expectData(
        await full.GET("/v1/realtime/{machine_id}/stops", { params: { path: { machine_id } } }),
        200,
      );
      assert.equal(recent.stops.length, 2, "line 1's two seeded stops are recent");
      assert.ok(
        recent.causes.generalCauses.some((cause) => cause.name === "Mechanical"),
        "the catalog holds the cause the operator's classification named",
      );
      const classified = recent.stops.find(
        (row) => row.classification.generalCause?.name === "Mechanical",
      );
      assert.ok(classified, "the classified stop is listed with its reason");
      const row = expectData(
        await full.POST("/v1/realtime/{machine_id}/stop-reason", {
          params: { path: { machine_id }, header: { "Idempotency-Key": randomUUID() } },
          body: {
            stopId: classified.stop.id,
            generalCause: { name: "Mechanical" },
            specificCause: { name: "Bottle jam" },
            description: "Jam cleared at the machine",
          },
        }),
        200,
      );
      assert.equal(row.stop.id, classified.stop.id);
      assert.equal(row.classification.description, "Jam cleared at the machine");
      // The reason replaces the whole classification: the component given before is gone.
      assert.deepEqual(row.classification.component, { id: null, name: null });
    },
  },
  {
    name: "exports: start, follow, download (whole and a range)",
    async run({ full, machines }) {
      const started = await full.POST("/v1/exports", {
        params: { header: { "Idempotency-Key": randomUUID() } },
        body: {
          dataset: "production_logs",
          format: "csv",
          filters: { machines: { include: [machines.line1.id] } },
        },
      });
      const created = expectData(started, 202);
      assert.equal(started.response.headers.get("Location"), `/v1/exports/${created.id}`);
      const export_id = created.id;
      const deadline = Date.now() + EXPORT_WAIT_MS;
      let current = created;
      while (current.state === "queued" || current.state === "running") {
        assert.ok(
          Date.now() < deadline,
          `export still ${current.state} after ${EXPORT_WAIT_MS} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
        current = expectData(
          await full.GET("/v1/exports/{export_id}", { params: { path: { export_id } } }),
          200,
        );
      }
      assert.equal(current.state, "succeeded", `export ended ${current.error ?? ""}`);
      // The export holds every row the endpoint's own filters give.
      const listed = expectData(
        await full.POST("/v1/production-logs/filters", {
          body: { machines: { include: [machines.line1.id] }, limit: 100 },
        }),
        200,
      );
      assert.ok(listed.totalCount >= 1, "the earlier steps left line 1 production logs");
      assert.equal(current.rows, listed.totalCount);
      const [file] = current.files;
      assert.ok(file, "the export lists its file");
      const path = { export_id, file_name: file.name };
      const whole = await full.GET("/v1/exports/{export_id}/files/{file_name}", {
        params: { path },
        parseAs: "text",
      });
      expectStatus(whole, 200);
      const text = String(whole.data);
      assert.equal(new TextEncoder().encode(text).length, file.bytes);
      assert.equal(
        text.trimEnd().split(/\r?\n/).length,
        1 + listed.totalCount,
        "a header row and a row a log",
      );
      const part = await full.GET("/v1/exports/{export_id}/files/{file_name}", {
        params: { path },
        headers: { Range: "bytes=0-9" },
        parseAs: "text",
      });
      expectStatus(part, 206);
      assert.equal(String(part.data), text.slice(0, 10));
    },
  },
];
