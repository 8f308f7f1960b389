/**
 * The public API for the scripts (to check a key and to load the demo's catalog and
 * production logs): the partners' client of clients/typescript/, without its retries, so
 * that a failure shows at once and every call runs exactly once, as the seed expects.
 * {@link ok} turns an answer into its data or an {@link HttpError}.
 */
import { createClient, type ProductionMonitoringClient } from "../../clients/typescript/src/index";

export { ok } from "./http";

/**
 * A typed client of the public API with one key.
 *
 * @param baseUrl origin of the Worker, for example `http://127.0.0.1:8787`.
 * @param apiKey the `x-api-key` value.
 */
export function publicClient(baseUrl: string, apiKey: string): ProductionMonitoringClient {
  return createClient({ baseUrl, apiKey, maxRetries: 0 });
}
