/**
 * CPU profiles of the local Worker through the DevTools protocol: a session on the dev
 * server's inspector, and a summary of a profile's self time by function and by file. Used by
 * the profiling scripts (`bench/profile-realtime.ts`, `bench/profile-detection.ts`).
 */
import WebSocket from "ws";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * One DevTools protocol session over the inspector's WebSocket (the dev server started with
 * `BENCH_INSPECTOR_PORT`).
 *
 * @param port the inspector's port.
 */
export async function inspect(port: number): Promise<{
  call: (method: string, params?: object) => Promise<Record<string, unknown>>;
  close: () => void;
}> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    title: string;
    webSocketDebuggerUrl: string;
  }[];
  const target = targets[0];
  if (!target) throw new Error("no inspector target");
  // `ws`, not Node's own client: wrangler's inspector proxy refuses the latter's handshake.
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, (result: Record<string, unknown>) => void>();
  ws.on("message", (data: WebSocket.RawData) => {
    const message = JSON.parse(String(data)) as {
      id?: number;
      result?: Record<string, unknown>;
    };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result ?? {});
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    close: () => ws.close(),
  };
}

/**
 * Prints self time (ms) by function and by file, from the profile's samples, and the busy
 * time per unit of work.
 *
 * @param units how many units of work the profile covers; `unit` their name.
 */
export function summarize(profile: Profile, units: number, unit: string): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  let idle = 0;
  for (const [id, ms] of self) {
    const name = byId.get(id)?.callFrame.functionName;
    if (name === "(idle)" || name === "(program)") idle += ms;
  }
  console.log(
    `busy (not idle, not "program") ${((total - idle) / units).toFixed(3)} ms per ${unit}`,
  );
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  for (const [id, ms] of self) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const file = frame.url.replace(/^.*\/(src|node_modules)\//, "$1/") || "(native)";
    const fn = `${frame.functionName || "(anonymous)"} ${file}:${frame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, ms]) => `${((100 * ms) / total).toFixed(1).padStart(5)} %  ${k}`)
      .join("\n");
  console.log(
    `profile: ${total.toFixed(0)} ms sampled\n\nby function (self):\n${top(byFunction, 40)}`,
  );
  console.log(`\nby file (self):\n${top(byFile, 25)}`);
}
