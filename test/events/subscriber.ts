/**
 * Test subscribers of the live events: a Server-Sent Events reader over a streamed
 * Response body, and a WebSocket client, both collecting `LiveEvent`s as they arrive.
 */
import { expect } from "vitest";

export interface LiveEvent {
  id: number;
  type: string;
  at: string;
  machineId: number | null;
  machineEventId?: number;
  data: Record<string, unknown>;
}

/** Collected events and a way to wait for the next ones. */
abstract class Collector {
  readonly events: LiveEvent[] = [];
  /** Raw comment lines seen (SSE). */
  readonly comments: string[] = [];
  protected waiters: (() => void)[] = [];
  closed = false;

  protected push(event: LiveEvent): void {
    this.events.push(event);
    this.wake();
  }

  protected wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /**
   * Waits until `count` events satisfy `match` (default every event), or fails after
   * `timeoutMs`.
   */
  async waitFor(
    match: (e: LiveEvent) => boolean,
    count = 1,
    timeoutMs = 10_000,
  ): Promise<LiveEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.filter(match);
      if (found.length >= count) return found;
      if (this.closed) throw new Error(`stream closed with ${found.length}/${count} events`);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(
          `timed out with ${found.length}/${count}: ${JSON.stringify(this.events.map((e) => e.type))}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until the stream is closed, or fails after `timeoutMs`. */
  async waitClosed(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error(`still open after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Events of these types, in order. */
  of(...types: string[]): LiveEvent[] {
    return this.events.filter((e) => types.includes(e.type));
  }

  abstract close(): Promise<void>;
}

/** Reads a `text/event-stream` body, parsing `id`/`event`/`data` blocks and comments. */
export class SseSubscriber extends Collector {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly done: Promise<void>;

  constructor(readonly response: Response) {
    super();
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    if (!response.body) throw new Error("no body");
    this.reader = response.body.getReader();
    this.done = this.pump();
  }

  private async pump(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let type: string | undefined;
          let data: string | undefined;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) this.comments.push(line.slice(1).trim());
            else if (line.startsWith("id: ")) id = line.slice(4);
            else if (line.startsWith("event: ")) type = line.slice(7);
            else if (line.startsWith("data: ")) data = line.slice(6);
          }
          if (data !== undefined) {
            const event = JSON.parse(data) as LiveEvent;
            expect(String(event.id)).toBe(id);
            expect(event.type).toBe(type);
            this.push(event);
          } else {
            this.wake();
          }
        }
      }
    } catch {
      // cancelled
    } finally {
      this.closed = true;
      this.wake();
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => undefined);
    await this.done;
  }
}

/** A WebSocket subscriber from a `101` response. */
export class WsSubscriber extends Collector {
  readonly ws: WebSocket;
  readonly texts: string[] = [];
  /** The code of the close the server sent, once closed. */
  closeCode: number | null = null;

  constructor(response: Response) {
    super();
    expect(response.status).toBe(101);
    const ws = response.webSocket;
    if (!ws) throw new Error("no webSocket");
    ws.accept();
    ws.addEventListener("message", (m) => {
      const text = typeof m.data === "string" ? m.data : "";
      this.texts.push(text);
      if (text.startsWith("{")) this.push(JSON.parse(text) as LiveEvent);
      else this.wake();
    });
    ws.addEventListener("close", (e) => {
      this.closeCode = e.code;
      this.closed = true;
      this.wake();
    });
    this.ws = ws;
  }

  async close(): Promise<void> {
    this.ws.close(1000, "done");
  }
}
