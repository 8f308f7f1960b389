/**
 * The JS heap of the Worker's isolate on the local dev server, read through its DevTools
 * inspector (`BENCH_INSPECTOR_PORT`, ./dev-server.ts): `Runtime.getHeapUsage`, the bytes
 * the isolate's V8 heap holds (live objects and garbage not collected yet). workerd's
 * resident memory (what `/proc` shows) never shrinks once V8 has grown its heap, so it
 * cannot tell garbage from what a Worker keeps; the heap's own figures can: its used bytes
 * as V8 goes (garbage not collected yet included), and its **live** bytes: the sum of the
 * sizes of every object of a heap snapshot (`HeapProfiler.takeHeapSnapshot` collects all
 * garbage first and lists what is left, array buffers' contents included; workerd does not
 * answer `HeapProfiler.collectGarbage`). Not the heap's used size asked right after the
 * snapshot: the isolate runs on between the two answers, and an export step then allocates
 * tens of MiB of garbage (measured: a snapshot of 19.5 MiB, then 38.5 MiB used). A snapshot
 * pauses the isolate for a moment.
 */
import WebSocket from "ws";

/** A connection to the isolate's inspector. */
export interface HeapWatch {
  /** Bytes the isolate's V8 heap uses now. */
  used(): Promise<number>;
  /** Bytes of live objects: the sizes of a heap snapshot's objects (after a full collection). */
  live(): Promise<number>;
  /**
   * Samples the heap every `everyMs` while `run` runs, and its live bytes 300 ms after the
   * start and then `liveMs` after the previous reading (a snapshot takes seconds).
   *
   * @returns `run`'s value and bytes: the live heap before; the heap's peak during the run
   *   (garbage included); the most live bytes seen during the run; the live heap after.
   */
  during<T>(
    run: () => Promise<T>,
    options?: { everyMs?: number; liveMs?: number },
  ): Promise<{
    value: T;
    beforeBytes: number;
    peakBytes: number;
    peakLiveBytes: number;
    afterBytes: number;
    /** Live readings skipped during the run (a snapshot not answered in time). */
    skipped: number;
  }>;
  close(): void;
}

/**
 * Connects to the inspector of the dev server's Worker.
 *
 * @param port the inspector's port (`BENCH_INSPECTOR_PORT` given to the dev server).
 * @throws Error when it lists no target, or a call is not answered within 60 s.
 */
export async function watchHeap(port: number): Promise<HeapWatch> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    webSocketDebuggerUrl?: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`the inspector on ${port} lists no target`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let lastId = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  let chunks: string[] = [];
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as {
      id?: number;
      result?: unknown;
      method?: string;
      params?: { chunk?: string };
    };
    if (message.method === "HeapProfiler.addHeapSnapshotChunk") {
      chunks.push(message.params?.chunk ?? "");
    }
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  const send = (method: string) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++lastId;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error(`inspector: ${method} not answered in 60 s`));
      }, 60_000);
      waiting.set(id, (result) => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve(result);
      });
      socket.send(JSON.stringify({ id, method }));
    });
  const used = async () => ((await send("Runtime.getHeapUsage")) as { usedSize: number }).usedSize;
  const live = async () => {
    // The snapshot's chunks arrive as events before the call's answer.
    chunks = [];
    await send("HeapProfiler.takeHeapSnapshot");
    const snapshot = JSON.parse(chunks.join("")) as {
      snapshot: { meta: { node_fields: string[] } };
      nodes: number[];
    };
    chunks = [];
    const fields = snapshot.snapshot.meta.node_fields;
    const sizeAt = fields.indexOf("self_size");
    let total = 0;
    for (let i = sizeAt; i < snapshot.nodes.length; i += fields.length) {
      total += snapshot.nodes[i] ?? 0;
    }
    return total;
  };
  // On a loaded machine a snapshot amid a large export may outlast the call's 60 s: that
  // reading is skipped (counted), the run goes on.
  let skipped = 0;
  const liveOrSkip = async (fallback: number) => {
    try {
      return await live();
    } catch {
      skipped += 1;
      return fallback;
    }
  };
  await send("HeapProfiler.enable");
  return {
    used,
    live,
    async during(run, { everyMs = 50, liveMs = 3_000 } = {}) {
      skipped = 0;
      const beforeBytes = await live();
      let peakBytes = beforeBytes;
      let peakLiveBytes = beforeBytes;
      let sampling = true;
      const sampler = (async () => {
        // The first live reading soon after the start, so that a short run gets one too.
        let lastLive = Date.now() - liveMs + 300;
        while (sampling) {
          peakBytes = Math.max(peakBytes, await used());
          if (Date.now() - lastLive >= liveMs) {
            peakLiveBytes = Math.max(peakLiveBytes, await liveOrSkip(peakLiveBytes));
            lastLive = Date.now();
          }
          await new Promise((done) => setTimeout(done, everyMs));
        }
      })();
      try {
        const value = await run();
        sampling = false;
        await sampler;
        const afterBytes = await live();
        return { value, beforeBytes, peakBytes, peakLiveBytes, afterBytes, skipped };
      } finally {
        sampling = false;
      }
    },
    close: () => socket.close(),
  };
}
