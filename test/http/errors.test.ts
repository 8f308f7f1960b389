import { describe, expect, it } from "vitest";
import { api, call, createCompany, OPERATOR_TOKEN } from "../harness";

interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  components?: {
    securitySchemes?: Record<string, { type: string; scheme?: string; name?: string }>;
  };
  paths: Record<
    string,
    Record<
      string,
      {
        "x-required-scope"?: string;
        "x-required-scope-by"?: { field: string; scopes: Record<string, string> };
        description?: string;
      }
    >
  >;
}

const HTTP_METHODS = new Set(["get", "post", "put", "patch", "delete"]);

describe("error bodies", () => {
  it("answers an unknown route with 404 {detail: 'Not Found'}", async () => {
    const co = await createCompany();
    for (const path of ["/nope", "/v1/nope", "/v2/machines", "/operator/v1/nope"]) {
      const res = await api(co.key, path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ detail: "Not Found" });
      expect(res.headers.get("content-type")).toContain("application/json");
    }
  });

  it("puts a distinct X-Request-Id on every response, success or error", async () => {
    const co = await createCompany();
    const responses = [
      await api(co.key, "/v1/machines"),
      await call("/v1/machines"),
      await api(co.key, "/nope"),
      await api(co.key, "/v1/machines/not-a-uuid/signals"),
      await call("/operator/v1/companies"),
      await call("/operator/v1/companies", {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "text/plain" },
        body: "hello",
      }),
      await call("/openapi.json"),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 422, 401, 415, 200]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/\S{8,}/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("answers a malformed JSON body with 422 json_invalid", async () => {
    for (const body of ["{", '[{"name": "x",]', "not json"]) {
      const res = await call("/operator/v1/companies", {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(422);
      expect(await res.json()).toEqual({
        detail: [{ loc: ["body"], msg: "Body is not valid JSON", type: "json_invalid" }],
      });
    }
  });

  it("answers a body of another content type with 415", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      const res = await call("/operator/v1/companies", {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": type },
        body: JSON.stringify([{ name: "X", timezone: "UTC" }]),
      });
      expect(res.status, type).toBe(415);
      expect(await res.json()).toEqual({ detail: "Content-Type must be application/json" });
    }
    // A JSON media type with parameters is fine.
    const ok = await call("/operator/v1/companies", {
      method: "POST",
      headers: {
        authorization: `Bearer ${OPERATOR_TOKEN}`,
        "content-type": "application/json; charset=utf-8",
      },
      body: JSON.stringify([{ name: `Charset ${crypto.randomUUID()}`, timezone: "UTC" }]),
    });
    expect(ok.status).toBe(201);
  });
});

describe("a 422 lists every problem of the request at once", () => {
  const locs = async (res: Response) => {
    expect(res.status, await res.clone().text()).toBe(422);
    return ((await res.json()) as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc);
  };

  it("reports an invalid path together with an invalid query, path first", async () => {
    const co = await createCompany();
    const res = await api(
      co.key,
      "/v1/machines/not-a-uuid/signals/also-not?start_time=yesterday&agg_unit=w&transpose=maybe",
    );
    const found = await locs(res);
    expect(found).toEqual(
      expect.arrayContaining([
        ["path", "machine_uuid"],
        ["path", "public_id"],
        ["query", "start_time"],
        ["query", "end_time"],
        ["query", "agg_unit"],
        ["query", "transpose"],
      ]),
    );
    expect(found[0]?.[0]).toBe("path");
    expect(found.at(-1)?.[0]).toBe("query");
  });

  it("reports an invalid path together with an invalid body", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/production-logs/not-a-uuid", {
      method: "PATCH",
      json: { count: -1, colour: "red" },
    });
    expect(await locs(res)).toEqual([
      ["path", "production_log_id"],
      ["body", "count"],
      ["body", "colour"],
    ]);
    const sku = await api(co.key, "/v1/realtime/0/sku", {
      method: "POST",
      json: { quantity: "many" },
    });
    expect(await locs(sku)).toEqual([
      ["path", "machine_id"],
      ["body", "quantity"],
    ]);
  });
});

describe("the OpenAPI document and the docs page", () => {
  it("publishes OpenAPI 3.1, version 0.1.0, both security schemes and a scope per operation", async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApiDocument;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe("0.1.0");
    expect(doc.components?.securitySchemes?.ApiKeyAuth).toMatchObject({
      type: "apiKey",
      name: "x-api-key",
    });
    expect(doc.components?.securitySchemes?.BearerAuth).toMatchObject({
      type: "http",
      scheme: "bearer",
    });

    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => HTTP_METHODS.has(method))
        .map(([method, op]) => ({ path, method, op })),
    );
    expect(operations.length).toBeGreaterThan(0);
    expect(operations.map((o) => `${o.method} ${o.path}`)).toEqual(
      expect.arrayContaining([
        "get /v1/machines",
        "get /v1/machines/{machine_uuid}/signals",
        "get /v1/machines/{machine_uuid}/signals/{public_id}",
      ]),
    );
    for (const { path, method, op } of operations) {
      // One scope, or (the exports) the one a field of the request picks.
      const by = op["x-required-scope-by"];
      const scopes = by ? Object.values(by.scopes) : [op["x-required-scope"]];
      expect(scopes.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const scope of scopes) {
        expect(scope, `${method} ${path}`).toMatch(/^[a-z_]+\.(read|create|update|delete|write)$/);
        expect(op.description, `${method} ${path}`).toContain(`\`${scope}\``);
      }
    }
    const signalData = doc.paths["/v1/machines/{machine_uuid}/signals/{public_id}"]?.get;
    expect(signalData?.["x-required-scope"]).toBe("signals.read");
    // The operator API is not part of the public document.
    expect(Object.keys(doc.paths).some((p) => p.startsWith("/operator"))).toBe(false);
  });

  it("serves the operator API's own OpenAPI document, to the operator token only", async () => {
    const co = await createCompany();
    for (const headers of [
      {},
      { authorization: "Bearer wrong-token" },
      { "x-api-key": co.key },
    ] as Record<string, string>[]) {
      const refused = await call("/operator/v1/openapi.json", { headers });
      expect(refused.status, JSON.stringify(headers)).toBe(401);
      expect(await refused.json()).toEqual({ detail: "Not authenticated" });
    }
    const res = await call("/operator/v1/openapi.json", {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApiDocument;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/companies"]));
    expect(Object.keys(doc.paths).some((p) => p.startsWith("/v1/"))).toBe(false);
  });

  it("serves the docs page as HTML", async () => {
    const res = await call("/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toMatch(/<html/i);
    expect(html).toContain('"url":"/openapi.json"');
  });

  it("serves every file the docs page loads from this Worker, none from elsewhere", async () => {
    const html = await (await call("/docs")).text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1] ?? "");
    expect(refs).toHaveLength(2);
    for (const ref of refs) {
      // Same origin: a path, never a scheme or a protocol-relative host (a CDN).
      expect(ref).toMatch(/^\/[^/]/);
      const asset = await call(ref);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get("x-request-id")).toBeTruthy();
      const body = new Uint8Array(await asset.arrayBuffer());
      expect(body.byteLength, ref).toBeGreaterThan(0);
    }
    const bundle = await call("/docs/assets/swagger-ui-bundle.js");
    expect(bundle.headers.get("content-type")).toMatch(/javascript/);
    expect(await bundle.text()).toContain("SwaggerUIBundle");
    const css = await call("/docs/assets/swagger-ui.css");
    expect(css.headers.get("content-type")).toMatch(/text\/css/);
  });

  it("serves a landing page at / whose every link works", async () => {
    const res = await call("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    const links = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1] ?? "");
    expect(links).toEqual(expect.arrayContaining(["/docs", "/openapi.json", "/operator/docs"]));
    for (const link of links) {
      expect(link).toMatch(/^\/[^/]/);
      expect((await call(link)).status, link).toBe(200);
    }
  });

  it("serves the operator docs page, which asks for the token and sends it with every request", async () => {
    const res = await call("/operator/docs");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('"url":"/operator/v1/openapi.json"');
    expect(html).toContain('type="password"');
    expect(html).toContain("sessionStorage");
    expect(html).toContain('"Bearer " + token');
    const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1] ?? "");
    for (const ref of refs) expect((await call(ref)).status, ref).toBe(200);
  });

  it("serves the plant board and its script from this Worker, the key never in a URL", async () => {
    const res = await call("/board");
    expect(res.status).toBe(200);
    const html = await res.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1] ?? "");
    expect(refs).toEqual(["/favicon.svg", "/board/board.js"]);
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const icon = await call(path);
      expect(icon.status, path).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/svg+xml");
      expect(await icon.text()).toContain("<svg");
    }
    const script = await call("/board/board.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    expect(script.headers.get("etag")).toBeTruthy();
    const text = await script.text();
    expect(text).toContain('"x-api-key": options.apiKey');
    expect(text).toContain("sessionStorage");
    // The key goes in a header only: no query string is ever built from it.
    expect(text).not.toMatch(/[?&](api_?key|key)=/i);
  });

  it("revalidates a docs file by its ETag", async () => {
    const first = await call("/docs/assets/swagger-ui.css");
    await first.arrayBuffer();
    const etag = first.headers.get("etag");
    expect(etag).toBeTruthy();
    const again = await call("/docs/assets/swagger-ui.css", {
      headers: { "if-none-match": etag ?? "" },
    });
    expect(again.status).toBe(304);
  });

  it("keeps the rest of the Swagger UI package unreachable", async () => {
    for (const path of [
      "/docs/assets/index.html",
      "/docs/assets/package.json",
      "/docs/assets/swagger-ui-bundle.js.map",
      "/docs/assets/..%2Fpackage.json",
      "/package.json",
      "/swagger-ui-bundle.js",
    ]) {
      const res = await call(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ detail: "Not Found" });
    }
  });
});
