/**
 * The plant board's script, run by the browser (bundled by scripts/lib/board-bundle.ts,
 * served by src/board/board-page.ts). It uses only the public API, with the key the person
 * enters, kept in this tab's session storage and sent as the x-api-key header, never in a
 * URL. This module holds the page's life: the key, the first load, the timers, the keyboard.
 */
import { answer, api, BoardApiError, useKey } from "./board-api";
import { machineCard } from "./board-card";
import { closeDetail, openDetail } from "./board-detail";
import { byId, el } from "./board-dom";
import { clockSeconds, setZone } from "./board-format";
import { listen } from "./board-live";
import { drawMachineStops } from "./board-reasons";
import { refreshRealtime, refreshReports } from "./board-refresh";
import { KEY_STORAGE, state } from "./board-state";
import { legendEntries } from "./board-timeline-view";
import type { Machine } from "./board-types";

function setStatus(text: string): void {
  byId("status").textContent = text;
}

const open = (machine: Machine) => void openDetail(machine, render);

/** Draws every card again, and the open machine's stops. */
function render(): void {
  const grid = byId("machines");
  grid.replaceChildren(
    ...(state.machines.length === 0
      ? [
          el(
            "p",
            { class: "idle", "data-field": "no-machines" },
            "This company has no machines yet.",
          ),
        ]
      : state.machines.map((machine) => machineCard(machine, open))),
  );
  grid.setAttribute("aria-busy", "false");
  drawMachineStops();
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function refresh(withReports: boolean): Promise<void> {
  try {
    await refreshRealtime();
    if (withReports) await refreshReports();
    render();
    setStatus(`Updated ${clockSeconds(Date.now())}`);
  } catch (error) {
    setStatus(`Could not refresh: ${message(error)}`);
    if (error instanceof BoardApiError && error.status === 401) forgetKey();
  }
}

function forgetKey(): void {
  sessionStorage.removeItem(KEY_STORAGE);
  state.key = "";
  useKey(null);
  clearInterval(state.timer);
  clearInterval(state.slowTimer);
  if (state.events) state.events.close();
  state.events = null;
  byId("key-form").hidden = false;
  byId("change-key").hidden = true;
  byId("legend").hidden = true;
  byId("time-zone").textContent = "";
  byId("machines").replaceChildren();
  byId("detail").hidden = true;
  byId("key").focus();
}

/**
 * The company's time zone, from the one-use ticket of its stream events
 * (`company.timezone`); the ticket is kept for the stream's first connection. Null when the
 * key cannot take a ticket (no `realtime.read`): the board then says the zone is unknown
 * rather than pass the browser's zone or UTC off as the plant's.
 */
async function companyZone(): Promise<string | null> {
  try {
    const body = answer(await api().POST("/v1/realtime/tickets"));
    state.ticket = body.ticket;
    return body.company.timezone;
  } catch (error) {
    if (error instanceof BoardApiError && error.status === 403) return null;
    throw error;
  }
}

async function start(): Promise<void> {
  useKey(state.key);
  byId("key-form").hidden = true;
  byId("change-key").hidden = false;
  setStatus("Loading…");
  try {
    state.machines = answer(await api().GET("/v1/machines"));
    const zone = await companyZone();
    setZone(zone ?? "UTC");
    document.body.dataset.timeZone = zone ?? "";
    byId("time-zone").textContent = zone
      ? `Times in ${zone} (the plant's)`
      : "Times in UTC: the company's zone is not known (this key has no realtime.read)";
  } catch (error) {
    const invalid = error instanceof BoardApiError && error.status === 401;
    setStatus(invalid ? "That key is not valid." : `Error: ${message(error)}`);
    if (invalid) forgetKey();
    return;
  }
  byId("legend").replaceChildren(el("span", {}, "Timelines:"), ...legendEntries());
  byId("legend").hidden = state.machines.length === 0;
  await refresh(true);
  void listen({ render, setStatus });
  // Stream events drive the board; polling stays as a fallback, about 4 realtime reads a
  // second at most whatever the plant's size (a key's default limit is 600 a minute).
  const interval = Math.max(15_000, state.machines.length * 250);
  state.timer = setInterval(() => void refresh(false), interval);
  state.slowTimer = setInterval(() => void refresh(true), Math.max(30_000, interval));
}

byId("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const field = byId("key", HTMLInputElement);
  state.key = field.value.trim();
  sessionStorage.setItem(KEY_STORAGE, state.key);
  field.value = "";
  void start();
});
byId("change-key").addEventListener("click", forgetKey);
byId("close-detail").addEventListener("click", () => closeDetail(render));
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && state.selected) closeDetail(render);
});
if (state.key) void start();
else byId("key").focus();
