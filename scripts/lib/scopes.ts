/**
 * The scopes a key issued by the scripts can carry: exactly those that public routes
 * require, read from the API's own document (each operation's `x-required-scope`, or the
 * scopes of its `x-required-scope-by`, which `publicRoute(scope, ...)` in
 * src/app-chain/public-route.ts writes). The document is the committed
 * `clients/typescript/src/generated/openapi.json`, which `npm test` keeps equal to the one
 * the Worker serves. The Worker knows a few more scopes (src/auth/scopes.ts: every section
 * with read, create, update and delete) that no route asks for; granting them gives nothing.
 */
import publicDocument from "../../clients/typescript/src/generated/openapi.json";
import { ALL_SCOPES as KNOWN_SCOPES } from "../../src/auth/scopes";

/** The part of an OpenAPI document read here. */
export interface ScopedDocument {
  paths: Record<string, Record<string, unknown>>;
}

/**
 * The scopes the operations of a document require.
 *
 * @param document an OpenAPI document whose operations carry `x-required-scope`.
 * @returns each scope once, in the order of src/auth/scopes.ts (unknown ones after, sorted).
 */
export function routeScopes(document: ScopedDocument): string[] {
  const used = new Set<string>();
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      if (operation === null || typeof operation !== "object") continue;
      const { "x-required-scope": scope, "x-required-scope-by": by } = operation as {
        "x-required-scope"?: unknown;
        "x-required-scope-by"?: { scopes?: Record<string, unknown> };
      };
      if (typeof scope === "string") used.add(scope);
      // An operation whose scope a request field picks (the exports): each it may need.
      for (const picked of Object.values(by?.scopes ?? {})) {
        if (typeof picked === "string") used.add(picked);
      }
    }
  }
  const known = KNOWN_SCOPES.filter((scope) => used.has(scope));
  const unknown = [...used].filter((scope) => !KNOWN_SCOPES.includes(scope)).sort();
  return [...known, ...unknown];
}

/** Every scope a public route requires (`--scopes all`, the demo's full-access keys). */
export const ALL_SCOPES: readonly string[] = routeScopes(
  publicDocument as unknown as ScopedDocument,
);

/** Only the `.read` scopes, for a read-only key (`--scopes read`). */
export const READ_SCOPES: readonly string[] = ALL_SCOPES.filter((scope) => scope.endsWith(".read"));
