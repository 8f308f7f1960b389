/**
 * The machine's stops in its detail panel, and giving one its reason from the board (a phone
 * or tablet at the machine, with a key that has `realtime.write`): every stop of the last 24
 * hours, open or ended, with its reason or "waiting for its reason", each with a button that
 * opens a form of the company's cause catalog. The catalog and the machine's recent stops
 * come from `GET /v1/realtime/{machine_id}/stops`; the reason goes through the scanner's
 * endpoint, `POST /v1/realtime/{machine_id}/stop-reason`, with the stop's id (docs/realtime.md).
 */
import { MINUTE_MS } from "../../time/units";
import { answer, api, BoardApiError } from "./board-api";
import { el } from "./board-dom";
import { clock, dayClock, duration } from "./board-format";
import { boardStops, reasonText, type StopEntry, type StopFacts } from "./board-stops";
import type { Machine, StopCauseCatalog, StopReasonWrite } from "./board-types";

/** The company's cause catalog, as last read; null until read. */
let catalog: StopCauseCatalog | null = null;
/** Why the machine's stops could not be read, or null. */
let readError: string | null = null;
/** The machine shown, where its list is drawn, and what to do after a reason is saved. */
let shown: { machine: Machine; box: HTMLElement; onSaved: () => void } | null = null;
/** The stop whose form is open, or null. */
let editing: number | null = null;

/**
 * Where a stop came from, in the board's words: the API's `origin` (`detected` from the
 * machine's signals, `operatorApi` recorded through the operator API); null when a stop
 * seen before the field existed has none.
 */
function originOf(stop: StopFacts): string | null {
  const origin = "origin" in stop ? stop.origin : undefined;
  if (origin === "detected") return "detected";
  if (origin === "operatorApi") return "recorded";
  return typeof origin === "string" ? origin : null;
}

/** What a refused reason means to the person holding the phone. */
function refusal(status: number): string {
  if (status === 401) return "This key is not valid any more.";
  if (status === 403) return "This key cannot give reasons: it needs the realtime.write scope.";
  if (status === 404) return "This stop is gone (deleted, or the machine's data changed).";
  if (status === 409)
    return "This stop ended more than 24 hours ago: the operator API can still classify it.";
  if (status === 422) return "The catalog changed: close the machine and open it again.";
  return `The reason was not saved (${status}). Try again.`;
}

/**
 * Reads the machine's recent stops (merged into the board's stops) and the cause catalog.
 * A failure is shown in the list, not thrown.
 */
export async function loadMachineStops(machine: Machine): Promise<void> {
  try {
    const requestedAt = Date.now();
    const data = answer(
      await api().GET("/v1/realtime/{machine_id}/stops", {
        params: { path: { machine_id: machine.id } },
      }),
    );
    catalog = data.causes;
    boardStops.merge(data.stops, requestedAt);
    readError = null;
  } catch (error) {
    readError =
      error instanceof BoardApiError && error.status === 403
        ? "This key cannot read the machine's stops and the cause catalog (realtime.read)."
        : `The machine's stops could not be read (${error instanceof Error ? error.message : error}).`;
  }
}

function select(
  name: string,
  label: string,
  causes: { id: string; name: string }[],
  current: string | null,
  required: boolean,
): HTMLElement[] {
  const id = `reason-${name}`;
  const node = el(
    "select",
    { id, name, required },
    required ? null : el("option", { value: "" }, "none"),
    ...causes.map((cause) =>
      el("option", { value: cause.id, selected: cause.id === current }, cause.name),
    ),
  );
  return [el("label", { for: id }, label), node];
}

/** The value of a form's select or input, `null` when empty. */
function fieldValue(form: HTMLFormElement, name: string): string | null {
  const field = form.elements.namedItem(name);
  const value =
    field instanceof HTMLSelectElement || field instanceof HTMLInputElement
      ? field.value.trim()
      : "";
  return value === "" ? null : value;
}

async function save(machine: Machine, entry: StopEntry, form: HTMLFormElement, error: HTMLElement) {
  const general = fieldValue(form, "generalCause");
  if (general === null) return;
  const specific = fieldValue(form, "specificCause");
  const component = fieldValue(form, "component");
  const body: StopReasonWrite = {
    stopId: entry.stop.id,
    generalCause: { id: general },
    specificCause: specific === null ? null : { id: specific },
    component: component === null ? null : { id: component },
    description: fieldValue(form, "description"),
  };
  const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
  if (button) button.disabled = true;
  try {
    const result = await api().POST("/v1/realtime/{machine_id}/stop-reason", {
      params: { path: { machine_id: machine.id } },
      body,
    });
    const row = answer(result);
    boardStops.merge([row], Date.now());
    editing = null;
    shown?.onSaved();
  } catch (failure) {
    error.textContent =
      failure instanceof BoardApiError
        ? refusal(failure.status)
        : "The reason was not saved (no answer). Try again.";
    error.hidden = false;
    if (button) button.disabled = false;
  }
}

/** The form that gives `entry` its reason from the catalog. */
function reasonForm(machine: Machine, entry: StopEntry): HTMLElement {
  if (catalog === null || catalog.generalCauses.length === 0) {
    return el(
      "p",
      { class: "form-error" },
      catalog === null
        ? "The cause catalog could not be read."
        : "The company's catalog has no causes yet: the operator adds them (operator API, stop causes).",
    );
  }
  const c = entry.classification;
  const error = el("p", { class: "form-error", role: "alert", hidden: true });
  const form = el(
    "form",
    { class: "reason-form" },
    ...select(
      "generalCause",
      "General cause",
      catalog.generalCauses,
      c?.generalCause.id ?? null,
      true,
    ),
    ...(catalog.specificCauses.length > 0
      ? select(
          "specificCause",
          "Specific cause",
          catalog.specificCauses,
          c?.specificCause.id ?? null,
          false,
        )
      : []),
    ...(catalog.components.length > 0
      ? select("component", "Component", catalog.components, c?.component.id ?? null, false)
      : []),
    el("label", { for: "reason-description" }, "Note"),
    el("input", {
      id: "reason-description",
      name: "description",
      maxlength: 2000,
      autocomplete: "off",
      value: c?.description ?? "",
    }),
    el(
      "span",
      { class: "actions" },
      el("button", { type: "submit" }, "Save reason"),
      el("button", { type: "button", "data-action": "cancel" }, "Cancel"),
    ),
    error,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void save(machine, entry, form, error);
  });
  form.querySelector('[data-action="cancel"]')?.addEventListener("click", () => {
    editing = null;
    drawMachineStops(true);
  });
  return form;
}

/** One stop of the list: when, how long, where from (when the API says), its reason, its button. */
function stopRow(machine: Machine, entry: StopEntry, now: number): HTMLElement {
  const { stop, classification } = entry;
  const start = Date.parse(stop.startTime);
  const end = stop.endTime === null ? null : Date.parse(stop.endTime);
  const minutes = ((end ?? now) - start) / MINUTE_MS;
  const origin = originOf(stop);
  const reason = classification
    ? `${reasonText(classification)}${classification.description && (classification.generalCause.name || classification.specificCause.name) ? ` (${classification.description})` : ""}`
    : stop.isProgrammed
      ? "planned, no reason given"
      : "waiting for its reason";
  const button = el(
    "button",
    { type: "button", "data-action": "reason" },
    classification ? "Change reason" : "Give reason",
  );
  button.addEventListener("click", () => {
    editing = stop.id;
    drawMachineStops(true);
    document.getElementById("reason-generalCause")?.focus();
  });
  return el(
    "li",
    { class: `stop-row${classification ? "" : " unexplained"}`, "data-stop-id": stop.id },
    el(
      "span",
      { class: "when" },
      end === null
        ? `Since ${dayClock(start)} (${duration(minutes)}, going on)`
        : `${dayClock(start)}–${clock(end)} (${duration(minutes)})`,
    ),
    origin === null ? null : el("span", { class: "origin", "data-field": "origin" }, origin),
    el("span", { class: classification ? "reason" : "reason waiting" }, reason),
    editing === stop.id ? reasonForm(machine, entry) : button,
  );
}

/**
 * Draws the machine's stop list again (new stops, events, a saved reason). Not while a form
 * is open, unless `force`: a person choosing a cause does not lose the form to an update.
 */
export function drawMachineStops(force = false): void {
  if (!shown || (editing !== null && !force)) return;
  const { machine, box } = shown;
  const now = Date.now();
  const recent = boardStops.recent(machine.id, now);
  box.replaceChildren(
    el("h3", { id: "detail-stops-title" }, "Stops, last 24 hours"),
    ...(readError ? [el("p", { class: "form-error" }, readError)] : []),
    recent.length === 0
      ? el("p", { class: "idle" }, "No stop in the last 24 hours.")
      : el("ol", { class: "stop-list" }, ...recent.map((entry) => stopRow(machine, entry, now))),
  );
}

/**
 * Shows a machine's stops in `box` (its detail panel).
 *
 * @param onSaved called after a reason was saved (the cards are drawn again).
 */
export function showMachineStops(machine: Machine, box: HTMLElement, onSaved: () => void): void {
  shown = { machine, box, onSaved };
  editing = null;
  readError = null;
  drawMachineStops(true);
}

/** Stops showing a machine's stops (its detail was closed). */
export function hideMachineStops(): void {
  shown = null;
  editing = null;
}
