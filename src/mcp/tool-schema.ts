/**
 * A tool's arguments schema exactly as strict as the tool (docs/mcp.md, "Arguments"): made by
 * the generator of the OpenAPI documents from the REST twin's own Zod schema, so `tools/list`
 * states what `/openapi.json` states (integers with their bounds, the instants' pattern, "id
 * or name" as `anyOf`, closed objects), and checked on every call, so a value the schema
 * forbids is refused even where the Zod schema would read it (a path integer's digits).
 */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { type OutputUnit, Validator } from "@cfworker/json-schema";
import type { z } from "@hono/zod-openapi";
import type { ValidationIssue } from "../http/errors";

const DIALECT = "https://json-schema.org/draft/2020-12/schema";
const ROOT = "ToolArguments";

/**
 * The JSON Schema (2020-12) of a tool's arguments: the OpenAPI 3.1 schema the REST documents
 * give `input` (the same generator, so the same metadata: bounds, patterns, `anyOf`,
 * examples), the components it names moved to `$defs`.
 *
 * @param input the tool's Zod object (the REST twin's body, query or path schema).
 * @returns a self-contained schema object (`type: "object"`).
 */
export function argumentsSchemaOf(input: z.ZodObject): Record<string, unknown> {
  const registry = new OpenAPIRegistry();
  registry.register(ROOT, input);
  const { components } = new OpenApiGeneratorV31(registry.definitions).generateComponents();
  const { [ROOT]: root, ...defs } = JSON.parse(
    JSON.stringify(components?.schemas ?? {}).replaceAll('"#/components/schemas/', '"#/$defs/'),
  ) as Record<string, Record<string, unknown>>;
  if (!root) throw new Error("the generator gave no schema of the arguments");
  return {
    $schema: DIALECT,
    ...root,
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
  };
}

/** `schema` with `format` left out: an annotation in 2020-12; the patterns carry the rules. */
function withoutFormats(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutFormats);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === "format" && typeof value === "string"))
      .map(([key, value]) => [key, withoutFormats(value)]),
  );
}

/** An `instanceLocation` (`#/machines/include/0`) as a `loc` under `arguments`. */
function locOf(unit: OutputUnit): (string | number)[] {
  const steps = unit.instanceLocation
    .replace(/^#\/?/, "")
    .split("/")
    .filter((step) => step !== "")
    .map((step) => decodeURIComponent(step).replaceAll("~1", "/").replaceAll("~0", "~"));
  return ["arguments", ...steps.map((step) => (/^\d+$/.test(step) ? Number(step) : step))];
}

/**
 * Checks arguments against the schema `tools/list` gives, for what a Zod schema reads more
 * leniently than it is documented (run after the Zod schema accepted them).
 *
 * @param schema from {@link argumentsSchemaOf}.
 * @returns a check: the 422 issues of a value the schema forbids (each at the deepest place
 *   the validator names, type `schema.<keyword>`), or `[]`.
 */
export function argumentsCheck(
  schema: Record<string, unknown>,
): (args: unknown) => ValidationIssue[] {
  let validator: Validator | undefined;
  return (args) => {
    validator ??= new Validator(withoutFormats(schema) as object, "2020-12", false);
    const { valid, errors } = validator.validate(args);
    if (valid) return [];
    // The validator also names each enclosing keyword (`properties`, `$ref`); the deepest
    // place is where the value is wrong.
    const depth = Math.max(...errors.map((unit) => locOf(unit).length));
    return errors
      .filter((unit) => locOf(unit).length === depth)
      .map((unit) => ({ loc: locOf(unit), msg: unit.error, type: `schema.${unit.keyword}` }));
  };
}
