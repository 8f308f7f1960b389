/**
 * Query-string parameter schemas shared by the public routes.
 */
import { z } from "@hono/zod-openapi";

/**
 * The spellings of a boolean that FastAPI and pydantic accept in a query string
 * (pydantic's `bool` parsing), compared case-insensitively: Python's `requests`
 * sends `True`, a shell user types `yes` or `1`.
 */
const TRUE_SPELLINGS = ["true", "1", "yes", "on", "t", "y"] as const;
const FALSE_SPELLINGS = ["false", "0", "no", "off", "f", "n"] as const;

/**
 * A boolean query parameter: one of `TRUE_SPELLINGS` or `FALSE_SPELLINGS` in any
 * case, parsed to `true`/`false`; `defaultValue` when absent. Anything else is a
 * 422 listing the accepted spellings. The OpenAPI document shows `type: boolean`
 * with the default (a generated client sends `true`/`false`).
 *
 * @param defaultValue the value of an absent parameter.
 * @param description the parameter's OpenAPI description.
 */
export function queryBoolean(defaultValue: boolean, description: string) {
  return z
    .stringbool({
      truthy: [...TRUE_SPELLINGS],
      falsy: [...FALSE_SPELLINGS],
      case: "insensitive",
      error: `Input should be a valid boolean: one of ${[...TRUE_SPELLINGS, ...FALSE_SPELLINGS].join(", ")} (any case)`,
    })
    .default(defaultValue)
    .openapi({
      type: "boolean",
      default: defaultValue,
      description: `${description} Also accepted: ${TRUE_SPELLINGS.slice(1).join("/")} for true, ${FALSE_SPELLINGS.slice(1).join("/")} for false, in any case.`,
    });
}
