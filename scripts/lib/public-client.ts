/**
 * The few public API calls the scripts need: to check a key, to print ready-to-paste curl
 * commands, and to load the demo's SKUs, operators, work orders, nominal speeds and
 * production logs. The key goes in `x-api-key`.
 */
import { requestJson } from "./http";

/** A row of GET /v1/machines (only the fields the scripts read). */
export interface PublicMachine {
  id: number;
  uuid: string | null;
  name: string;
}

/** A signal of GET /v1/machines/{machine_uuid}/signals. */
export interface PublicSignal {
  public_id: string;
  name: string;
  display_name: string;
  description: string | null;
}

/**
 * Sends a GET to the public API with an API key.
 *
 * @param baseUrl origin of the Worker, for example `http://127.0.0.1:8787`.
 * @param path a path starting with `/v1/`.
 * @param apiKey the `x-api-key` value.
 * @returns the parsed JSON answer.
 * @throws HttpError on a non-2XX answer (401 for an unknown or revoked key).
 */
export function getPublic<T>(baseUrl: string, path: string, apiKey: string): Promise<T> {
  return requestJson<T>(`${baseUrl.replace(/\/+$/, "")}${path}`, {
    method: "GET",
    headers: { "x-api-key": apiKey },
  });
}

/**
 * Sends a POST with a JSON body to the public API with an API key.
 *
 * @param baseUrl origin of the Worker, for example `http://127.0.0.1:8787`.
 * @param path a path starting with `/v1/`.
 * @param apiKey the `x-api-key` value.
 * @param body the JSON body (public bodies are camelCase).
 * @returns the parsed JSON answer.
 * @throws HttpError on a non-2XX answer (422 with the item index for a bad array item).
 */
export function postPublic<T>(
  baseUrl: string,
  path: string,
  apiKey: string,
  body: unknown,
): Promise<T> {
  return requestJson<T>(`${baseUrl.replace(/\/+$/, "")}${path}`, {
    method: "POST",
    headers: { "x-api-key": apiKey },
    body,
  });
}

/**
 * Lists the machines a key's company can see (GET /v1/machines, scope machines.read).
 *
 * @throws HttpError on a non-2XX answer.
 */
export function listPublicMachines(baseUrl: string, apiKey: string): Promise<PublicMachine[]> {
  return getPublic<PublicMachine[]>(baseUrl, "/v1/machines", apiKey);
}

/**
 * Lists the signals of one machine (GET /v1/machines/{machine_uuid}/signals, scope signals.read).
 *
 * @param machineUuid the machine's uuid.
 * @returns the signals (the `signals` field of the answer).
 * @throws HttpError on a non-2XX answer.
 */
export async function listPublicSignals(
  baseUrl: string,
  apiKey: string,
  machineUuid: string,
): Promise<PublicSignal[]> {
  const answer = await getPublic<{ signals: PublicSignal[] }>(
    baseUrl,
    `/v1/machines/${encodeURIComponent(machineUuid)}/signals`,
    apiKey,
  );
  return answer.signals;
}
