/**
 * The request collection (requests/*.http): every operation of the served /openapi.json is
 * in it, every request sends the `{{key}}`, and every `{{...}}` it uses is defined (a file
 * variable, the environment's PM_KEY, or the answer of an earlier named request).
 * `npm run requests` runs it against a Worker loaded with the demo.
 */
import { describe, expect, it } from "vitest";
import { parseHttpFile, runHttpFile, substitute } from "../../scripts/lib/http-files";
import { call, createCompany } from "../harness";

const files = import.meta.glob<string>("../../requests/*.http", {
  query: "?raw",
  import: "default",
  eager: true,
});

interface Document {
  paths: Record<string, Record<string, unknown>>;
}

const parsed = Object.entries(files).map(([path, text]) => ({ path, ...parseHttpFile(text) }));

describe("the request collection", () => {
  it("has every operation of /openapi.json", async () => {
    expect(parsed.length).toBeGreaterThan(0);
    const doc = (await (await call("/openapi.json")).json()) as Document;
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({
        operation: `${method.toUpperCase()} ${path}`,
        pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, "[^/?]+")}(\\?.*)?$`),
        method: method.toUpperCase(),
      })),
    );
    const requests = parsed.flatMap((file) =>
      file.requests.map((request) => ({
        method: request.method,
        path: request.url.replace("{{baseUrl}}", ""),
      })),
    );
    const missing = operations
      .filter(({ method, pattern }) =>
        requests.every((request) => request.method !== method || !pattern.test(request.path)),
      )
      .map(({ operation }) => operation);
    expect(missing).toEqual([]);
    // And nothing in the collection is outside the document.
    const unknown = requests.filter((request) =>
      operations.every(
        ({ method, pattern }) => method !== request.method || !pattern.test(request.path),
      ),
    );
    expect(unknown).toEqual([]);
  });

  it("sends the key on every request, and defines every variable it uses", () => {
    for (const file of parsed) {
      expect(file.variables.get("key"), file.path).toBe("{{$processEnv PM_KEY}}");
      const named = new Set<string>();
      for (const request of file.requests) {
        expect(request.headers, `${file.path}: ${request.title}`).toContainEqual([
          "x-api-key",
          "{{key}}",
        ]);
        const used = [request.url, request.body ?? "", ...request.headers.map(([, v]) => v)]
          .join("\n")
          .matchAll(/\{\{\s*([^}]+?)\s*\}\}/g);
        for (const [, expression = ""] of used) {
          const ref = /^([\w-]+)\.response\.body\./.exec(expression)?.[1];
          const known =
            (ref !== undefined && named.has(ref)) ||
            file.variables.has(expression) ||
            expression.startsWith("$");
          expect(known, `${file.path}: {{${expression}}} in "${request.title}"`).toBe(true);
        }
        if (request.name) named.add(request.name);
      }
    }
  });
});

describe("the collection's runner (scripts/lib/http-files.ts)", () => {
  it("parses names, headers and bodies, and chains an answer into the next request", async () => {
    const co = await createCompany();
    const file = parseHttpFile(
      [
        "@baseUrl = http://api.test",
        "@key = {{$processEnv PM_KEY}}",
        "",
        "### Create",
        "# @name made",
        "POST {{baseUrl}}/v1/operators",
        "x-api-key: {{key}}",
        "content-type: application/json",
        "",
        '[{ "firstName": "Ada" }]',
        "",
        "### Read it back",
        "GET {{baseUrl}}/v1/operators/{{made.response.body.$[0].id}}",
        "x-api-key: {{key}}",
      ].join("\n"),
    );
    expect(file.requests.map((r) => [r.name, r.method, r.body])).toEqual([
      ["made", "POST", '[{ "firstName": "Ada" }]'],
      [undefined, "GET", undefined],
    ]);
    const seen: string[] = [];
    const results = await runHttpFile(
      file,
      async (request) => {
        seen.push(`${request.method} ${new URL(request.url).pathname}`);
        return call(new URL(request.url).pathname, request);
      },
      { env: { PM_KEY: co.key } },
    );
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(seen[1]).toMatch(/^GET \/v1\/operators\/\d+$/);
    expect(() =>
      substitute("{{nope}}", { variables: new Map(), env: {}, answers: new Map() }),
    ).toThrow("{{nope}}: unknown variable");
  });

  it("sends a `# @until` request again until its answer has the awaited value", async () => {
    const file = parseHttpFile(
      [
        "@baseUrl = http://api.test",
        "",
        "### Follow the job",
        "# @name job",
        "# @until $.state succeeded",
        "GET {{baseUrl}}/v1/jobs/1",
        "",
        "### Its first file",
        "GET {{baseUrl}}/v1/jobs/1/files/{{job.response.body.$.files[0].name}}",
      ].join("\n"),
    );
    expect(file.requests[0]?.until).toEqual({ path: ".state", value: "succeeded" });
    const states = ["queued", "running", "running", "succeeded"];
    const seen: string[] = [];
    const send = async (request: Request) => {
      seen.push(new URL(request.url).pathname);
      if (request.url.includes("/files/")) return new Response("a,b\r\n1,2\r\n");
      const state = states[Math.min(seen.length - 1, states.length - 1)];
      const files = state === "succeeded" ? [{ name: "part-00001.csv" }] : [];
      return Response.json({ state, files });
    };
    const results = await runHttpFile(file, send, { env: {}, until: { pollMs: 1 } });
    // The job counts once, with its last answer; the file's name came from that answer.
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    expect(seen).toEqual([...states.map(() => "/v1/jobs/1"), "/v1/jobs/1/files/part-00001.csv"]);
    // A job that never gets there fails the run, naming the request and the value it saw.
    seen.length = 0;
    states.splice(0, states.length, "running");
    await expect(
      runHttpFile(file, send, { env: {}, until: { pollMs: 1, timeoutMs: 20 } }),
    ).rejects.toThrow('"### Follow the job": $.state is "running", not succeeded');
  });
});
