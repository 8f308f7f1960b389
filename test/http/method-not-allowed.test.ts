/**
 * 405 with `Allow` for a known path asked with another verb, on every path of both OpenAPI
 * documents (read from the documents, so a new route is covered at once); 404 stays for
 * unknown paths; the operator's paths are told only to the operator.
 */
import { describe, expect, it } from "vitest";
import { api, call, createCompany, OPERATOR_TOKEN } from "../harness";

const VERBS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

interface Doc {
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;
}

/** A concrete path for a templated one: routing, not validation, decides a 405. */
const concrete = (template: string) => template.replaceAll(/\{[^}]+\}/g, "7");

async function documentPaths(path: string, prefix: string): Promise<[string, string[]][]> {
  const res = await call(path, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  expect(res.status).toBe(200);
  const doc = (await res.json()) as Doc;
  return Object.entries(doc.paths).map(([p, item]) => [
    prefix + p,
    Object.keys(item).map((m) => m.toUpperCase()),
  ]);
}

function expectAllow(res: Response, documented: string[], where: string): void {
  const allow = (res.headers.get("allow") ?? "").split(", ");
  for (const method of documented) expect(allow, where).toContain(method);
  for (const method of allow) {
    expect([...documented, "HEAD", "OPTIONS"], where).toContain(method);
  }
  if (documented.includes("GET")) expect(allow, where).toContain("HEAD");
}

describe("a known path with another verb", () => {
  it("is a 405 with Allow and the error body, on every path of both documents", async () => {
    const co = await createCompany();
    const paths = [
      ...(await documentPaths("/openapi.json", "")),
      ...(await documentPaths("/operator/v1/openapi.json", "/operator/v1")),
    ];
    expect(paths.length).toBeGreaterThan(40);
    let checked = 0;
    for (const [template, documented] of paths) {
      const path = concrete(template);
      const headers: Record<string, string> = template.startsWith("/operator/")
        ? { authorization: `Bearer ${OPERATOR_TOKEN}` }
        : { "x-api-key": co.key };
      for (const verb of VERBS.filter((v) => !documented.includes(v))) {
        const res = await call(path, { method: verb, headers });
        const where = `${verb} ${path}`;
        expect(res.status, where).toBe(405);
        expect(await res.json(), where).toEqual({ detail: "Method Not Allowed" });
        expect(res.headers.get("content-type"), where).toMatch(/^application\/json/);
        expect(res.headers.get("x-request-id"), where).toMatch(/\S{8,}/);
        expectAllow(res, documented, where);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it("is answered before credentials, body or bookmark are read (public paths)", async () => {
    const res = await call("/v1/reports/metrics", {
      method: "DELETE",
      headers: { "content-type": "text/plain", "x-d1-bookmark": "not a bookmark" },
      body: "{",
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("OPTIONS, POST");
    expect(await res.json()).toEqual({ detail: "Method Not Allowed" });
  });

  it("tells an operator path's verbs only to the operator (401 without the token)", async () => {
    const res = await call("/operator/v1/companies", { method: "DELETE" });
    expect(res.status).toBe(401);
    expect(res.headers.get("allow")).toBeNull();
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
  });

  it("answers OPTIONS with 204 and Allow", async () => {
    const res = await call("/v1/skus/a0000000-0000-4000-8000-000000000001", { method: "OPTIONS" });
    expect(res.status).toBe(204);
    expect(res.headers.get("allow")).toBe("DELETE, GET, HEAD, OPTIONS, PATCH");
  });

  it("leaves unknown paths 404, whatever the verb, and /mcp the same 405", async () => {
    const co = await createCompany();
    for (const [verb, path] of [
      ["DELETE", "/v1/nope"],
      ["GET", "/v1/reports"],
      ["PUT", "/operator/v1/nope"],
      ["POST", "/v2/machines"],
    ] as const) {
      const res = await api(co.key, path, { method: verb });
      expect(res.status, `${verb} ${path}`).toBe(404);
      expect(await res.json()).toEqual({ detail: "Not Found" });
    }
    const mcp = await api(co.key, "/mcp", { method: "GET" });
    expect(mcp.status).toBe(405);
    expect(mcp.headers.get("allow")).toBe("OPTIONS, POST");
    expect(await mcp.json()).toEqual({ detail: "Method Not Allowed" });
  });

  it("keeps HEAD of a GET route working", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/machines", { method: "HEAD" });
    expect(res.status).toBe(200);
  });
});
