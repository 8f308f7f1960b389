/**
 * The generated clients follow the Worker: the documents committed next to their generated
 * types (clients/typescript/src/generated/, scripts/lib/generated/) are the ones the Worker
 * serves, byte for byte as `npm run client:generate` writes them (2-space JSON, the Worker's
 * key order, a final newline), so a change that only reorders the document is seen too. On a
 * failure, run `npm run client:generate` and commit what it writes.
 */
import { describe, expect, it } from "vitest";
import publicDocument from "../../clients/typescript/src/generated/openapi.json?raw";
import operatorDocument from "../../scripts/lib/generated/operator-openapi.json?raw";
import { call, OPERATOR_TOKEN } from "../harness";

describe("the generated clients", () => {
  it.each([
    ["/openapi.json", publicDocument],
    ["/operator/v1/openapi.json", operatorDocument],
  ])("were generated from the %s the Worker serves", async (path, committed) => {
    // The operator document needs the operator token; the public one ignores it.
    const served = await (
      await call(path, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
    ).json();
    // As e2e/generate-client.ts's documentText writes it.
    const text = `${JSON.stringify(served, null, 2)}\n`;
    expect(text === committed, "stale: run `npm run client:generate`").toBe(true);
  });
});
