/**
 * The plant board's stream events: the company's stream, opened with a one-use ticket, and
 * a refresh of the machines that had events.
 */
import { answer, api } from "./board-api";
import { clockSeconds } from "./board-format";
import { refreshRealtime, refreshReports } from "./board-refresh";
import { state } from "./board-state";
import { boardStops } from "./board-stops";
import type { LiveEvent } from "./board-types";

/** What the live part needs from the page: draw the cards, say how things stand. */
interface LiveHooks {
  render: () => void;
  setStatus: (text: string) => void;
}

/** The event kinds of the live streams, as the Worker lists them (src/streams/names.ts). */
function eventKinds(): string[] {
  const kinds: unknown = JSON.parse(document.body.dataset.eventKinds || "[]");
  return Array.isArray(kinds) ? kinds.filter((k): k is string => typeof k === "string") : [];
}

/** Refreshes the machines that had events, at most every half second. */
function machineChanged(machineId: number | null, hooks: LiveHooks): void {
  const ids = machineId === null ? state.machines.map((m) => m.id) : [machineId];
  for (const id of ids) {
    state.pending.add(id);
    state.noShift.delete(id);
  }
  if (state.flushTimer) return;
  state.flushTimer = setTimeout(async () => {
    state.flushTimer = null;
    const changed = new Set(state.pending);
    state.pending.clear();
    try {
      await refreshRealtime(state.machines.filter((m) => changed.has(m.id)));
      await refreshReports();
      hooks.render();
      hooks.setStatus(`Live · updated ${clockSeconds(Date.now())}`);
    } catch (error) {
      hooks.setStatus(`Could not refresh: ${error instanceof Error ? error.message : error}`);
    }
  }, 500);
}

/** One event of the stream, parsed; null when it is not an event object. */
function parse(data: string): LiveEvent | null {
  try {
    const event: unknown = JSON.parse(data);
    return typeof event === "object" && event !== null && "type" in event
      ? (event as LiveEvent)
      : null;
  } catch {
    return null;
  }
}

/**
 * Listens to the company's stream events: a one-use ticket (asked for with the key in a
 * header) opens an EventSource, so the key never goes in a URL. A ticket serves one
 * connection: when it drops, a new ticket resumes after the last event seen.
 */
export async function listen(hooks: LiveHooks): Promise<void> {
  if (state.events) state.events.close();
  state.events = null;
  if (!state.key || typeof EventSource === "undefined") return;
  try {
    // The ticket taken with the company's zone, once; a fresh one on every reconnect.
    const ticket = state.ticket ?? answer(await api().POST("/v1/realtime/tickets")).ticket;
    state.ticket = null;
    const query = new URLSearchParams({ ticket });
    if (state.lastEventId !== null) query.set("since", state.lastEventId);
    const source = new EventSource(`/v1/realtime/events?${query}`);
    state.events = source;
    for (const kind of eventKinds()) {
      source.addEventListener(kind, (message) => {
        state.lastEventId = message.lastEventId || state.lastEventId;
        const event = parse(message.data);
        if (!event) return;
        // How many events arrived: shown to tests and to a curious person's dev tools.
        document.body.dataset.liveEvents = String(
          Number(document.body.dataset.liveEvents || 0) + 1,
        );
        // A stop's event changes its card at once; the machine is read again after.
        if (boardStops.applyEvent(event, Date.now())) hooks.render();
        machineChanged(kind === "reset" ? null : event.machineId, hooks);
      });
    }
    source.addEventListener("error", () => {
      if (state.events !== source) return;
      source.close();
      state.events = null;
      setTimeout(() => void listen(hooks), 5_000);
    });
  } catch (error) {
    hooks.setStatus(
      `Stream events unavailable (${error instanceof Error ? error.message : error}); polling`,
    );
    setTimeout(() => void listen(hooks), 30_000);
  }
}
