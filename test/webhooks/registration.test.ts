/**
 * Webhook registrations through the operator API, and the endpoint rules of
 * docs/webhooks.md as checked at registration (a refused URL is a 422 naming
 * the rule). The same rules run before every attempt (delivery.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { checkUrlShape, nonPublicRange, parseIPv6 } from "../../src/webhooks/url-safety";
import { type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import {
  clockAhead,
  deliveriesOf,
  ping,
  register,
  type Webhook,
} from "../fixtures/webhook-harness";
import { call, createCompany, operator } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
  clockAhead();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const CREATED = "MachineStopClassificationCreated";

/** Registers `url`; returns the status and body. */
async function tryRegister(companyId: number, url: string) {
  const res = await operator("POST", `/companies/${companyId}/webhooks`, [
    { name: "hook", url, eventType: CREATED },
  ]);
  return { status: res.status, body: (await res.json()) as unknown };
}

describe("registrations", () => {
  it("creates, lists and deletes registrations", async () => {
    const co = await createCompany();
    const a = publicEndpoint(net, "/a");
    const b = publicEndpoint(net, "/b");
    const res = await operator("POST", `/companies/${co.id}/webhooks`, [
      { name: "ERP", url: a.url, eventType: CREATED },
      { name: "BI", url: b.url, eventType: "MachineStopClassificationDeleted" },
    ]);
    expect(res.status).toBe(201);
    const created = (await res.json()) as Webhook[];
    expect(created).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: "ERP",
        url: a.url,
        eventType: CREATED,
        thresholdsMinutes: null,
        createdAt: expect.stringMatching(/Z$/),
      },
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: "BI",
        url: b.url,
        eventType: "MachineStopClassificationDeleted",
        thresholdsMinutes: null,
        createdAt: expect.stringMatching(/Z$/),
      },
    ]);
    const listed = await operator("GET", `/companies/${co.id}/webhooks`);
    expect(listed.status).toBe(200);
    // Listed oldest first, then by id (two made in the same batch share createdAt).
    const byAge = [...created].sort(
      (x, y) => x.createdAt.localeCompare(y.createdAt) || x.id.localeCompare(y.id),
    );
    expect(await listed.json()).toEqual(byAge);

    expect((await operator("DELETE", `/webhooks/${created[0]?.id}`)).status).toBe(204);
    expect((await operator("DELETE", `/webhooks/${created[0]?.id}`)).status).toBe(404);
    expect(await (await operator("GET", `/companies/${co.id}/webhooks`)).json()).toEqual([
      created[1],
    ]);
    // A deleted registration cannot be pinged; its deliveries stay listed.
    expect((await operator("POST", `/webhooks/${created[0]?.id}/ping`)).status).toBe(404);
    expect(await deliveriesOf(created[0]?.id ?? "")).toEqual([]);
  });

  it("keeps companies apart and answers 404 for unknown ids", async () => {
    const one = await createCompany();
    const two = await createCompany();
    const hook = await register(one.id, publicEndpoint(net).url);
    expect(await (await operator("GET", `/companies/${two.id}/webhooks`)).json()).toEqual([]);
    expect((await operator("GET", "/companies/999999999/webhooks")).status).toBe(404);
    expect((await tryRegister(999_999_999, publicEndpoint(net).url)).status).toBe(404);
    const unknown = crypto.randomUUID();
    expect((await operator("DELETE", `/webhooks/${unknown}`)).status).toBe(404);
    expect((await operator("POST", `/webhooks/${unknown}/ping`)).status).toBe(404);
    expect((await operator("GET", `/webhooks/${unknown}/deliveries`)).status).toBe(404);
    expect((await operator("DELETE", "/webhooks/not-a-uuid")).status).toBe(422);
    expect(hook.url).toMatch(/^https:/);
  });

  it("validates the body: one event type per registration, a name, no other field", async () => {
    const co = await createCompany();
    const url = publicEndpoint(net).url;
    const bad = await operator("POST", `/companies/${co.id}/webhooks`, [
      { name: "x", url, eventType: "Ping" },
      { name: "", url, eventType: CREATED },
      { name: "y", url, eventType: CREATED, secret: "mine" },
    ]);
    expect(bad.status).toBe(422);
    const { detail } = (await bad.json()) as { detail: { loc: unknown[] }[] };
    expect(detail.map((d) => d.loc)).toEqual([
      ["body", 0, "eventType"],
      ["body", 1, "name"],
      ["body", 2, "secret"],
    ]);
    expect((await operator("POST", `/companies/${co.id}/webhooks`, [])).status).toBe(422);
  });

  it("needs the operator token", async () => {
    const co = await createCompany();
    const res = await call(`/operator/v1/companies/${co.id}/webhooks`);
    expect(res.status).toBe(401);
  });

  it("lists deliveries newest first, by status, by page", async () => {
    const co = await createCompany();
    const hook = await register(co.id, publicEndpoint(net).url);
    const pings = [];
    for (let i = 0; i < 3; i += 1) pings.push(await ping(hook.id));
    const res = await operator("GET", `/webhooks/${hook.id}/deliveries?limit=2`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      totalCount: number;
      totalPages: number;
      currentPage: number;
      deliveries: {
        id: string;
        eventId: string;
        eventType: string;
        status: string;
        attempts: unknown[];
      }[];
    };
    expect(body).toMatchObject({ totalCount: 3, totalPages: 2, currentPage: 1 });
    expect(body.deliveries).toEqual([
      {
        id: pings[2]?.deliveryId,
        eventId: pings[2]?.eventId,
        eventType: "Ping",
        status: "pending",
        rounds: 0,
        attemptsInRound: 0,
        nextAttemptAt: null,
        attempts: [],
      },
      {
        id: pings[1]?.deliveryId,
        eventId: pings[1]?.eventId,
        eventType: "Ping",
        status: "pending",
        rounds: 0,
        attemptsInRound: 0,
        nextAttemptAt: null,
        attempts: [],
      },
    ]);
    const page2 = await deliveriesOf(hook.id, "?limit=2&page=2");
    expect(page2.map((d) => d.id)).toEqual([pings[0]?.deliveryId]);
    expect(await deliveriesOf(hook.id, "?status=delivered")).toEqual([]);
    expect(await deliveriesOf(hook.id, "?status=pending")).toHaveLength(3);
    expect((await operator("GET", `/webhooks/${hook.id}/deliveries?status=lost`)).status).toBe(422);
    expect((await operator("GET", `/webhooks/${hook.id}/deliveries?limit=0`)).status).toBe(422);
  });
});

describe("endpoint rules at registration", () => {
  const refused: [string, string, string][] = [
    ["http://hooks.example.com/x", "scheme", "https://"],
    ["ftp://hooks.example.com/x", "scheme", "https://"],
    ["https://user:pass@hooks.example.com/x", "credentials", "credentials"],
    ["https://user@hooks.example.com/x", "credentials", "credentials"],
    ["https://hooks.example.com/x#frag", "fragment", "#fragment"],
    ["https://hooks.example.com/x#", "fragment", "#fragment"],
    [
      `https://hooks.example.com/${"a".repeat(256 - "https://hooks.example.com/".length)}`,
      "length",
      "255",
    ],
    ["https://localhost/x", "host", "localhost"],
    ["https://LOCALHOST./x", "host", "localhost"],
    ["https://api.localhost/x", "host", ".localhost"],
    ["https://printer.local/x", "host", ".local"],
    ["https://metadata.google.internal/x", "host", ".internal"],
    ["https://10.0.0.1/x", "address", "private"],
    ["https://172.16.5.4/x", "address", "private"],
    ["https://192.168.1.10/x", "address", "private"],
    ["https://127.0.0.1/x", "address", "loopback"],
    ["https://2130706433/x", "address", "loopback"],
    ["https://0x7f.1/x", "address", "loopback"],
    ["https://169.254.169.254/latest/meta-data", "address", "link-local"],
    ["https://100.64.0.1/x", "address", "CGNAT"],
    ["https://100.127.255.254/x", "address", "CGNAT"],
    ["https://0.0.0.0/x", "address", "unspecified"],
    ["https://224.0.0.251/x", "address", "multicast"],
    ["https://192.0.2.1/x", "address", "documentation"],
    ["https://198.51.100.7/x", "address", "documentation"],
    ["https://203.0.113.9/x", "address", "documentation"],
    ["https://255.255.255.255/x", "address", "reserved"],
    ["https://[::1]/x", "address", "loopback"],
    ["https://[::]/x", "address", "unspecified"],
    ["https://[fd00::1]/x", "address", "unique-local"],
    ["https://[fc12:3456::9]/x", "address", "unique-local"],
    ["https://[fe80::1]/x", "address", "link-local"],
    ["https://[ff02::1]/x", "address", "multicast"],
    ["https://[2001:db8::1]/x", "address", "documentation"],
    ["https://[::ffff:127.0.0.1]/x", "address", "loopback"],
    ["https://[::ffff:10.1.1.1]/x", "address", "private"],
    ["https://[64:ff9b::a9fe:a9fe]/x", "address", "link-local"],
    ["not a url", "invalid", "URL"],
  ];

  it.each(refused)("refuses %s (rule %s)", async (url, rule, words) => {
    const co = await createCompany();
    const { status, body } = await tryRegister(co.id, url);
    expect(status).toBe(422);
    expect(body).toEqual({
      detail: [
        {
          loc: ["body", 0, "url"],
          msg: expect.stringContaining(words),
          type: `value_error.url.${rule}`,
        },
      ],
    });
  });

  it("accepts 255 characters, and public IP literals without a DNS query", async () => {
    const co = await createCompany();
    const { host } = publicEndpoint(net);
    const long = `https://${host}/${"a".repeat(255 - `https://${host}/`.length)}`;
    expect(long).toHaveLength(255);
    expect((await tryRegister(co.id, long)).status).toBe(201);
    const queries = net.dohQueries.length;
    expect((await tryRegister(co.id, "https://93.184.216.34/hook")).status).toBe(201);
    expect((await tryRegister(co.id, "https://[2606:4700:4700::1111]/hook")).status).toBe(201);
    expect(net.dohQueries.length).toBe(queries);
  });

  it("resolves the host (A and AAAA, following CNAMEs) and refuses a non-public answer", async () => {
    const co = await createCompany();
    const id = crypto.randomUUID().slice(0, 8);
    net.dns.set(`v4-${id}.example.com`, { A: ["93.184.216.34", "10.9.8.7"] });
    net.dns.set(`v6-${id}.example.com`, { A: ["93.184.216.34"], AAAA: ["fd00::5"] });
    net.dns.set(`alias-${id}.example.com`, { CNAME: `target-${id}.example.net` });
    net.dns.set(`target-${id}.example.net`, { A: ["100.64.3.4"] });
    net.dns.set(`ok-${id}.example.com`, { CNAME: `cdn-${id}.example.net` });
    net.dns.set(`cdn-${id}.example.net`, { A: ["93.184.216.34"] });

    const v4 = await tryRegister(co.id, `https://v4-${id}.example.com/x`);
    expect(v4).toMatchObject({ status: 422 });
    expect(JSON.stringify(v4.body)).toContain("10.9.8.7, private");
    const v6 = await tryRegister(co.id, `https://v6-${id}.example.com/x`);
    expect(JSON.stringify(v6.body)).toContain("fd00::5, unique-local");
    const alias = await tryRegister(co.id, `https://alias-${id}.example.com/x`);
    expect(JSON.stringify(alias.body)).toContain("100.64.3.4, CGNAT");
    expect((await tryRegister(co.id, `https://ok-${id}.example.com/x`)).status).toBe(201);
    expect(net.dohQueries).toEqual(
      expect.arrayContaining([
        `ok-${id}.example.com A`,
        `ok-${id}.example.com AAAA`,
        `cdn-${id}.example.net A`,
      ]),
    );

    const missing = await tryRegister(co.id, `https://nowhere-${id}.example.com/x`);
    expect(missing).toEqual({
      status: 422,
      body: { detail: [expect.objectContaining({ type: "value_error.url.resolve" })] },
    });
  });

  it("refuses a host whose DNS answer is not an IP address (fails closed)", async () => {
    const co = await createCompany();
    const id = crypto.randomUUID().slice(0, 8);
    net.dns.set(`name-${id}.example.com`, { A: ["localhost"] });
    net.dns.set(`mixed-${id}.example.com`, { A: ["93.184.216.34"], AAAA: ["internal.corp"] });
    net.dns.set(`empty-${id}.example.com`, { A: [""] });
    for (const host of [`name-${id}`, `mixed-${id}`, `empty-${id}`]) {
      const res = await tryRegister(co.id, `https://${host}.example.com/x`);
      expect(res, host).toEqual({
        status: 422,
        body: {
          detail: [
            expect.objectContaining({
              type: "value_error.url.address",
              msg: expect.stringContaining("not an IP address"),
            }),
          ],
        },
      });
    }
  });

  it("registers all or none", async () => {
    const co = await createCompany();
    const res = await operator("POST", `/companies/${co.id}/webhooks`, [
      { name: "good", url: publicEndpoint(net).url, eventType: CREATED },
      { name: "bad", url: "https://192.168.0.1/x", eventType: CREATED },
    ]);
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: unknown[] }[] };
    expect(detail.map((d) => d.loc)).toEqual([["body", 1, "url"]]);
    expect(await (await operator("GET", `/companies/${co.id}/webhooks`)).json()).toEqual([]);
  });

  it("answers 503 when the DNS-over-HTTPS resolver cannot be reached", async () => {
    const co = await createCompany();
    net.setDohAvailable(false);
    const res = await operator("POST", `/companies/${co.id}/webhooks`, [
      {
        name: "hook",
        url: `https://down-${crypto.randomUUID().slice(0, 8)}.example.com/x`,
        eventType: CREATED,
      },
    ]);
    expect(res.status).toBe(503);
  });

  it("exempts the configured local origin in development and test only", async () => {
    const co = await createCompany();
    expect((await tryRegister(co.id, "http://127.0.0.1:9999/hooks")).status).toBe(201);
    // Another port of the same host is not exempt.
    expect((await tryRegister(co.id, "http://127.0.0.1:9998/hooks")).status).toBe(422);
    const options = {
      dohUrl: "https://dns.test/dns-query",
      exemptOrigins: ["http://127.0.0.1:9999"],
    };
    for (const environment of ["development", "test"]) {
      expect(checkUrlShape("http://127.0.0.1:9999/hooks", { ...options, environment }).kind).toBe(
        "safe",
      );
    }
    for (const environment of ["sandbox", "production"]) {
      expect(
        checkUrlShape("http://127.0.0.1:9999/hooks", { ...options, environment }),
      ).toMatchObject({
        kind: "refused",
        rule: "scheme",
      });
    }
  });
});

describe("address ranges", () => {
  it.each([
    ["8.8.8.8", undefined],
    ["93.184.216.34", undefined],
    ["100.63.255.255", undefined],
    ["100.128.0.0", undefined],
    ["172.15.255.255", undefined],
    ["172.32.0.0", undefined],
    ["11.0.0.1", undefined],
    ["2606:4700:4700::1111", undefined],
    ["2a00:1450:4001:80b::200e", undefined],
    ["::ffff:8.8.8.8", undefined],
    ["10.255.255.255", "private (10.0.0.0/8)"],
    ["100.64.0.0", "CGNAT (100.64.0.0/10)"],
    ["127.8.9.10", "loopback (127.0.0.0/8)"],
    ["169.254.0.1", "link-local (169.254.0.0/16)"],
    ["198.18.0.1", "reserved (198.18.0.0/15)"],
    ["240.0.0.1", "reserved (240.0.0.0/4)"],
    ["fe80::abcd", "link-local (fe80::/10)"],
    ["febf::1", "link-local (fe80::/10)"],
    ["fdff:ffff::1", "unique-local (fc00::/7)"],
    ["ff05::2", "multicast (ff00::/8)"],
    ["2002:c0a8:101::1", "reserved (6to4, 2002::/16)"],
    ["::1", "loopback (::1/128)"],
    ["::127.0.0.1", "reserved (outside 2000::/3)"],
    ["4000::1", "reserved (outside 2000::/3)"],
    ["1.2.3", null],
    ["hooks.example.com", undefined],
  ])("%s -> %s", (address, expected) => {
    expect(nonPublicRange(address)).toBe(expected);
  });

  it("parses IPv6 forms", () => {
    expect(parseIPv6("::")).toEqual(Array(16).fill(0));
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4,
    ]);
    expect(parseIPv6("1:2:3:4:5:6:7:8")?.slice(-2)).toEqual([0, 8]);
    for (const bad of [
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "12345::",
      ":1::",
      "1:2:3:4:5:6:7:",
      "fe80::1%eth0",
    ]) {
      expect(parseIPv6(bad)).toBeNull();
    }
  });
});
