/**
 * The Worker's one logger: every log line of src/ is one JSON object on one line, the form
 * Workers Logs indexes (`{"level", "event", ...fields}`), written by one call per event.
 * test/architecture.test.ts fails on a direct `console` call anywhere else in src/.
 */

/** How bad an event is; `error` lines go to `console.error`, `warn` to `console.warn`. */
type LogLevel = "info" | "warn" | "error";

/** The fields of a log line besides its level and event: plain JSON values. */
type LogFields = Record<string, unknown>;

/**
 * Writes one log line: `{"level", "event", ...fields}` as JSON through the console method of
 * the level (Workers Logs reads the level from it too).
 *
 * @param level how bad the event is.
 * @param event the event's name in snake_case (`access_token_rejected`): what a log query
 *   filters on.
 * @param fields what else the line says (ids, counts, the cause); never a secret.
 */
export function log(level: LogLevel, event: string, fields: LogFields = {}): void {
  const line = JSON.stringify({ level, event, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/**
 * Writes one `error` line for a failure: the event, the fields, the error's text
 * (`error`: `String(error)`, so `Error: message`) and, for an `Error`, its `stack`.
 *
 * @param event the failed step's name in snake_case (`export_step_failed`).
 * @param error what was thrown (any value).
 * @param fields what else the line says (ids, counts).
 */
export function logError(event: string, error: unknown, fields: LogFields = {}): void {
  log("error", event, {
    ...fields,
    error: String(error),
    ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
  });
}
