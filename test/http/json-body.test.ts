/**
 * Request bodies: read only after authentication on /v1, and every text in them is
 * well-formed Unicode.
 */
import { describe, expect, it } from "vitest";
import { PUBLIC_MAX_BODY_BYTES } from "../../src/http/json-body";
import { api, call, createCompany, operator } from "../harness";

const UNAUTHENTICATED = { detail: "Not authenticated" };

function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

describe("authentication before the body on /v1", () => {
  it("answers an anonymous or wrongly keyed malformed or non-JSON body with 401", async () => {
    const cases: { type: string; body: string }[] = [
      { type: "application/json", body: "{" },
      { type: "application/json", body: "not json" },
      { type: "text/plain", body: "hello" },
      { type: "application/x-www-form-urlencoded", body: "a=1" },
    ];
    const credentials: Record<string, string>[] = [{}, { "x-api-key": "pm_not-a-key" }];
    for (const credential of credentials) {
      for (const { type, body } of cases) {
        const res = await call("/v1/skus", {
          method: "POST",
          headers: { "content-type": type, ...credential },
          body,
        });
        expect(res.status, `${type} ${body}`).toBe(401);
        expect(await res.json()).toEqual(UNAUTHENTICATED);
      }
    }
    // Streamed (no Content-Length): not read either.
    const streamed = await call("/v1/skus", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: streamOf("{not json"),
      // @ts-expect-error: `duplex` is required for stream bodies by the Fetch standard.
      duplex: "half",
    });
    expect(streamed.status).toBe(401);
  });

  it("still answers 415 and 422 json_invalid to an authenticated caller, and 413 to anyone", async () => {
    const co = await createCompany();
    const bad = await api(co.key, "/v1/skus", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      detail: [{ loc: ["body"], msg: "Body is not valid JSON", type: "json_invalid" }],
    });
    const text = await api(co.key, "/v1/skus", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "hello",
    });
    expect(text.status).toBe(415);
    const tooLarge = await call("/v1/skus", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(PUBLIC_MAX_BODY_BYTES + 1),
      },
      body: "x".repeat(PUBLIC_MAX_BODY_BYTES + 1),
    });
    expect(tooLarge.status).toBe(413);
  });
});

describe("well-formed Unicode", () => {
  it("refuses a lone surrogate in any string or key with 422 naming it", async () => {
    const co = await createCompany();
    const cases: { body: string; loc: (string | number)[] }[] = [
      { body: '[{"sku": "U\\ud800"}]', loc: ["body", 0, "sku"] },
      { body: '[{"sku": "ok", "name": "\\udfff tail"}]', loc: ["body", 0, "name"] },
      {
        body: '[{"sku": "ok"}, {"sku": "x", "description": "a\\ud83d"}]',
        loc: ["body", 1, "description"],
      },
      { body: '[{"sku": "ok", "\\ud800": 1}]', loc: ["body", 0, "\ud800"] },
    ];
    for (const { body, loc } of cases) {
      const res = await api(co.key, "/v1/skus", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[]; type: string }[] }).detail;
      expect(detail).toEqual([expect.objectContaining({ loc, type: "value_error.unicode" })]);
    }
    const search = await api(co.key, "/v1/skus/filters", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"skus": {"search": "\\ud800"}}',
    });
    expect(search.status).toBe(422);
    // The operator API too.
    const company = await operator("POST", "/companies", [{ name: "Bad \ud800", timezone: "UTC" }]);
    expect(company.status).toBe(422);
  });

  it("finds a lone surrogate 20,000 levels deep without failing (422, not 500)", async () => {
    const co = await createCompany();
    const depth = 20_000;
    const body = `${'{"a":'.repeat(depth)}"\\ud800"${"}".repeat(depth)}`;
    const res = await api(co.key, "/v1/skus/filters", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as { detail: { loc: unknown[]; type: string }[] }).detail;
    expect(detail[0]?.type).toBe("value_error.unicode");
    expect(detail[0]?.loc).toHaveLength(depth + 1);
  });

  it("keeps surrogate pairs (astral characters) exactly", async () => {
    const co = await createCompany();
    const name = "Emoji \u{1F600} \ud83d\ude00";
    const res = await api(co.key, "/v1/skus", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([{ sku: "E-1", name }]),
    });
    expect(res.status).toBeLessThan(300);
    expect(((await res.json()) as { name: string }[])[0]?.name).toBe(name);
  });
});
