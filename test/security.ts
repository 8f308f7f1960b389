/**
 * Shared security tests, run against every public route of a resource:
 * no credential gives 401, a credential lacking the route's scope gives 403
 * naming it, and an id of another company gives 404 (never 403, never data).
 *
 * Usage, inside a test file:
 *
 *   describeSecurity("SKUs", {
 *     routes: [
 *       { method: "POST", path: "/v1/skus", scope: "skus.create", body: [{ sku: "A" }] },
 *       { method: "GET", path: "/v1/skus/{id}", scope: "skus.read" },
 *     ],
 *     createForeignId: async (owner) => ...create a record in `owner`, return its id...,
 *   });
 *
 * `{id}` in a path is replaced by a placeholder for the 401/403 checks and by
 * the other company's id for the 404 check.
 */
import { describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../src/auth/scopes";
import { api, call, createCompany, createKey, type TestCompany } from "./harness";

export interface SecuredRoute {
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT";
  /** Path; `{id}` stands for a record id. */
  path: string;
  /** The one scope the route needs. */
  scope: string;
  /** JSON body to send (a valid one, so that only the credential can fail). */
  body?: unknown;
}

const ID_PLACEHOLDER = "{id}";

function withId(path: string, id: string | number): string {
  return path.replaceAll(ID_PLACEHOLDER, encodeURIComponent(String(id)));
}

function init(route: SecuredRoute): RequestInit & { json?: unknown } {
  return { method: route.method, ...(route.body === undefined ? {} : { json: route.body }) };
}

/**
 * Asserts that every route answers 401 `{"detail": "Not authenticated"}` without a credential.
 *
 * @param placeholderId the value put in place of `{id}`.
 */
export async function expectUnauthenticated(
  routes: readonly SecuredRoute[],
  placeholderId: string | number,
): Promise<void> {
  for (const route of routes) {
    const res = await call(withId(route.path, placeholderId), {
      method: route.method,
      headers: route.body === undefined ? {} : { "content-type": "application/json" },
      body: route.body === undefined ? undefined : JSON.stringify(route.body),
    });
    expect(res.status, `${route.method} ${route.path}`).toBe(401);
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
  }
}

/**
 * Asserts that every route answers 403 with the exact text naming its scope to a
 * key holding every scope but that one.
 */
export async function expectMissingScope(
  company: TestCompany,
  routes: readonly SecuredRoute[],
  placeholderId: string | number,
): Promise<void> {
  for (const route of routes) {
    const key = await createKey(
      company.id,
      ALL_SCOPES.filter((s) => s !== route.scope),
    );
    const res = await api(key, withId(route.path, placeholderId), init(route));
    expect(res.status, `${route.method} ${route.path}`).toBe(403);
    expect(await res.json()).toEqual({
      detail: `Not enough permissions. Missing scope: ${route.scope}`,
    });
  }
}

/**
 * Asserts that every route whose path holds `{id}` answers 404 to a key of
 * `intruder` (holding every scope) for an id of another company.
 */
export async function expectForeignIdNotFound(
  intruder: TestCompany,
  routes: readonly SecuredRoute[],
  foreignId: string | number,
): Promise<void> {
  for (const route of routes.filter((r) => r.path.includes(ID_PLACEHOLDER))) {
    const res = await api(intruder.key, withId(route.path, foreignId), init(route));
    expect(res.status, `${route.method} ${route.path}`).toBe(404);
    const body = (await res.json()) as { detail: unknown };
    expect(typeof body.detail).toBe("string");
  }
}

/**
 * Registers the three security tests for a resource's routes.
 *
 * @param name describe-block name.
 * @param options.routes every route of the resource.
 * @param options.placeholderId a well-formed id used for the 401/403 checks.
 * @param options.createForeignId creates a record in the given company and
 *   returns its id, for the 404 check.
 * @param options.checkOwnerRecord optional: runs after the intruder's calls to
 *   confirm the owner's record is still there, unchanged (so that the 404 was
 *   about the company and the intruder's PATCH or DELETE did nothing).
 */
export function describeSecurity(
  name: string,
  options: {
    routes: readonly SecuredRoute[];
    placeholderId: string | number;
    createForeignId?: (owner: TestCompany) => Promise<string | number>;
    checkOwnerRecord?: (owner: TestCompany, id: string | number) => Promise<void>;
  },
): void {
  describe(`${name}: security`, () => {
    it("answers 401 without a credential on every route", async () => {
      await expectUnauthenticated(options.routes, options.placeholderId);
    });

    it("answers 403 naming the scope when the key lacks it, on every route", async () => {
      const company = await createCompany();
      await expectMissingScope(company, options.routes, options.placeholderId);
    });

    const create = options.createForeignId;
    if (create) {
      it("answers 404 to another company's id on every route that takes one", async () => {
        const owner = await createCompany();
        const intruder = await createCompany();
        const id = await create(owner);
        await expectForeignIdNotFound(intruder, options.routes, id);
        await options.checkOwnerRecord?.(owner, id);
      });
    }
  });
}
