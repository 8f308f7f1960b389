/**
 * The company the year-long benchmarks build first (bench/kpis.ts, bench/exports.ts): one
 * company in UTC with twenty machines on three 8-hour shifts a day and an API key whose rate
 * limit the runs never reach, through the operator API.
 */
import { ok } from "../../scripts/lib/http";
import { connectOperator, type Scope } from "../../scripts/lib/operator-api";

/** Machines of the plant. */
export const PLANT_MACHINES = 20;

/** Three 8-hour shifts a day, every day (operator API shape). */
export const THREE_SHIFTS = [
  { name: "Night", startTime: "00:00", endTime: "08:00" },
  { name: "Morning", startTime: "08:00", endTime: "16:00" },
  { name: "Evening", startTime: "16:00", endTime: "00:00" },
];

/**
 * Creates the company, its key, its machines (`Line 1` ... `Line 20`) and the shifts Night
 * 00-08, Morning 08-16 and Evening 16-24.
 *
 * @param base the server's origin; `token` its operator token; `options.name` the company's
 *   name, `options.keyName` and `options.scopes` the key's, `options.machines` how many
 *   machines (default {@link PLANT_MACHINES}).
 * @returns the company's id, the key's full value and the machines' ids in creation order.
 * @throws Error when a call is refused.
 */
export async function createThreeShiftPlant(
  base: string,
  token: string,
  options: { name: string; keyName: string; scopes: Scope[]; machines?: number },
): Promise<{ companyId: number; key: string; machines: { id: number }[] }> {
  const { api: client } = connectOperator(base, token);
  const [company] = ok(
    "POST",
    await client.POST("/companies", { body: [{ name: options.name, timezone: "UTC" }] }),
  );
  if (!company) throw new Error("no company");
  const companyPath = { params: { path: { company_id: company.id } } };
  const [apiKey] = ok(
    "POST",
    await client.POST("/companies/{company_id}/api-keys", {
      ...companyPath,
      body: [
        {
          name: options.keyName,
          scopes: options.scopes,
          rateLimit: { requests: 1_000_000, periodSeconds: 60 },
        },
      ],
    }),
  );
  if (!apiKey) throw new Error("no key");
  const machines = ok(
    "POST",
    await client.POST("/companies/{company_id}/machines", {
      ...companyPath,
      body: Array.from({ length: options.machines ?? PLANT_MACHINES }, (_, i) => ({
        name: `Line ${i + 1}`,
      })),
    }),
  );
  ok(
    "POST",
    await client.POST("/companies/{company_id}/shifts", {
      ...companyPath,
      body: THREE_SHIFTS,
    }),
  );
  return { companyId: company.id, key: apiKey.key, machines };
}
