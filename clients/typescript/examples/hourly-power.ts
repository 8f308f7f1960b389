import { type ProductionMonitoringClient, unwrap } from "../src/index.js";

/** Example 1: the hourly average power of a machine over one day, as `[timestamp, kW]` pairs. */
export async function hourlyPower(
  client: ProductionMonitoringClient,
  machineUuid: string,
  powerId: string,
): Promise<[string, number][]> {
  const answer = unwrap(
    await client.GET("/v1/machines/{machine_uuid}/signals/{public_id}", {
      params: {
        path: { machine_uuid: machineUuid, public_id: powerId },
        query: {
          start_time: "2022-09-05T00:00:00Z",
          end_time: "2022-09-06T00:00:00Z",
          agg_unit: "h",
          agg_function: "avg",
        },
      },
    }),
  );
  return (answer.data ?? []).map((point) => [point.timestamp, point.value]);
}
