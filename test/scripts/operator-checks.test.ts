/**
 * The operator CLI's checks (scripts/lib/operator-checks.ts): `--scopes all` is exactly
 * the scopes the public routes require, and a signal passes the CLI exactly when the API
 * takes it.
 */
import { describe, expect, it } from "vitest";
import type { SignalInput } from "../../scripts/lib/operator-api";
import {
  checkSignal,
  parseRateLimitPolicy,
  parseScopes,
  UsageError,
} from "../../scripts/lib/operator-checks";
import { ALL_SCOPES as KNOWN_SCOPES } from "../../src/auth/scopes";
import { call, createCompany, createKey, createMachines, operator } from "../harness";

interface Document {
  paths: Record<
    string,
    Record<
      string,
      { "x-required-scope"?: string; "x-required-scope-by"?: { scopes: Record<string, string> } }
    >
  >;
}

describe("operator CLI: --scopes", () => {
  it("all = every scope a public route of the served document requires, and nothing else", async () => {
    const doc = (await (await call("/openapi.json")).json()) as Document;
    const required = new Set(
      Object.values(doc.paths).flatMap((ops) =>
        Object.values(ops).flatMap((op) =>
          op["x-required-scope-by"]
            ? Object.values(op["x-required-scope-by"].scopes)
            : [op["x-required-scope"]],
        ),
      ),
    );
    const { scopes, warnings } = parseScopes("all");
    expect(new Set(scopes)).toEqual(required);
    expect(scopes).toHaveLength(required.size);
    expect(warnings).toEqual([]);
    // The Worker knows scopes that no route asks for: `all` leaves them out.
    expect(scopes).not.toContain("machines.create");
    expect(KNOWN_SCOPES).toContain("machines.create");
    expect(parseScopes("read").scopes).toEqual(scopes.filter((s) => s.endsWith(".read")));
  });

  it("refuses an unknown scope, warns about one no route requires", () => {
    expect(() => parseScopes("skus.read,skus.admin")).toThrow(UsageError);
    expect(() => parseScopes(" , ")).toThrow("--scopes is empty");
    const { scopes, warnings } = parseScopes("skus.read, machines.create,skus.read");
    expect(scopes).toEqual(["skus.read", "machines.create"]);
    expect(warnings).toEqual([
      "Warning: no route requires machines.create; the key gets it, and nothing with it.",
    ]);
  });
});

describe("operator CLI: signals:create", () => {
  const base: SignalInput = { name: "power", displayName: "Power", kind: "analog" };
  const cases: [string, SignalInput][] = [
    ["valid", base],
    ["no kind", { ...base, kind: null }],
    ["empty kind", { ...base, kind: "" }],
    ["blank kind", { ...base, kind: "   " }],
    ["kind of 50", { ...base, kind: "k".repeat(50) }],
    ["kind of 51", { ...base, kind: "k".repeat(51) }],
    ["blank name", { ...base, name: " " }],
    ["name of 101", { ...base, name: "n".repeat(101) }],
    ["empty display name", { ...base, displayName: "" }],
    ["bad public id", { ...base, publicId: "nope" }],
    ["public id", { ...base, publicId: crypto.randomUUID() }],
    ["long description", { ...base, description: { en: "d".repeat(2001), es: "d" } }],
  ];

  it("passes a signal exactly when the API creates it", async () => {
    const co = await createCompany();
    const outcomes: [string, boolean, number][] = [];
    for (const [label, input] of cases) {
      const [machine] = await createMachines(co.id, [{ name: label }]);
      if (!machine) throw new Error("no machine");
      let cliAccepts = true;
      try {
        checkSignal(input);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        cliAccepts = false;
      }
      const status = (await operator("POST", `/machines/${machine.id}/signals`, [input])).status;
      outcomes.push([label, cliAccepts, status]);
    }
    expect(outcomes.filter(([, accepts, status]) => accepts !== (status === 201))).toEqual([]);
    expect(outcomes.filter(([, accepts]) => accepts).map(([label]) => label)).toEqual([
      "valid",
      "no kind",
      "kind of 50",
      "public id",
    ]);
  });

  it("names the option at fault", () => {
    expect(() => checkSignal({ ...base, kind: "" })).toThrow(/^--kind: /);
    expect(() => checkSignal({ ...base, publicId: "x", displayName: "" })).toThrow(
      /--public-id: .*; --display-name: /,
    );
    expect(checkSignal({ ...base, name: "  power " }).name).toBe("power");
  });
});

describe("operator CLI: api-keys:create says the effective rate limit", () => {
  it("reads the quota a key without its own limit gets from the Worker's RateLimit-Policy", async () => {
    const co = await createCompany();
    // A key without the scope of GET /v1/machines: its 403 carries the field too.
    const key = await createKey(co.id, ["skus.read"]);
    const res = await call("/v1/machines", { headers: { "x-api-key": key } });
    expect(res.status).toBe(403);
    expect(parseRateLimitPolicy(res.headers.get("ratelimit-policy"))).toEqual({
      requests: 600,
      periodSeconds: 60,
    });
  });

  it("reads a key's own limit, and nothing from an absent or foreign field", () => {
    expect(parseRateLimitPolicy('"key";q=100;w=30')).toEqual({ requests: 100, periodSeconds: 30 });
    expect(parseRateLimitPolicy(null)).toBeNull();
    expect(parseRateLimitPolicy("100;window=30")).toBeNull();
  });
});
