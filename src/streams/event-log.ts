/**
 * A stream's log (a `MachineStream` or `CompanyStream` object) in SQLite: the events
 * (`events`, id = a strictly increasing integer, never reused: the newest row is never
 * pruned, so the next id only grows), at least the last `KEEP_EVENTS` and every event of the
 * last `KEEP_MS`; the latest payload of each kind of state (`state`) for the `reset` event;
 * and the object's own settings (`meta`: its name, the live figures' bookkeeping).
 */
import { DAY_MS } from "../time/units";
import {
  parseStreamName,
  STATE_KEY_OF,
  type StreamEvent,
  type StreamEventInput,
  type StreamName,
} from "./names";

/** Events kept at least (whatever their age). */
export const KEEP_EVENTS = 10_000;
/** Age (ms) under which events are kept (whatever their number). */
export const KEEP_MS = DAY_MS;

/** One stream's log; synchronous, so that an append and its fan-out make one step. */
export class EventLog {
  /** This object's name, parsed (undefined: not read yet). */
  private streamName: StreamName | null | undefined = undefined;
  /** The newest event id (null: not read yet); only `append` adds events. */
  private lastId: number | null = null;

  /** @param sql the object's SQLite, migrated (./stream-migrations.ts). */
  constructor(private readonly sql: SqlStorage) {}

  /** Keeps this object's name (a stream needs it to forward and to compute; ids hide it). */
  remember(stream: string): void {
    if (stream === "" || this.stream() !== null) return;
    if (this.meta("name") === null) this.setMeta("name", stream);
    this.streamName = undefined;
  }

  stream(): StreamName | null {
    this.streamName ??= parseStreamName(this.meta("name") ?? "");
    return this.streamName;
  }

  meta(key: string): string | null {
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)
      .toArray()[0];
    return row?.value ?? null;
  }

  setMeta(key: string, value: string | null): void {
    if (value === null) this.sql.exec("DELETE FROM meta WHERE key = ?", key);
    else this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }

  /** The newest id (0 when the stream never had an event) and the oldest id kept. */
  private bounds(): { last: number; first: number | null } {
    const row = this.sql
      .exec<{ last: number | null; first: number | null }>(
        "SELECT max(id) AS last, min(id) AS first FROM events",
      )
      .toArray()[0];
    return { last: row?.last ?? 0, first: row?.first ?? null };
  }

  /**
   * Stores one event with the next id, and the state it carries for `reset`; prunes the
   * log every 100 events.
   *
   * @returns the event as subscribers get it, and its JSON.
   */
  append(input: StreamEventInput): { event: StreamEvent; body: string } {
    const now = Date.now();
    this.lastId ??= this.bounds().last;
    const id = this.lastId + 1;
    const event: StreamEvent = {
      id,
      type: input.type,
      at: new Date(input.at ?? now).toISOString(),
      machineId: input.machineId,
      ...(input.machineEventId !== undefined ? { machineEventId: input.machineEventId } : {}),
      data: input.data,
    };
    const body = JSON.stringify(event);
    this.sql.exec(
      "INSERT INTO events (id, at, type, body) VALUES (?, ?, ?, ?)",
      id,
      now,
      input.type,
      body,
    );
    this.lastId = id;
    this.keepState(input);
    if (id % 100 === 0) {
      this.sql.exec("DELETE FROM events WHERE id <= ? AND at < ?", id - KEEP_EVENTS, now - KEEP_MS);
    }
    return { event, body };
  }

  /** The latest payload of each kind of state, for `reset`. */
  private keepState(input: StreamEventInput): void {
    if (input.type === "stop.unclassified") {
      // The classification shown is the latest one written: gone if it was this stop's.
      const { stopId } = input.data as { stopId: number };
      this.sql.exec(
        "DELETE FROM state WHERE key = ? AND json_extract(data, '$.stopId') = ?",
        `${input.machineId}:classification`,
        stopId,
      );
      return;
    }
    const key = STATE_KEY_OF[input.type];
    if (key === undefined) return;
    const scoped = `${input.machineId}:${key}`;
    if (key === "operators") {
      const row = this.sql
        .exec<{ data: string }>("SELECT data FROM state WHERE key = ?", scoped)
        .toArray()[0];
      const list = row ? (JSON.parse(row.data) as { operator: { id: number } }[]) : [];
      const added = input.data as { operator: { id: number } };
      const next = [...list.filter((o) => o.operator.id !== added.operator.id), added];
      this.sql.exec(
        "INSERT OR REPLACE INTO state (key, data) VALUES (?, ?)",
        scoped,
        JSON.stringify(next),
      );
      return;
    }
    if (input.type === "shift.started") {
      // A new shift has its own crew, segments and figures.
      this.sql.exec(
        "DELETE FROM state WHERE key IN (?, ?, ?)",
        `${input.machineId}:operators`,
        `${input.machineId}:production`,
        `${input.machineId}:oee`,
      );
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO state (key, data) VALUES (?, ?)",
      scoped,
      JSON.stringify(input.data),
    );
  }

  /**
   * Whether a client that saw every event up to `since` can resume from the log: "ok", or
   * "reset" when the log no longer reaches back there or `since` is an id this stream never
   * gave.
   */
  reaches(since: number): "ok" | "reset" {
    const { last, first } = this.bounds();
    if (since > last) return "reset";
    if (since === last) return "ok";
    return first === null || since < first - 1 ? "reset" : "ok";
  }

  /**
   * At most `limit` events after `since`, in order (a page of a replay), or null when the log
   * no longer reaches back there (pruned meanwhile).
   */
  after(since: number, limit: number): StreamEvent[] | null {
    const rows = this.sql
      .exec<{ id: number; body: string }>(
        "SELECT id, body FROM events WHERE id > ? ORDER BY id LIMIT ?",
        since,
        limit,
      )
      .toArray();
    const firstId = rows[0]?.id;
    if (firstId !== undefined && firstId !== since + 1 && this.reaches(since) === "reset") {
      return null;
    }
    return rows.map((r) => JSON.parse(r.body) as StreamEvent);
  }

  /** The `reset` event: the newest id and the current state; the client goes on from there. */
  resetEvent(): StreamEvent {
    const { last } = this.bounds();
    const state: Record<string, unknown> = {};
    for (const row of this.sql
      .exec<{ key: string; data: string }>("SELECT key, data FROM state ORDER BY key")
      .toArray()) {
      const [machine, key] = row.key.split(":");
      if (machine === undefined || key === undefined) continue;
      const byMachine = (state[machine] ?? {}) as Record<string, unknown>;
      byMachine[key] = JSON.parse(row.data) as unknown;
      state[machine] = byMachine;
    }
    const name = this.stream();
    return {
      id: last,
      type: "reset",
      at: new Date().toISOString(),
      machineId: name?.kind === "machine" ? name.machineId : null,
      data: { lastEventId: last, machines: state },
    };
  }
}
