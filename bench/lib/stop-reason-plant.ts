/**
 * The stop reason benchmarks' plant and requests, shared by `bench/stop-reason.ts` (latency
 * and CPU per request) and `bench/profile-stop-reason.ts` (where the CPU goes): a webhook
 * receiver on the loopback, a machine with two causes, an open stop and the classification
 * webhooks to the receiver (a plant with an integration), and the four routes they measure.
 */
import { createServer } from "node:http";
import { ok } from "../../scripts/lib/http";
import type { connectOperator } from "../../scripts/lib/operator-api";
import { createThreeShiftPlant } from "./three-shift-plant";

/** The operator API client of the benchmarks (scripts/lib/operator-api.ts). */
type OperatorClient = ReturnType<typeof connectOperator>;

/** The routes measured: a bare route (the floor), an authenticated read and the two writes. */
export type Route = "floor" | "machines" | "stopReason" | "classification";
export const ROUTES: readonly Route[] = ["floor", "machines", "stopReason", "classification"];

/** The two general causes of the plant; a stop reason and a classification alternate them. */
export const CAUSES = ["Bench: jam", "Bench: no material"];

/** Where the requests go: a company's key, a machine and an open stop of it. */
export interface Target {
  key: string;
  machineId: number;
  stopId: number;
}

/**
 * A receiver of webhook deliveries on `127.0.0.1:port`: answers 204 and counts them.
 *
 * @returns `close` to stop it, `count` the deliveries so far.
 */
export function startReceiver(port: number): { close: () => void; count: () => number } {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  server.listen(port, "127.0.0.1");
  return { close: () => server.close(), count: () => received };
}

/**
 * Gives a machine of a company what a scanner needs: the two {@link CAUSES} in the catalog,
 * an open stop (started a minute ago), and webhook registrations of the classification
 * events to `receiver` (an origin the server exempts from the webhook URL rules).
 *
 * @throws when a call is refused (`ok` names it).
 */
export async function prepareTarget(
  client: OperatorClient,
  receiver: string,
  companyId: number,
  key: string,
  machineId: number,
): Promise<Target> {
  const { api } = client;
  const path = { params: { path: { company_id: companyId } } };
  ok(
    "POST",
    await api.POST("/companies/{company_id}/stop-causes", {
      ...path,
      body: CAUSES.map((name) => ({ kind: "generalCause" as const, name })),
    }),
  );
  const [stop] = ok(
    "POST",
    await api.POST("/machines/{machine_id}/stops", {
      params: { path: { machine_id: machineId } },
      body: [{ startTime: new Date(Date.now() - 60_000).toISOString(), isProgrammed: false }],
    }),
  );
  if (!stop) throw new Error("no stop");
  ok(
    "POST",
    await api.POST("/companies/{company_id}/webhooks", {
      ...path,
      body: [
        {
          name: "Bench: created",
          url: `${receiver}/created`,
          eventType: "MachineStopClassificationCreated",
        },
        {
          name: "Bench: updated",
          url: `${receiver}/updated`,
          eventType: "MachineStopClassificationUpdated",
        },
      ],
    }),
  );
  return { key, machineId, stopId: stop.id };
}

/**
 * A company of its own in UTC (named `name`) with a scanner's key (`realtime.write`,
 * `machines.read`), one machine running three 8-hour shifts (lib/three-shift-plant.ts), and
 * what {@link prepareTarget} adds.
 *
 * @param client an operator client of the server at `server.base` (its operator token `server.token`;
 *   `server.receiver` the webhook receiver's origin).
 * @throws when a call is refused.
 */
export async function quietPlant(
  client: OperatorClient,
  server: { base: string; token: string; receiver: string },
  name: string,
): Promise<Target> {
  const { companyId, key, machines } = await createThreeShiftPlant(server.base, server.token, {
    name,
    keyName: "scanner",
    scopes: ["realtime.write", "machines.read"],
    machines: 1,
  });
  const [machine] = machines;
  if (!machine) throw new Error("no machine");
  return prepareTarget(client, server.receiver, companyId, key, machine.id);
}

/**
 * Request `round` of `route` to `target` on the server at `base` (`token`: its operator
 * token): a stop reason and a classification alternate the stop's cause, so each is a change.
 *
 * @returns the URL, the request and the status a success answers.
 */
export function routeRequest(
  base: string,
  token: string,
  target: Target,
  route: Route,
  round: number,
): { url: string; init: RequestInit; expected: number } {
  const cause = CAUSES[round % 2] ?? "";
  const headers = { "x-api-key": target.key, "content-type": "application/json" };
  if (route === "floor") return { url: `${base}/healthz`, init: {}, expected: 204 };
  if (route === "machines") return { url: `${base}/v1/machines`, init: { headers }, expected: 200 };
  if (route === "stopReason") {
    return {
      url: `${base}/v1/realtime/${target.machineId}/stop-reason`,
      init: {
        method: "POST",
        headers,
        body: JSON.stringify({
          stopId: target.stopId,
          generalCause: { name: cause },
          description: `round ${round}`,
        }),
      },
      expected: 200,
    };
  }
  return {
    url: `${base}/operator/v1/stops/${target.stopId}/classification`,
    init: {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ generalCause: { name: cause }, description: `operator ${round}` }),
    },
    expected: 200,
  };
}
