/**
 * An API key a benchmark issues itself through the operator API: the benches measure routes,
 * not the rate limiter, so its limit is far above any bench's pace.
 */
import { ok } from "../../scripts/lib/http";
import type { connectOperator, Scope } from "../../scripts/lib/operator-api";

/**
 * Issues one key of a company.
 *
 * @param operator the operator client (`connectOperator`).
 * @param companyId the company's id.
 * @param scopes the key's scopes.
 * @param options its name (default `bench`) and its limit, requests a minute (default
 *   1,000,000).
 * @returns the raw key (`x-api-key`).
 * @throws Error when the operator API issues none (or answers an error: `ok`).
 */
export async function issueBenchKey(
  operator: Pick<ReturnType<typeof connectOperator>, "api">,
  companyId: number,
  scopes: Scope[],
  options: { name?: string; requestsPerMinute?: number } = {},
): Promise<string> {
  const [issued] = ok(
    "POST",
    await operator.api.POST("/companies/{company_id}/api-keys", {
      params: { path: { company_id: companyId } },
      body: [
        {
          name: options.name ?? "bench",
          scopes,
          rateLimit: { requests: options.requestsPerMinute ?? 1_000_000, periodSeconds: 60 },
        },
      ],
    }),
  );
  if (!issued) throw new Error(`no key issued to company ${companyId}`);
  return issued.key;
}
