/**
 * What the operator CLI checks before it calls the API, with the API's own rules, so that
 * a mistake is named in terms of the command's options rather than of a 422's `loc`.
 * The signal rules are the API's zod schema itself (src/operator/signals/signal-input.ts); a signal
 * whose name and display name repeat on its machine is refused by the API (409), which is
 * the only place that sees the machine's signals.
 */
import { isKnownScope } from "../../src/auth/scopes";
import { SignalCreate } from "../../src/operator/signals/signal-input";
import type { SignalInput } from "./operator-api";
import { ALL_SCOPES, READ_SCOPES } from "./scopes";

/** A mistake in the command line (the CLI exits with 2 and prints the command's usage). */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The CLI option of each field of a signal, for messages. */
const SIGNAL_OPTIONS: Record<string, string> = {
  publicId: "--public-id",
  name: "--name",
  displayName: "--display-name",
  kind: "--kind",
  "description.en": "--description-en",
  "description.es": "--description-es",
};

/**
 * Reads `--scopes`.
 *
 * @param text `all` (every scope a public route requires), `read` (the `.read` ones of those),
 *   or a comma-separated list.
 * @returns the scopes, and a warning per listed scope that the API knows but no route requires.
 * @throws UsageError on an empty list or a scope the API does not know (the API's 422).
 */
export function parseScopes(text: string): { scopes: readonly string[]; warnings: string[] } {
  if (text === "all") return { scopes: ALL_SCOPES, warnings: [] };
  if (text === "read") return { scopes: READ_SCOPES, warnings: [] };
  const scopes = [
    ...new Set(
      text
        .split(",")
        .map((scope) => scope.trim())
        .filter((scope) => scope !== ""),
    ),
  ];
  if (scopes.length === 0) throw new UsageError("--scopes is empty");
  const unknown = scopes.filter((scope) => !isKnownScope(scope));
  if (unknown.length > 0) {
    throw new UsageError(
      `--scopes: unknown ${unknown.join(", ")}; the scopes routes require: ${ALL_SCOPES.join(", ")}`,
    );
  }
  const warnings = scopes
    .filter((scope) => !ALL_SCOPES.includes(scope))
    .map((scope) => `Warning: no route requires ${scope}; the key gets it, and nothing with it.`);
  return { scopes, warnings };
}

/**
 * Checks a signal to create with the API's own schema.
 *
 * @param input the signal as the options give it (`kind: null` for `--no-kind`).
 * @returns the signal as the API will store it (names trimmed).
 * @throws UsageError naming each wrong option and why.
 */
export function checkSignal(input: SignalInput): SignalInput {
  const parsed = SignalCreate.safeParse(input);
  if (parsed.success) return parsed.data as SignalInput;
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.join(".");
    return `${SIGNAL_OPTIONS[field] ?? field}: ${issue.message}`;
  });
  throw new UsageError(problems.join("; "));
}

/**
 * Reads the quota of a `RateLimit-Policy` field as the Worker writes it
 * (`"default";q=600;w=60`, draft-ietf-httpapi-ratelimit-headers: `q` requests per `w`
 * seconds), so that the CLI can say a new key's effective limit when the key has none of
 * its own (the operator API answers `rateLimit: null` for "the deployment's default").
 *
 * @param field the field's value, or null when the answer had none.
 * @returns `{requests, periodSeconds}`, or null when the field is absent or has no `q`/`w`.
 */
export function parseRateLimitPolicy(
  field: string | null,
): { requests: number; periodSeconds: number } | null {
  if (!field) return null;
  const q = /;\s*q=(\d+)/.exec(field)?.[1];
  const w = /;\s*w=(\d+)/.exec(field)?.[1];
  if (q === undefined || w === undefined) return null;
  return { requests: Number(q), periodSeconds: Number(w) };
}
