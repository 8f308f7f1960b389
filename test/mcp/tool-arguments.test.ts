/**
 * Every MCP tool's `inputSchema` exactly as strict as the tool, read from `tools/list` itself
 * (so a new tool is covered the day it is listed), as test/hardening/schema-contract.test.ts
 * checks the OpenAPI documents:
 *
 * - arguments the schema allows are accepted: no 422 issue from validation; only the rules a
 *   JSON Schema cannot state (test/fixtures/contract-rules.ts); a 404 or 409 is fine;
 * - arguments breaking one constraint of the schema (a type, a bound, a pattern, an enum, a
 *   required or unknown property, an item count, a branch) are refused at that place
 *   (`loc` under `arguments`).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Issue, isRule } from "../fixtures/contract-rules";
import { connect, type McpClient } from "../fixtures/mcp-client";
import { type Plant, plant } from "../fixtures/plant";
import {
  arbitraryOf,
  type Document,
  type Schema,
  type Violation,
  violationsOf,
} from "../fixtures/schema-arbitrary";

/** Generated calls per tool. */
const RUNS = 15;

interface ListedTool {
  name: string;
  inputSchema: Schema;
}

/** What a call answered: its error's `detail`, or nothing when it succeeded. */
type Answer = { ok: true } | { ok: false; detail: Issue[] | string };

let p: Plant;
let client: McpClient;
let tools: ListedTool[];

beforeAll(async () => {
  p = await plant(1);
  // The arguments' checks are the server's, the same in both eras: the current one.
  client = await connect({ "x-api-key": p.co.key }, "2026-07-28");
  tools = (await client.listTools()).tools as unknown as ListedTool[];
}, 60_000);

/**
 * The tool's schema as a document the generator reads: its `$defs` as components (the
 * generator follows `#/components/schemas/` references).
 */
function documentOf(tool: ListedTool): { doc: Document; schema: Schema } {
  const {
    $defs,
    $schema: _,
    ...schema
  } = JSON.parse(
    JSON.stringify(tool.inputSchema).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as Schema & { $defs?: Record<string, Schema> };
  return { doc: { paths: {}, components: { schemas: $defs ?? {} } }, schema };
}

async function callTool(name: string, args: unknown): Promise<Answer> {
  const answer = (await client.callTool({
    name,
    arguments: args as Record<string, unknown>,
  })) as { isError?: boolean; content: { text?: string }[] };
  if (!answer.isError) return { ok: true };
  return JSON.parse(answer.content[0]?.text ?? "{}") as Answer & { ok: false };
}

const issuesOf = (answer: Answer): Issue[] =>
  !answer.ok && Array.isArray(answer.detail) ? answer.detail : [];

/** A copy of `args` with `violation` applied at its place (`loc` starts at `arguments`). */
function breakArguments(args: unknown, violation: Violation): unknown {
  const inside = violation.loc.slice(1);
  const copy = JSON.parse(JSON.stringify(args)) as Record<string | number, unknown>;
  if (inside.length === 0) return violation.apply(copy);
  let node = copy;
  for (const key of inside.slice(0, -1)) {
    node = node[key] as Record<string | number, unknown>;
    if (node === null || typeof node !== "object") throw new Error(`no place ${violation.loc}`);
  }
  const last = inside[inside.length - 1] as string | number;
  if (violation.remove) delete node[last];
  else node[last] = violation.apply(node[last]);
  return copy;
}

describe("the MCP tools' inputSchema", () => {
  it("is listed for every tool, with the integer bounds and patterns of the REST documents", () => {
    expect(tools.length).toBeGreaterThanOrEqual(8);
    const machineNow = tools.find((t) => t.name === "machine_now");
    expect(machineNow?.inputSchema.properties).toMatchObject({
      machine_id: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
    });
    const signalData = tools.find((t) => t.name === "signal_data")?.inputSchema;
    expect(signalData?.properties).toMatchObject({
      agg_period: { type: "integer", minimum: 1 },
      start_time: { type: "string", pattern: expect.stringContaining("1970") },
    });
  });

  it("accepts what it allows: no 422 from validation, for every tool", async () => {
    const problems: string[] = [];
    for (const tool of tools) {
      const { doc, schema } = documentOf(tool);
      const details = await fc.check(
        fc.asyncProperty(arbitraryOf(doc, schema), async (args) => {
          const unexplained = issuesOf(await callTool(tool.name, args)).filter(
            (issue) => !isRule(issue),
          );
          if (unexplained.length > 0) {
            throw new Error(`${JSON.stringify(unexplained)}\n   for ${JSON.stringify(args)}`);
          }
        }),
        { numRuns: RUNS, seed: 42, endOnFailure: true },
      );
      if (details.failed) {
        const error = details.errorInstance;
        problems.push(`${tool.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(problems, problems.join("\n\n")).toEqual([]);
  }, 300_000);

  it("refuses what it forbids: an error at the loc of each broken constraint", async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const tool of tools) {
      const { doc, schema } = documentOf(tool);
      const [base] = fc.sample(arbitraryOf(doc, schema, true), { numRuns: 1, seed: 7 });
      for (const violation of violationsOf(doc, schema, ["arguments"], false)) {
        // The arguments themselves are an object by the protocol (the SDK's own check).
        if (violation.loc.length === 1) continue;
        const args = breakArguments(base, violation);
        const issues = issuesOf(await callTool(tool.name, args));
        checked++;
        const at = (i: Issue) =>
          violation.what.startsWith("matches no branch")
            ? JSON.stringify(i.loc.slice(0, violation.loc.length)) === JSON.stringify(violation.loc)
            : JSON.stringify(i.loc) === JSON.stringify(violation.loc);
        if (!issues.some(at)) {
          problems.push(
            `${tool.name}: ${violation.what} at ${JSON.stringify(violation.loc)}: ` +
              `${JSON.stringify(issues).slice(0, 300)}\n   for ${JSON.stringify(args).slice(0, 400)}`,
          );
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(problems, problems.join("\n\n")).toEqual([]);
  }, 300_000);

  it("refuses an integer written as text, which the schema does not allow", async () => {
    const answer = await callTool("machine_now", { machine_id: String(p.machines[0]?.id) });
    expect(issuesOf(answer)).toEqual([
      { loc: ["arguments", "machine_id"], msg: expect.any(String), type: "schema.type" },
    ]);
  });
});
