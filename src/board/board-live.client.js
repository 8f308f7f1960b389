// The plant board's stream events: the company's stream, opened with a one-use ticket, and
// a refresh of the machines that had events. Part of the board's script
// (src/board/board-page.ts); `ctx` is the board's state and helpers (board.client.js).

(() => {
  globalThis.PMBoard.live = (ctx) => {
    const { state, api, render, setStatus, updated, refreshRealtime, refreshReports, stops } = ctx;
    /** The event kinds of the live streams, as the Worker lists them (src/streams/names.ts). */
    const EVENT_KINDS = JSON.parse(document.body.dataset.eventKinds || "[]");

    /** Refreshes the machines that had events, at most every half second. */
    function machineChanged(machineId) {
      const ids =
        machineId === null || machineId === undefined
          ? state.machines.map((m) => m.id)
          : [machineId];
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
          render();
          setStatus(updated("Live · updated"));
        } catch (error) {
          setStatus(`Could not refresh: ${error.message}`);
        }
      }, 500);
    }

    /**
     * Listens to the company's stream events: a one-use ticket (asked for with the key in a
     * header) opens an EventSource, so the key never goes in a URL. A ticket serves one
     * connection: when it drops, a new ticket resumes after the last event seen.
     */
    async function listen() {
      if (state.events) state.events.close();
      state.events = null;
      if (!state.key || typeof EventSource === "undefined") return;
      try {
        // The ticket taken with the company's zone, once; a fresh one on every reconnect.
        const ticket = state.ticket ?? (await api("/v1/realtime/tickets", {})).body.ticket;
        state.ticket = null;
        const query = new URLSearchParams({ ticket });
        if (state.lastEventId !== null) query.set("since", state.lastEventId);
        const source = new EventSource(`/v1/realtime/events?${query}`);
        state.events = source;
        for (const kind of EVENT_KINDS) {
          source.addEventListener(kind, (message) => {
            state.lastEventId = message.lastEventId || state.lastEventId;
            let event = null;
            try {
              event = JSON.parse(message.data);
            } catch {
              return;
            }
            // How many events arrived: shown to tests and to a curious person's dev tools.
            document.body.dataset.liveEvents = String(
              Number(document.body.dataset.liveEvents || 0) + 1,
            );
            // A stop's event changes its card at once; the machine is read again after.
            if (stops.applyEvent(event)) render();
            machineChanged(kind === "reset" ? null : event.machineId);
          });
        }
        source.addEventListener("error", () => {
          if (state.events !== source) return;
          source.close();
          state.events = null;
          setTimeout(listen, 5_000);
        });
      } catch (error) {
        setStatus(`Stream events unavailable (${error.message}); polling`);
        setTimeout(listen, 30_000);
      }
    }

    return { listen };
  };
})();
