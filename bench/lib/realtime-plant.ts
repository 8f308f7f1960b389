/**
 * The plant of the realtime benchmarks (bench/realtime.ts, bench/events.ts): one company
 * whose machines run an all-day shift, a key with a generous limit, and one SKU with a
 * nominal speed on every machine, so that realtime SKU writes are accepted at once.
 */
import { operatorCall, publicCall } from "./local-worker";

/** What the benchmarks write with. */
export interface RealtimePlant {
  key: string;
  machineIds: number[];
  skuId: string;
}

/**
 * Creates the plant through the operator and public APIs.
 *
 * @param base the Worker's origin; `token` its operator token.
 * @param options the company's name, how many machines, the key's scopes beyond the
 *   realtime ones, whether each machine gets a `count` signal, and its shifts.
 * @throws Error naming the call that failed.
 */
export async function seedRealtimePlant(
  base: string,
  token: string,
  options: {
    name: string;
    machines: number;
    extraScopes?: string[];
    countSignal?: boolean;
    /** The shift definitions (default: one all-day shift, so that one always runs). */
    shifts?: { name: string; startTime: string; endTime: string }[];
  },
): Promise<RealtimePlant> {
  const op = <T>(path: string, body: unknown) => operatorCall<T>(base, token, "POST", path, body);
  const [company] = await op<{ id: number }[]>("/companies", [
    { name: options.name, timezone: "UTC" },
  ]);
  if (!company) throw new Error("no company");
  const machines = await op<{ id: number }[]>(
    `/companies/${company.id}/machines`,
    Array.from({ length: options.machines }, (_, i) => ({ name: `Line ${i + 1}` })),
  );
  await op(
    `/companies/${company.id}/shifts`,
    options.shifts ?? [{ name: "All day", startTime: "00:00", endTime: "00:00" }],
  );
  const [created] = await op<{ key: string }[]>(`/companies/${company.id}/api-keys`, [
    {
      name: "bench",
      scopes: [
        "realtime.write",
        "realtime.read",
        "skus.create",
        "nominal_speeds.create",
        ...(options.extraScopes ?? []),
      ],
      rateLimit: { requests: 1_000_000, periodSeconds: 60 },
    },
  ]);
  if (!created) throw new Error("no key");
  const [sku] = await publicCall<{ id: string }[]>(base, created.key, "POST", "/v1/skus", [
    { sku: "BENCH-1", name: "Bench bottle" },
  ]);
  if (!sku) throw new Error("no SKU");
  await publicCall(
    base,
    created.key,
    "POST",
    "/v1/nominal-speeds",
    machines.map((m) => ({ machine: { id: m.id }, sku: { id: sku.id }, nominalSpeed: 60 })),
  );
  if (options.countSignal) {
    for (const m of machines) {
      await op(`/machines/${m.id}/signals`, [
        { name: "count", displayName: "count", kind: "counter" },
      ]);
    }
  }
  return { key: created.key, machineIds: machines.map((m) => m.id), skuId: sku.id };
}
