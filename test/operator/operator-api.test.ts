import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SHARD_CACHE_MS } from "../../src/db/shards";
import type { Api, CreatedCompany, IssuedKey, OperatorSchemas } from "../fixtures/api-types";
import {
  api,
  call,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  OPERATOR_TOKEN,
  operator,
  operatorJson,
} from "../harness";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("operator authentication", () => {
  it("answers 401 without the token, with a wrong one, and with a public credential", async () => {
    const co = await createCompany();
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong-token" },
      { authorization: `Basic ${OPERATOR_TOKEN}` },
      { "x-api-key": co.key },
      { authorization: `Bearer ${co.key}` },
    ];
    for (const headers of attempts) {
      for (const path of ["/operator/v1/companies", `/operator/v1/companies/${co.id}/machines`]) {
        const res = await call(path, {
          method: path.endsWith("machines") ? "POST" : "GET",
          headers: { ...headers, "content-type": "application/json" },
          body: path.endsWith("machines") ? JSON.stringify([{ name: "Sneaky" }]) : undefined,
        });
        expect(res.status, JSON.stringify(headers)).toBe(401);
        expect(await res.json()).toEqual({ detail: "Not authenticated" });
        expect(res.headers.get("www-authenticate")).toContain("Bearer");
      }
    }
    // Nothing was created by the refused calls.
    expect(await api(co.key, "/v1/machines").then((r) => r.json())).toEqual([]);
  });

  it("never opens a public route with the operator token", async () => {
    const res = await call("/v1/machines", {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
  });
});

describe("operator companies", () => {
  it("creates companies with a signing secret and lists them without secrets", async () => {
    const name = `Acme ${crypto.randomUUID()}`;
    const res = await operator("POST", "/companies", [
      { name, timezone: "America/Santiago" },
      { name: `${name} 2`, timezone: "UTC" },
      // A fixed-offset IANA zone (UTC-5 all year), which ICU's list of zones leaves out.
      { name: `${name} 3`, timezone: "Etc/GMT+5" },
    ]);
    expect(res.status).toBe(201);
    const created = (await res.json()) as CreatedCompany[];
    expect(created.map((c) => [c.name, c.timezone])).toEqual([
      [name, "America/Santiago"],
      [`${name} 2`, "UTC"],
      [`${name} 3`, "Etc/GMT+5"],
    ]);
    for (const c of created) expect(c.webhookSecret).toMatch(/^whsec_[A-Za-z0-9_-]{40,}$/);
    expect(created[0]?.webhookSecret).not.toBe(created[1]?.webhookSecret);
    // Placed on the emptiest shard each: two companies of one call land on different shards.
    for (const c of created) expect(c.shard).toMatch(/^SHARD_\d+$/);
    expect(created[0]?.shard).not.toBe(created[1]?.shard);

    const list = await operatorJson<OperatorSchemas["Company"][]>("GET", "/companies");
    const ids = list.map((c) => c.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    for (const c of created) {
      const listed = list.find((l) => l.id === c.id);
      expect(listed).toEqual({ id: c.id, name: c.name, timezone: c.timezone, shard: c.shard });
    }
  });

  it("lists a company older than the shards with shard null, and reaches nothing of it", async () => {
    const co = await createCompany();
    const shard = (await operatorJson<OperatorSchemas["Company"][]>("GET", "/companies")).find(
      (c) => c.id === co.id,
    )?.shard;
    // A directory row as migration 0010 left the companies it found: no shard.
    await env.DB.prepare("UPDATE companies SET shard = NULL WHERE id = ?1").bind(co.id).run();
    try {
      // The isolate keeps a company's shard SHARD_CACHE_MS.
      await new Promise((done) => setTimeout(done, SHARD_CACHE_MS + 100));
      const list = await operatorJson<OperatorSchemas["Company"][]>("GET", "/companies");
      expect(list.find((c) => c.id === co.id)?.shard).toBeNull();
      const machines = await operator("POST", `/companies/${co.id}/machines`, [{ name: "M" }]);
      expect(machines.status).toBe(404);
      expect((await api(co.key, "/v1/machines")).status).toBe(503);
    } finally {
      // The files sharing this runtime see the directory as they would without this test.
      await env.DB.prepare("UPDATE companies SET shard = ?2 WHERE id = ?1")
        .bind(co.id, shard ?? null)
        .run();
    }
  });

  it("refuses an unknown time zone, an empty array and extra fields with 422", async () => {
    const badZone = await operator("POST", "/companies", [
      { name: "Good", timezone: "Europe/Rome" },
      { name: "Bad", timezone: "Mars/Olympus" },
    ]);
    expect(badZone.status).toBe(422);
    const body = (await badZone.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(body.detail.map((d) => d.loc)).toEqual([["body", 1, "timezone"]]);

    const first = await operator("POST", "/companies", [{ name: "X", timezone: "Nowhere/City" }]);
    const firstBody = (await first.json()) as { detail: { loc: unknown[] }[] };
    expect(firstBody.detail[0]?.loc).toEqual(["body", 0, "timezone"]);

    expect((await operator("POST", "/companies", [])).status).toBe(422);
    const extra = await operator("POST", "/companies", [
      { name: "X", timezone: "UTC", webhookSecret: "whsec_mine" },
    ]);
    expect(extra.status).toBe(422);
    const extraBody = (await extra.json()) as { detail: { loc: unknown[]; type: string }[] };
    expect(extraBody.detail).toContainEqual(
      expect.objectContaining({ loc: ["body", 0, "webhookSecret"], type: "extra_forbidden" }),
    );
  });

  it("rotates the webhook secret: a new whsec_ secret each time", async () => {
    const [company] = await operatorJson<CreatedCompany[]>("POST", "/companies", [
      { name: `Rotator ${crypto.randomUUID()}`, timezone: "UTC" },
    ]);
    if (!company?.webhookSecret) throw new Error("no company");
    const first = await operatorJson<{ webhookSecret: string }>(
      "POST",
      `/companies/${company.id}/webhook-secret/rotate`,
    );
    expect(first.webhookSecret).toMatch(/^whsec_/);
    expect(first.webhookSecret).not.toBe(company.webhookSecret);
    const second = await operatorJson<{ webhookSecret: string }>(
      "POST",
      `/companies/${company.id}/webhook-secret/rotate`,
    );
    expect(second.webhookSecret).toMatch(/^whsec_/);
    expect(second.webhookSecret).not.toBe(first.webhookSecret);

    const unknown = await operator("POST", "/companies/999999999/webhook-secret/rotate");
    expect(unknown.status).toBe(404);
  });
});

describe("operator API keys", () => {
  it("issues a key that works at once and is revoked at once", async () => {
    const co = await createCompany();
    const res = await operator("POST", `/companies/${co.id}/api-keys`, [
      { name: "reader", scopes: ["machines.read", "machines.read", "signals.read"] },
      { name: "limited", scopes: [], rateLimit: { requests: 5, periodSeconds: 60 } },
    ]);
    expect(res.status).toBe(201);
    const [reader, limited] = (await res.json()) as IssuedKey[];
    if (!reader || !limited) throw new Error("no keys");
    expect(reader).toMatchObject({
      name: "reader",
      scopes: ["machines.read", "signals.read"],
      rateLimit: null,
    });
    expect(reader.key.startsWith(reader.prefix)).toBe(true);
    expect(reader.key).not.toBe(limited.key);
    expect(limited.rateLimit).toEqual({ requests: 5, periodSeconds: 60 });

    // The key is shown in the create response only: the company listing never carries it.
    const listing = await operator("GET", "/companies");
    expect(await listing.text()).not.toContain(reader.key);

    expect((await api(reader.key, "/v1/machines")).status).toBe(200);
    // A key with no scopes authenticates but may do nothing.
    const none = await api(limited.key, "/v1/machines");
    expect(none.status).toBe(403);

    const revoke = await operator("DELETE", `/api-keys/${reader.id}`);
    expect(revoke.status).toBe(204);
    expect(await revoke.text()).toBe("");
    const after = await api(reader.key, "/v1/machines");
    expect(after.status).toBe(401);
    expect(await after.json()).toEqual({ detail: "Not authenticated" });
    // The other key is untouched.
    expect((await api(limited.key, "/v1/machines")).status).toBe(403);

    expect((await operator("DELETE", "/api-keys/999999999")).status).toBe(404);
  });

  it("refuses unknown scopes and unknown companies", async () => {
    const co = await createCompany();
    const res = await operator("POST", `/companies/${co.id}/api-keys`, [
      { name: "bad", scopes: ["signals.read", "signals.admin"] },
    ]);
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(body.detail.map((d) => d.loc)).toEqual([["body", 0, "scopes", 1]]);
    expect(body.detail[0]?.msg).toContain("Unknown scope");

    const unknown = await operator("POST", "/companies/999999999/api-keys", [
      { name: "k", scopes: ["machines.read"] },
    ]);
    expect(unknown.status).toBe(404);
  });
});

describe("operator machines and signals", () => {
  it("creates machines with a generated, a given or no uuid; a used uuid is a 409", async () => {
    const co = await createCompany();
    const given = crypto.randomUUID();
    const res = await operator("POST", `/companies/${co.id}/machines`, [
      { name: "Generated" },
      { name: "Given", uuid: given.toUpperCase(), externalName: "PLC-7", isCountEnabled: false },
      { name: "None", uuid: null },
    ]);
    expect(res.status).toBe(201);
    const [generated, withUuid, none] = (await res.json()) as OperatorSchemas["OperatorMachine"][];
    expect(generated?.uuid).toMatch(UUID);
    expect(withUuid).toMatchObject({
      uuid: given,
      name: "Given",
      externalName: "PLC-7",
      isCountEnabled: false,
    });
    expect(none).toMatchObject({ uuid: null, name: "None", isCountEnabled: true });

    const listed = (await (await api(co.key, "/v1/machines")).json()) as Api["Machine"][];
    expect(listed.map((m) => m.uuid)).toEqual([generated?.uuid, given, null]);

    const other = await createCompany();
    const duplicate = await operator("POST", `/companies/${other.id}/machines`, [
      { name: "Copy", uuid: given },
    ]);
    expect(duplicate.status).toBe(409);
    expect(typeof ((await duplicate.json()) as { detail: unknown }).detail).toBe("string");
    const twice = crypto.randomUUID();
    const inOneCall = await operator("POST", `/companies/${other.id}/machines`, [
      { name: "A", uuid: twice },
      { name: "B", uuid: twice },
    ]);
    expect(inOneCall.status).toBe(409);
    // Neither refused call created anything.
    expect(await (await api(other.key, "/v1/machines")).json()).toEqual([]);

    const badUuid = await operator("POST", `/companies/${co.id}/machines`, [
      { name: "X", uuid: "not-a-uuid" },
    ]);
    expect(badUuid.status).toBe(422);
    const badBody = (await badUuid.json()) as { detail: { loc: unknown[] }[] };
    expect(badBody.detail[0]?.loc).toEqual(["body", 0, "uuid"]);

    expect((await operator("POST", "/companies/999999999/machines", [{ name: "X" }])).status).toBe(
      404,
    );
  });

  it("creates signals that the public API lists, and 404s for an unknown machine", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine?.uuid) throw new Error("no machine");
    const res = await operator("POST", `/machines/${machine.id}/signals`, [
      {
        name: "pressure",
        displayName: "Line pressure",
        kind: "analog",
        description: { en: "Bar", es: "Bares" },
      },
    ]);
    expect(res.status).toBe(201);
    const [signal] = (await res.json()) as {
      publicId: string;
      machineId: number;
      name: string;
      displayName: string;
      kind: string | null;
      description: { en: string | null; es: string | null };
    }[];
    expect(signal).toEqual({
      publicId: expect.stringMatching(UUID),
      machineId: machine.id,
      name: "pressure",
      displayName: "Line pressure",
      kind: "analog",
      description: { en: "Bar", es: "Bares" },
    });
    const listed = await api(co.key, `/v1/machines/${machine.uuid}/signals?language=es`);
    expect(await listed.json()).toEqual({
      signals: [
        {
          public_id: signal?.publicId,
          name: "pressure",
          display_name: "Line pressure",
          description: "Bares",
        },
      ],
    });

    const unknown = await operator("POST", "/machines/999999999/signals", [
      { name: "x", displayName: "X", kind: "analog" },
    ]);
    expect(unknown.status).toBe(404);
    const missingKind = await operator("POST", `/machines/${machine.id}/signals`, [
      { name: "x", displayName: "X" },
    ]);
    expect(missingKind.status).toBe(422);
  });

  it("takes a given publicId; a used or repeated id, or a repeated name and display name, is a 409", async () => {
    const co = await createCompany();
    const [machine, other] = await createMachines(co.id, [{ name: "Press" }, { name: "Lathe" }]);
    if (!machine?.uuid || !other) throw new Error("no machine");
    const given = crypto.randomUUID();
    const res = await operator("POST", `/machines/${machine.id}/signals`, [
      { publicId: given.toUpperCase(), name: "power", displayName: "Power", kind: "analog" },
      // Same name, another display name: the public API tells them apart (spec).
      { name: "power", displayName: "Power (spindle)", kind: "analog" },
    ]);
    expect(res.status).toBe(201);
    const [fixed, generated] = (await res.json()) as { publicId: string }[];
    expect(fixed?.publicId).toBe(given);
    expect(generated?.publicId).toMatch(UUID);
    const read = await api(
      co.key,
      `/v1/machines/${machine.uuid}/signals/${given}?start_time=2024-01-01T00:00:00Z&end_time=2024-01-02T00:00:00Z&agg_unit=h`,
    );
    expect(read.status).toBe(200);

    const refused = async (machineId: number, body: unknown[]) => {
      const answer = await operator("POST", `/machines/${machineId}/signals`, body);
      return {
        status: answer.status,
        detail: ((await answer.json()) as { detail: unknown }).detail,
      };
    };
    // Used by a signal of another machine.
    expect(
      await refused(other.id, [{ publicId: given, name: "x", displayName: "X", kind: "analog" }]),
    ).toEqual({ status: 409, detail: "A signal with one of these publicIds already exists" });
    const twice = crypto.randomUUID();
    expect(
      await refused(other.id, [
        { publicId: twice, name: "a", displayName: "A", kind: "analog" },
        { publicId: twice, name: "b", displayName: "B", kind: "analog" },
      ]),
    ).toEqual({ status: 409, detail: `The publicId ${twice} is given twice` });
    expect(
      await refused(machine.id, [{ name: "power", displayName: "Power", kind: "counter" }]),
    ).toEqual({ status: 409, detail: 'The machine already has a signal "power" / "Power"' });
    expect(
      await refused(other.id, [
        { name: "count", displayName: "Count", kind: "counter" },
        { name: "count", displayName: "Count", kind: "counter" },
      ]),
    ).toEqual({ status: 409, detail: 'The signal "count" / "Count" is given twice' });
    // None of the refused calls created anything on the other machine.
    expect(await (await api(co.key, `/v1/machines/${other.uuid}/signals`)).json()).toEqual({
      signals: [],
    });

    // A deleted signal frees its name and display name, not its public id.
    expect((await operator("DELETE", `/signals/${given}`)).status).toBe(204);
    const again = await operator("POST", `/machines/${machine.id}/signals`, [
      { name: "power", displayName: "Power", kind: "analog" },
    ]);
    expect(again.status).toBe(201);
    expect(
      await refused(machine.id, [{ publicId: given, name: "y", displayName: "Y", kind: "analog" }]),
    ).toMatchObject({ status: 409 });

    const badId = await operator("POST", `/machines/${machine.id}/signals`, [
      { publicId: "not-a-uuid", name: "z", displayName: "Z", kind: "analog" },
    ]);
    expect(badId.status).toBe(422);
  });
});

describe("operator samples", () => {
  it("accepts both body forms, de-duplicates instants, and refuses mismatched lengths", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine?.uuid) throw new Error("no machine");
    const publicId = await createSignal(machine.id, { name: "power" });
    const t0 = Date.UTC(2024, 3, 1, 10);
    const iso = (ms: number) => new Date(ms).toISOString();

    const asObjects = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [
        { timestamp: iso(t0), value: 1 },
        { timestamp: iso(t0 + 1000), value: 2 },
        // Same instant in another offset: the last one wins.
        { timestamp: "2024-04-01T12:00:00+02:00", value: 3 },
      ],
    });
    expect(asObjects.status).toBe(200);
    expect(await asObjects.json()).toEqual({ accepted: 2 });

    const asArrays = await operator("POST", `/signals/${publicId}/samples`, {
      timestamps: [iso(t0 + 2000), iso(t0 + 3000)],
      values: [4, 5.5],
    });
    expect(await asArrays.json()).toEqual({ accepted: 2 });

    const read = await api(
      co.key,
      `/v1/machines/${machine.uuid}/signals/${publicId}?start_time=${iso(t0)}&end_time=${iso(t0 + 10_000)}`,
    );
    const body = (await read.json()) as { data: { timestamp: string; value: number }[] };
    expect(body.data).toEqual([
      { timestamp: iso(t0), value: 3 },
      { timestamp: iso(t0 + 1000), value: 2 },
      { timestamp: iso(t0 + 2000), value: 4 },
      { timestamp: iso(t0 + 3000), value: 5.5 },
    ]);

    const mismatched = await operator("POST", `/signals/${publicId}/samples`, {
      timestamps: [iso(t0 + 5000), iso(t0 + 6000)],
      values: [1],
    });
    expect(mismatched.status).toBe(422);
    const mismatchedBody = (await mismatched.json()) as {
      detail: { loc: unknown[]; msg: string; type: string }[];
    };
    expect(mismatchedBody.detail).toEqual([
      {
        loc: ["body", "values"],
        msg: "timestamps and values must have the same length",
        type: "value_error",
      },
    ]);

    const badValue = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [{ timestamp: iso(t0), value: "high" }],
    });
    expect(badValue.status).toBe(422);
    const noSeparator = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [{ timestamp: "2024-04-01 10:00:00Z", value: 1 }],
    });
    expect(noSeparator.status).toBe(422);

    const unknown = await operator("POST", `/signals/${crypto.randomUUID()}/samples`, {
      samples: [{ timestamp: iso(t0), value: 1 }],
    });
    expect(unknown.status).toBe(404);
  });
});

describe("operator diagnostics: GET /operator/v1/signals/{public_id}/aggregate", () => {
  it("gives the same points with rollups as with a raw scan, and plans them differently", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine?.uuid) throw new Error("no machine");
    const publicId = await createSignal(machine.id, { name: "power" });
    const t0 = Date.UTC(2024, 5, 3, 7);
    const samples = Array.from(
      { length: 5 * 720 },
      (_, i) => [t0 + i * 5000 + 250, Math.cos(i / 11) * 40 + (i % 5)] as const,
    );
    await ingest(publicId, samples);
    const window = `start_time=${new Date(t0 + 61_000).toISOString()}&end_time=${new Date(t0 + 4 * 3_600_000 + 179_000).toISOString()}`;

    for (const fn of ["avg", "max", "min", "sum", "count"]) {
      const q = `${window}&agg_unit=h&agg_function=${fn}`;
      const rollups = await operatorJson<{
        strategy: string;
        parts: { source: string }[];
        queryMs: number;
        data: { timestamp: string; value: number }[];
      }>("GET", `/signals/${publicId}/aggregate?${q}&strategy=rollups`);
      const raw = await operatorJson<typeof rollups>(
        "GET",
        `/signals/${publicId}/aggregate?${q}&strategy=raw`,
      );
      expect(rollups.strategy).toBe("rollups");
      expect(raw.strategy).toBe("raw");
      expect(rollups.parts.map((p) => p.source)).toEqual(["raw", "3600", "raw"]);
      expect(raw.parts.map((p) => p.source)).toEqual(["raw"]);
      expect(rollups.data.map((p) => p.timestamp)).toEqual(raw.data.map((p) => p.timestamp));
      rollups.data.forEach((p, i) => {
        expect(p.value).toBeCloseTo(raw.data[i]?.value ?? Number.NaN, 9);
      });
      // And the public route answers what the rollup strategy does.
      const pub = await api(co.key, `/v1/machines/${machine.uuid}/signals/${publicId}?${q}`);
      const pubBody = (await pub.json()) as { data: unknown };
      expect(pubBody.data).toEqual(rollups.data);
    }

    const unauthenticated = await call(`/operator/v1/signals/${publicId}/aggregate?${window}`, {
      headers: { "x-api-key": co.key },
    });
    expect(unauthenticated.status).toBe(401);
    const badStrategy = await operator(
      "GET",
      `/signals/${publicId}/aggregate?${window}&strategy=magic`,
    );
    expect(badStrategy.status).toBe(422);
    expect(
      (await operator("GET", `/signals/${crypto.randomUUID()}/aggregate?${window}&agg_unit=h`))
        .status,
    ).toBe(404);
  });
});
