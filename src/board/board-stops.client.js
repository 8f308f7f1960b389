// The plant board's stops: what each machine card says about them. A machine that is down
// shows "Down since 14:05, reason not given" (or its reason once someone gave it); a machine
// that is running again shows its stops of the last 24 hours still waiting for their reason
// (the ones a scanner can still label: docs/realtime.md, "Stop reasons"). Kept from the stops
// report, and changed at once by the stream events (stop.started, stop.ended, stop.updated,
// stop.deleted, stop.classified, stop.unclassified), before the report is read again. Part of
// the board's script (src/board/board-page.ts).

(() => {
  const { format } = globalThis.PMBoard;
  const { el } = format;
  /** A stop without a reason that ended less than this long ago waits for one, ms. */
  const WAITING_MS = 24 * format.HOUR;
  /**
   * A stop changed by a stream event keeps that version over a report whose read began less
   * than this long before the event: the report reads a replica, which may lag a few seconds.
   */
  const EVENT_WINS_MS = 10_000;

  globalThis.PMBoard.stops = () => {
    /** machine id -> Map(stop id -> {stop, classification, patchedAt}). */
    let byMachine = new Map();

    function stopsOf(machineId) {
      let stops = byMachine.get(machineId);
      if (!stops) {
        stops = new Map();
        byMachine.set(machineId, stops);
      }
      return stops;
    }

    /**
     * Takes the stops report's rows (read from `requestedAt`, ms) as the board's stops; a stop
     * a stream event changed after that keeps the event's version.
     */
    function fromReport(rows, requestedAt) {
      const next = new Map();
      for (const row of rows) {
        if (!next.has(row.machine.id)) next.set(row.machine.id, new Map());
        next.get(row.machine.id).set(row.stop.id, {
          stop: row.stop,
          classification: row.classification.id === null ? null : row.classification,
          patchedAt: 0,
        });
      }
      for (const [machineId, stops] of byMachine) {
        for (const [id, entry] of stops) {
          if (entry.patchedAt < requestedAt - EVENT_WINS_MS) continue;
          if (!next.has(machineId)) next.set(machineId, new Map());
          if (entry.deleted) next.get(machineId).delete(id);
          else next.get(machineId).set(id, entry);
        }
      }
      byMachine = next;
    }

    /**
     * Applies one stream event of the company's stream to the stops.
     *
     * @returns true when it changed a stop (the card is drawn again at once).
     */
    function applyEvent(event) {
      const data = event.data || {};
      if (event.machineId === null || event.machineId === undefined) return false;
      const stops = stopsOf(event.machineId);
      const now = Date.now();
      switch (event.type) {
        case "stop.started":
        case "stop.ended":
        case "stop.updated": {
          const known = stops.get(data.stop.id);
          stops.set(data.stop.id, {
            stop: { ...(known ? known.stop : {}), ...data.stop },
            classification: known ? known.classification : null,
            patchedAt: now,
          });
          return true;
        }
        case "stop.deleted":
          // Kept as deleted a while, so that a lagging report does not bring it back.
          stops.set(data.stop.id, { stop: data.stop, deleted: true, patchedAt: now });
          return true;
        case "stop.classified":
        case "stop.unclassified": {
          const known = stops.get(data.stopId);
          if (!known || known.deleted) return false;
          const classification = event.type === "stop.classified" ? data.classification : null;
          stops.set(data.stopId, { ...known, classification, patchedAt: now });
          return true;
        }
        default:
          return false;
      }
    }

    /** The reason of a classification in a few words: its causes, else its description. */
    function reasonText(classification) {
      const causes = [classification.generalCause, classification.specificCause]
        .map((cause) => cause?.name)
        .filter(Boolean);
      if (causes.length > 0) return causes.join(" · ");
      return classification.description || "reason given";
    }

    /**
     * A machine's stops at `now`: its open stop (the one that started last) and its stops
     * waiting for a reason (ended less than 24 hours ago, not programmed, no reason), newest
     * first.
     */
    function summary(machineId, now) {
      const stops = [...(byMachine.get(machineId) || new Map()).values()].filter(
        (entry) => !entry.deleted && Date.parse(entry.stop.startTime) <= now,
      );
      const open = stops
        .filter((entry) => entry.stop.endTime === null)
        .sort((a, b) => Date.parse(b.stop.startTime) - Date.parse(a.stop.startTime))[0];
      const waiting = stops
        .filter(
          (entry) =>
            entry.stop.endTime !== null &&
            !entry.stop.isProgrammed &&
            entry.classification === null &&
            Date.parse(entry.stop.endTime) >= now - WAITING_MS,
        )
        .sort((a, b) => Date.parse(b.stop.endTime) - Date.parse(a.stop.endTime));
      return { open, waiting };
    }

    /** The card's "Stop" entry of a machine (a `dd`), in the company's time zone. */
    function stopEntry(machineId) {
      const { open, waiting } = summary(machineId, Date.now());
      const attributes = { "data-field": "stop" };
      if (open) {
        const since = format.clock(open.stop.startTime);
        const words = open.stop.isProgrammed
          ? `Planned stop since ${since}`
          : `Down since ${since}`;
        const reason = open.classification ? reasonText(open.classification) : null;
        return el(
          "dd",
          { ...attributes, class: "stopped", "data-stop-id": open.stop.id },
          reason ? `${words} · ${reason}` : `${words}, reason not given`,
        );
      }
      const [latest] = waiting;
      if (latest) {
        const more = waiting.length > 1 ? ` (and ${waiting.length - 1} more)` : "";
        return el(
          "dd",
          { ...attributes, class: "waiting", "data-stop-id": latest.stop.id },
          `Stop ${format.clock(latest.stop.startTime)}–${format.clock(latest.stop.endTime)} ` +
            `waiting for its reason${more}`,
        );
      }
      return el("dd", attributes, "No open stop, none waiting for a reason");
    }

    /** Whether a machine has an open stop or one waiting for its reason. */
    function hasStopToShow(machineId) {
      const { open, waiting } = summary(machineId, Date.now());
      return Boolean(open || waiting.length > 0);
    }

    return { fromReport, applyEvent, stopEntry, hasStopToShow };
  };
})();
