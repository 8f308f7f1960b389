/**
 * The Node.js verification code of docs/webhooks.md, run as the document prints it (the
 * code block is imported by the `markdownSnippets` plugin of vitest.config.ts, not copied)
 * against real deliveries: a ping signed and sent by the Queue consumer, then one sent
 * during the 24 hours after a secret rotation, when the header carries two signatures.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { verifySignature } from "../../docs/webhooks.md?snippet=verify-node";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { ping, register, runMessages } from "../fixtures/webhook-harness";
import { operatorJson } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Pings the registration, runs the consumer on its message, returns the request received. */
async function deliveredPing(webhookId: string, url: string) {
  const { deliveryId } = await ping(webhookId);
  const result = await runMessages([{ deliveryId }]);
  expect(result.acked).toEqual(["m0"]);
  const got = net.at(url).at(-1);
  if (!got) throw new Error("no request received");
  return got;
}

describe("docs/webhooks.md, the Node.js verifySignature", () => {
  it("accepts real deliveries, also across a secret rotation, and refuses forgeries", async () => {
    const [company] = await operatorJson<{ id: number; webhookSecret: string }[]>(
      "POST",
      "/companies",
      [{ name: `Doc snippet ${crypto.randomUUID()}`, timezone: "UTC" }],
    );
    if (!company) throw new Error("no company");
    const oldSecret = company.webhookSecret;
    const endpoint = publicEndpoint(net);
    net.endpoints.set(endpoint.url, answers(204));
    const hook = await register(company.id, endpoint.url);

    const first = await deliveredPing(hook.id, endpoint.url);
    const header = first.headers.get("x-service-signature");
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(await verifySignature([oldSecret], first.body, header)).toBe(true);
    // Bytes as a Node server reads them (a Buffer is a Uint8Array).
    expect(await verifySignature([oldSecret], new TextEncoder().encode(first.body), header)).toBe(
      true,
    );
    expect(await verifySignature([`${oldSecret}x`], first.body, header)).toBe(false);
    expect(await verifySignature([oldSecret], `${first.body} `, header)).toBe(false);
    expect(await verifySignature([oldSecret], first.body.replace("ping", "pong"), header)).toBe(
      false,
    );
    expect(await verifySignature([oldSecret], first.body, null)).toBe(false);
    expect(await verifySignature([oldSecret], first.body, "sha256=")).toBe(false);

    const { webhookSecret: newSecret } = await operatorJson<{ webhookSecret: string }>(
      "POST",
      `/companies/${company.id}/webhook-secret/rotate`,
    );
    const second = await deliveredPing(hook.id, endpoint.url);
    const both = second.headers.get("x-service-signature");
    expect(both).toMatch(/^sha256=[0-9a-f]{64},sha256=[0-9a-f]{64}$/);
    // A receiver holding only the old secret, only the new one, or both: all verify.
    expect(await verifySignature([oldSecret], second.body, both)).toBe(true);
    expect(await verifySignature([newSecret], second.body, both)).toBe(true);
    expect(await verifySignature([newSecret, oldSecret], second.body, both)).toBe(true);
    expect(await verifySignature(["whsec_unrelated"], second.body, both)).toBe(false);
    // The new signature comes first.
    const [newPart] = (both ?? "").split(",");
    expect(await verifySignature([newSecret], second.body, newPart)).toBe(true);
    expect(await verifySignature([oldSecret], second.body, newPart)).toBe(false);
  });
});
