/**
 * The 422s a request its schema allows can still get: the rules a JSON Schema cannot state
 * (between fields, about the stored data), shared by the schema-driven tests of the OpenAPI
 * documents (schema-contract.test.ts) and of the MCP tools' arguments
 * (test/mcp/tool-arguments.test.ts).
 */

import type { ValidationIssue } from "../fixtures/api-types";

/** One issue of a 422's `detail` (the MCP tools answer the same issues). */
export type Issue = ValidationIssue;

/**
 * The 422s a valid request can still get: rules between fields or about the data that a
 * JSON Schema cannot state, each written in its operation's description. Matched on the
 * issue's `type` and `msg`.
 */
export const RULES: { type: string | RegExp; msg: RegExp; why: string; between?: true }[] = [
  {
    type: "not_found",
    msg: /./,
    why: "a reference (machine, SKU, operator, work order) to a record the company lacks",
  },
  { type: "ambiguous", msg: /./, why: "a reference by name that several records share" },
  {
    type: /^(too_many_instances|too_many_stops|export_too_large|csv_too_many_rows)$/,
    msg: /./,
    why: "a report, export or CSV bounded by the rows the company's data would give (bounded-work.md)",
  },
  {
    type: "idempotency_key_reused",
    msg: /./,
    why: "the same Idempotency-Key with another request (fast-check replays values)",
  },
  {
    type: "value_error",
    msg: /^start must not be after end$/,
    why: "a date filter's `between`: start <= end (DateComparisonFilter)",
    between: true,
  },
  {
    type: "value_error",
    msg: /must be (later than|after) /,
    why: "an interval's end after its start (windows, logs, stops, realtime writes)",
    between: true,
  },
  {
    type: "value_error",
    msg: /exceeds 14 days|more than 10,000 points|points/,
    why: "a signal window's ceilings (14 days, 10,000 points), refused, never truncated",
    between: true,
  },
  {
    type: "value_error",
    msg: /^timestamps and values must have the same length$/,
    why: "samples as parallel arrays",
    between: true,
  },
  {
    type: "value_error",
    msg: /^Must be at most 50 bytes \(UTF-8\)/,
    why: "a search term or LIKE pattern: 50 UTF-8 bytes, what D1's LIKE takes (not a length)",
  },
  {
    type: /^value_error\.url\./,
    msg: /./,
    why: "a webhook URL's rules beyond the pattern: parsed, no credentials or fragment, resolving to public addresses",
  },
  {
    type: "value_error.taken",
    msg: /^Another .* has id /,
    why: "a record id fixed by the operator that another record already has",
  },
  {
    type: "value_error",
    msg: /^Must be at most 5 minutes after the server's clock/,
    why: "a sample's instant: at most 5 minutes after the server's clock when the request arrives",
  },
  {
    type: "value_error",
    msg: /must be inside the shift instance/,
    why: "a realtime write's start: inside the shift instance the machine is running",
  },
  {
    type: "value_error.shard",
    msg: /shard/i,
    why: "a shard name (the pattern) that this deployment does not bind",
  },
  {
    type: "value_error",
    msg: /^(Give startDate (and endDate|\(and endDate\)), or start and end|Must not be before startDate|Required with (endDate|start)|Must be after start|Must be a date of the calendar|Must be from 1970-01-02 to 9999-12-30|A closure lasts at most \d+ days)$/,
    why: "a plant closure: dates or instants (not both), the end after the start, a real calendar date, at most 366 days (the pattern states only YYYY-MM-DD)",
    between: true,
  },
  {
    type: "value_error",
    msg: /^The (machine|SKU) with id .* is not named /,
    why: "a reference by id and name: both must name the same record",
    between: true,
  },
];

/**
 * True when a 422 issue is one of the {@link RULES}; `dataOnly`: one about the stored data
 * only (a reference, a running shift), not a rule between the request's own fields, which an
 * example must keep.
 */
export const isRule = (issue: Issue, dataOnly = false) =>
  RULES.filter((r) => !dataOnly || !r.between).some(
    (r) =>
      (typeof r.type === "string" ? r.type === issue.type : r.type.test(issue.type)) &&
      r.msg.test(issue.msg),
  );
