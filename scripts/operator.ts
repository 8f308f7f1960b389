/**
 * Command line for the operator API: `npm run operator -- <command> [options]`.
 *
 * Prints each result as JSON on stdout (progress, if any, on stderr). On failure it
 * prints the error (for an API error: the status and the body the Worker sent) on
 * stderr and exits with 1; a usage error exits with 2.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parseSamplesCsv } from "./lib/csv";
import { demoEnvLines } from "./lib/demo-env";
import { getDemoKeys, PartialSeedError, seedDemo } from "./lib/demo-seed";
import { HttpError, ok, requestJson } from "./lib/http";
import { resolveBaseUrl } from "./lib/local-server";
import {
  connectOperator,
  loadSamples,
  type MachineInput,
  OPERATOR_PREFIX,
  type OperatorConnection,
  type RateLimit,
  type Scope,
  type TimeZone,
} from "./lib/operator-api";
import { checkSignal, parseRateLimitPolicy, parseScopes, UsageError } from "./lib/operator-checks";
import { DEFAULT_BASE_URL, resolveOperatorToken } from "./lib/project";

type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string }>;
type Values = Record<string, string | boolean | undefined>;

interface Command {
  usage: string;
  /** One line for the command list. */
  summary: string;
  /** More, for `<command> --help`. */
  details?: string;
  options: OptionSpec;
  /** Number of positional arguments after the command name. */
  positionals?: number;
  run: (client: OperatorConnection, values: Values, positionals: string[]) => Promise<unknown>;
}

const COMMON_OPTIONS: OptionSpec = {
  url: { type: "string" },
  help: { type: "boolean", short: "h" },
};

/**
 * A new key as the operator API answered it, with the limit its answers will carry: a key
 * without its own limit (`rateLimit: null`) gets the deployment's default, which only the
 * Worker knows, so one request with the key (`GET /v1/machines`; a 403 for a key without
 * that scope carries the field too) reads it from `RateLimit-Policy`. That request counts
 * against the key's quota. When it cannot be read, `rateLimit` stays null with a note.
 */
async function withEffectiveRateLimit<T extends { key: string; rateLimit: unknown }>(
  baseUrl: string,
  row: T,
): Promise<T & { rateLimitSource: string }> {
  if (row.rateLimit !== null) return { ...row, rateLimitSource: "the key's own" };
  try {
    const res = await fetch(`${baseUrl}/v1/machines`, {
      headers: { "x-api-key": row.key },
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    const policy = parseRateLimitPolicy(res.headers.get("ratelimit-policy"));
    if (policy) return { ...row, rateLimit: policy, rateLimitSource: "the deployment's default" };
  } catch {
    // unreachable: said below
  }
  return { ...row, rateLimitSource: "the deployment's default (could not be read)" };
}

const COMMANDS: Record<string, Command> = {
  "companies:list": {
    usage: "companies:list",
    summary: "List the companies (no secrets).",
    options: {},
    run: async (client) => ok("GET", await client.api.GET("/companies")),
  },
  "companies:create": {
    usage: "companies:create --name N --timezone TZ [--shard SHARD_n]",
    summary: "Create a company.",
    details:
      "Prints its id, shard and webhook secret. TZ is an IANA name, for example Europe/Rome. " +
      "Without --shard the company goes to the shard with the fewest companies.",
    options: { name: { type: "string" }, timezone: { type: "string" }, shard: { type: "string" } },
    run: async (client, v) =>
      ok(
        "POST",
        await client.api.POST("/companies", {
          body: [
            {
              name: required(v, "name"),
              // The Worker refuses a zone not in the document's enum (a 422 naming it).
              timezone: required(v, "timezone") as TimeZone,
              ...(typeof v.shard === "string" ? { shard: v.shard } : {}),
            },
          ],
        }),
      ),
  },
  "companies:move": {
    usage: "companies:move --company ID --shard SHARD_n",
    summary: "Move a company to another shard (copy, catch up, switch, remove).",
    details:
      "Answers once the company reads and writes on the new shard: the rows copied by table, " +
      "the changes applied after the copy, and how long its requests waited during the switch " +
      "(about 3 s). No acknowledged write is lost; see docs/scaling.md.",
    options: { company: { type: "string" }, shard: { type: "string" } },
    run: async (client, v) =>
      ok(
        "POST",
        await client.api.POST("/companies/{company_id}/move", {
          params: { path: { company_id: requiredId(v, "company") } },
          body: { shard: required(v, "shard") },
        }),
      ),
  },
  "api-keys:create": {
    usage: "api-keys:create --company ID --name N --scopes a.read,b.read [--rate-limit 100/60]",
    summary: "Issue an API key for a company.",
    details:
      "The key is printed only now. --scopes also takes `all` (every scope a public route " +
      "requires) or `read` (the .read ones); a scope the API does not know is refused. " +
      "--rate-limit is REQUESTS/SECONDS.",
    options: {
      company: { type: "string" },
      name: { type: "string" },
      scopes: { type: "string" },
      "rate-limit": { type: "string" },
    },
    run: async (client, v) => {
      const rateLimitText = optional(v, "rate-limit");
      const { scopes, warnings } = parseScopes(required(v, "scopes"));
      for (const warning of warnings) console.error(warning);
      const key = {
        name: required(v, "name"),
        scopes: [...scopes],
        ...(rateLimitText ? { rateLimit: parseRateLimit(rateLimitText) } : {}),
      };
      const issued = ok(
        "POST",
        await client.api.POST("/companies/{company_id}/api-keys", {
          params: { path: { company_id: requiredId(v, "company") } },
          body: [{ ...key, scopes: key.scopes as Scope[] }],
        }),
      );
      return Promise.all(issued.map((row) => withEffectiveRateLimit(client.baseUrl, row)));
    },
  },
  "api-keys:revoke": {
    usage: "api-keys:revoke --id ID",
    summary: "Revoke an API key (it stops working at once).",
    options: { id: { type: "string" } },
    run: async (client, v) => {
      const id = requiredId(v, "id");
      ok(
        "DELETE",
        await client.api.DELETE("/api-keys/{api_key_id}", {
          params: { path: { api_key_id: id } },
        }),
      );
      return { revoked: id };
    },
  },
  "machines:create": {
    usage: "machines:create --company ID --name N [--uuid U | --no-uuid] [--external-name X]",
    summary: "Create a machine of a company.",
    details:
      "Without --uuid the API generates one; --no-uuid makes a machine without uuid " +
      "(listed, but its signals cannot be read).",
    options: {
      company: { type: "string" },
      name: { type: "string" },
      uuid: { type: "string" },
      "no-uuid": { type: "boolean" },
      "external-name": { type: "string" },
    },
    run: async (client, v) => {
      const uuid = optional(v, "uuid");
      if (uuid !== undefined && v["no-uuid"] === true) {
        throw new UsageError("--uuid and --no-uuid exclude each other");
      }
      const externalName = optional(v, "external-name");
      const machine: MachineInput = {
        name: required(v, "name"),
        ...(v["no-uuid"] === true ? { uuid: null } : uuid !== undefined ? { uuid } : {}),
        ...(externalName !== undefined ? { externalName } : {}),
      };
      return ok(
        "POST",
        await client.api.POST("/companies/{company_id}/machines", {
          params: { path: { company_id: requiredId(v, "company") } },
          body: [machine],
        }),
      );
    },
  },
  "signals:create": {
    usage:
      "signals:create --machine ID --name N --display-name D (--kind K | --no-kind) " +
      "[--public-id UUID] [--description-en TEXT --description-es TEXT]",
    summary: "Create a signal of a machine.",
    details:
      "ID is the machine's integer id; prints the signal's publicId (generated unless " +
      "--public-id). The options are checked with the API's rules: name 1-100 characters, " +
      "display name 1-200, kind 1-50 (any text, for example analog or counter; --no-kind = " +
      "not listed publicly), descriptions up to 2,000. The API refuses (409) a used public id " +
      "and a name and display name the machine already has.",
    options: {
      machine: { type: "string" },
      "public-id": { type: "string" },
      "no-kind": { type: "boolean" },
      name: { type: "string" },
      "display-name": { type: "string" },
      kind: { type: "string" },
      "description-en": { type: "string" },
      "description-es": { type: "string" },
    },
    run: async (client, v) => {
      const en = optional(v, "description-en");
      const es = optional(v, "description-es");
      if ((en === undefined) !== (es === undefined)) {
        throw new UsageError("give both --description-en and --description-es, or neither");
      }
      const kind = optional(v, "kind");
      if ((kind === undefined) === (v["no-kind"] !== true)) {
        throw new UsageError("give either --kind or --no-kind");
      }
      const publicId = optional(v, "public-id");
      const machine = requiredId(v, "machine");
      const signal = checkSignal({
        ...(publicId !== undefined ? { publicId } : {}),
        name: required(v, "name"),
        displayName: required(v, "display-name"),
        kind: kind ?? null,
        ...(en !== undefined && es !== undefined ? { description: { en, es } } : {}),
      });
      return ok(
        "POST",
        await client.api.POST("/machines/{machine_id}/signals", {
          params: { path: { machine_id: machine } },
          body: [signal],
        }),
      );
    },
  },
  "signals:delete": {
    usage: "signals:delete --public-id P",
    summary: "Soft-delete a signal.",
    options: { "public-id": { type: "string" } },
    run: async (client, v) => {
      const publicId = required(v, "public-id");
      ok(
        "DELETE",
        await client.api.DELETE("/signals/{public_id}", {
          params: { path: { public_id: publicId } },
        }),
      );
      return { deleted: publicId };
    },
  },
  "samples:load": {
    usage: "samples:load --public-id P --file samples.csv",
    summary: "Send a signal's samples from a CSV file.",
    details:
      "The file is `timestamp,value` lines (optional header; ISO 8601 timestamps, UTC when " +
      "no zone), sent in chunks of 10,000. A sample at an existing timestamp replaces it.",
    options: { "public-id": { type: "string" }, file: { type: "string" } },
    run: async (client, v) => {
      const samples = parseSamplesCsv(readFileSync(required(v, "file"), "utf8"));
      return { accepted: await loadSamples(client, required(v, "public-id"), samples) };
    },
  },
  request: {
    usage: "request METHOD PATH [--body JSON]",
    summary: "Call any operator route.",
    details:
      "PATH is relative to /operator/v1 (`/companies/1/webhooks`) or starts with /operator/; " +
      "METHOD is GET, POST, PATCH, PUT or DELETE; --body is the JSON body.",
    options: { body: { type: "string" } },
    positionals: 2,
    run: (client, v, [method = "", path = ""]) => {
      const bodyText = optional(v, "body");
      let body: unknown;
      if (bodyText !== undefined) {
        try {
          body = JSON.parse(bodyText);
        } catch {
          throw new UsageError("--body is not valid JSON");
        }
      }
      if (!path.startsWith("/")) throw new UsageError("PATH must start with /");
      // A path known only now: plain JSON over fetch, not the typed client.
      const fullPath = path.startsWith("/operator/") ? path : `${OPERATOR_PREFIX}${path}`;
      return requestJson<unknown>(`${client.baseUrl}${fullPath}`, {
        method: method.toUpperCase(),
        headers: { authorization: `Bearer ${client.token}` },
        body,
      });
    },
  },
  seed: {
    usage: "seed",
    summary: "Load the demo data of data/ once; print the demo keys.",
    details:
      'Creates "Demo Plant A" and "Fleet B" (see data/README.md) unless Demo Plant A exists; ' +
      "the keys are saved in .wrangler/demo-keys.json.",
    options: {},
    run: (client) => seedDemo(client, (line) => console.error(line)),
  },
  "demo-keys": {
    usage: "demo-keys",
    summary: "Print the demo API keys.",
    details:
      "From .wrangler/demo-keys.json, or freshly issued for the demo companies when the " +
      "file is lost or its keys no longer work.",
    options: {},
    run: (client) => getDemoKeys(client),
  },
  "demo-env": {
    usage: "demo-env",
    summary: "Print the demo keys and ids as shell export lines (PM_KEY, PM_MACHINE_UUID, ...).",
    details:
      'For `eval "$(npm run --silent demo-env)"`. The keys are those of demo-keys; the ids are ' +
      "the fixed ones of docs/demo-data.md.",
    options: {},
    run: async (client) => {
      console.log(demoEnvLines(client.baseUrl, await getDemoKeys(client)).join("\n"));
      return undefined;
    },
  },
};

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** An integer id option (the API's ids are positive integers; anything else is its 422). */
function requiredId(values: Values, name: string): number {
  const text = required(values, name);
  if (!/^[1-9]\d{0,15}$/.test(text)) throw new UsageError(`--${name} must be an integer id`);
  return Number(text);
}

function optional(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

function parseRateLimit(text: string): RateLimit {
  const match = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!match) throw new UsageError("--rate-limit must be REQUESTS/SECONDS, for example 100/60");
  return { requests: Number(match[1]), periodSeconds: Number(match[2]) };
}

function globalHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    "Usage: npm run operator -- <command> [options] [--url URL]",
    "",
    "Calls the operator API of the Worker at --url, else $PM_URL, else the one `npm start`",
    `runs (whatever its port), else ${DEFAULT_BASE_URL}, with the token from $OPERATOR_TOKEN,`,
    "else OPERATOR_TOKEN= in .dev.vars. Prints JSON.",
    "",
    "Commands:",
    ...Object.entries(COMMANDS).map(
      ([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`,
    ),
    "",
    "Run `npm run operator -- <command> --help` for a command's options.",
  ].join("\n");
}

function commandHelp(command: Command): string {
  const lines = [`Usage: npm run operator -- ${command.usage} [--url URL]`, "", command.summary];
  if (command.details) lines.push("", command.details);
  return lines.join("\n");
}

function printError(error: unknown, baseUrl: string): void {
  if (error instanceof PartialSeedError) {
    printError(error.cause, baseUrl);
    console.error(error.message);
  } else if (error instanceof HttpError) {
    console.error(`Error: ${error.method} ${error.url} answered ${error.status}`);
    let body = error.body;
    try {
      body = JSON.stringify(JSON.parse(error.body), null, 2);
    } catch {
      // not JSON: print as sent
    }
    if (body !== "") console.error(body);
  } else if (error instanceof TypeError && error.message === "fetch failed") {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    console.error(
      `Error: cannot reach the Worker at ${baseUrl}${cause}. Is it running (npm start)? ` +
        "Another one: --url URL or PM_URL.",
    );
  } else {
    console.error(`Error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(globalHelp());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`Unknown command "${name}".\n\n${globalHelp()}`);
    return 2;
  }
  let values: Values;
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: rest,
      options: { ...COMMON_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values;
    positionals = parsed.positionals;
    if (values.help === true) {
      console.log(commandHelp(command));
      return 0;
    }
    if (positionals.length !== (command.positionals ?? 0)) {
      throw new UsageError(
        `expected ${command.positionals ?? 0} argument(s), got ${positionals.length}`,
      );
    }
  } catch (error) {
    console.error(
      `Error: ${error instanceof Error ? error.message : String(error)}\n\n${commandHelp(command)}`,
    );
    return 2;
  }
  let baseUrl = "";
  try {
    // demo-env sets PM_URL: it describes the server running now, not one a shell remembers.
    baseUrl = resolveBaseUrl(optional(values, "url"), { preferRunning: name === "demo-env" });
    const client = connectOperator(baseUrl, resolveOperatorToken());
    const result = await command.run(client, values, positionals);
    if (result !== undefined) console.log(JSON.stringify(result, null, 2));
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`Error: ${error.message}\n\n${commandHelp(command)}`);
      return 2;
    }
    printError(error, baseUrl);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
