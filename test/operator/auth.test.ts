/**
 * The operator token check (src/operator/auth.ts): every way of not giving the token,
 * malformed headers included, is the same documented 401 with its challenge and the
 * request id; the right token opens the route.
 */
import { describe, expect, it } from "vitest";
import { call, OPERATOR_TOKEN } from "../harness";

describe("the operator token", () => {
  it("is refused with 401 {detail} and the operator challenge, however it is wrong", async () => {
    for (const authorization of [
      undefined,
      "",
      `Basic ${OPERATOR_TOKEN}`,
      "Bearer",
      `Bearer ${OPERATOR_TOKEN} extra`,
      `Bearer ${OPERATOR_TOKEN}x`,
      `Bearer ${OPERATOR_TOKEN.slice(0, -1)}`,
      "Bearer not@a:token",
    ]) {
      const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
      const res = await call("/operator/v1/companies", { headers });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="operator"');
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(await res.json()).toEqual({ detail: "Not authenticated" });
    }
  });

  it("opens the route with the token, whatever the case of `Bearer`", async () => {
    for (const scheme of ["Bearer", "bearer"]) {
      const res = await call("/operator/v1/companies", {
        headers: { authorization: `${scheme} ${OPERATOR_TOKEN}` },
      });
      expect(res.status, scheme).toBe(200);
    }
  });
});
