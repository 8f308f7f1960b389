import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, type Plugin } from "vitest/config";
import {
  BOARD_BUNDLE_PATH,
  bundleBoardScript,
  writeBoardScript,
} from "./scripts/lib/board-bundle.ts";
import { REFUSED_REQUESTS_URL, TEST_RESOLVER_URL, testNetwork } from "./test/node/test-network.ts";

/**
 * wrangler.toml's `[[rules]] type = "Text"` for Vite: a module whose path matches is its
 * text (the default export), not code, in the tests as in the deployed Worker.
 */
function textModules(pattern: RegExp): Plugin {
  return {
    name: "text-modules",
    enforce: "pre",
    load(id) {
      if (!pattern.test(id)) return null;
      return `export default ${JSON.stringify(readFileSync(id, "utf8"))};`;
    },
  };
}

/**
 * `docs/<file>.md?snippet=<name>`: the fenced code block that follows the comment
 * `<!-- snippet: <name> -->` in a markdown file, as a module, so that a test runs the code
 * a document shows rather than a copy of it.
 */
function markdownSnippets(): Plugin {
  return {
    name: "markdown-snippets",
    enforce: "pre",
    load(id) {
      const match = /^(.*\.md)\?snippet=([\w-]+)$/.exec(id);
      if (!match) return null;
      const [, file = "", name = ""] = match;
      const block = new RegExp(
        `<!-- snippet: ${name} -->\\s*\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``,
      ).exec(readFileSync(file, "utf8"));
      if (!block?.[1]) throw new Error(`${file}: no code block after <!-- snippet: ${name} -->`);
      return block[1];
    },
  };
}

/**
 * Loads the files of a dependency without their `//# sourceMappingURL=` comment, so that
 * Vite does not read their maps: @modelcontextprotocol/sdk ships maps that name sources it
 * does not ship, and Vite warned `Sourcemap for "<file>" points to missing source files` for
 * 22 of its files on every run, burying what a reader of `npm test` needs (docs/testing.md).
 * Only stack traces through the SDK lose their mapping to sources nobody has.
 */
function withoutSourcemaps(pattern: RegExp): Plugin {
  return {
    name: "without-sourcemaps",
    enforce: "pre",
    load(id) {
      if (!pattern.test(id)) return null;
      const code = readFileSync(id, "utf8").replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
      return { code, map: null };
    },
  };
}

/**
 * The plant board's script for the tests: src/board/board-page.ts imports dist/board.js,
 * which wrangler's `[build]` writes before `wrangler dev` and `wrangler deploy`; the pool
 * runs no build, so the same bundle (scripts/lib/board-bundle.ts) is made here, in memory,
 * from the sources of this run (and made again when one of them changes, in watch mode).
 */
function boardScript(): Plugin {
  return {
    name: "board-script",
    enforce: "pre",
    resolveId(source) {
      return source.endsWith("/dist/board.js") ? BOARD_BUNDLE_PATH : null;
    },
    async load(id) {
      if (id !== BOARD_BUNDLE_PATH) return null;
      const { text, inputs } = await bundleBoardScript();
      for (const input of inputs) this.addWatchFile(input);
      return `export default ${JSON.stringify(text)};`;
    },
  };
}

// Wrangler reads wrangler.toml for the pool, in this process: at its default level it prints
// "Using secrets defined in .dev.vars" for every test runtime when `npm start` has created that
// file (the tests set every value it holds themselves). Its warnings and errors still print.
process.env.WRANGLER_LOG ??= "warn";

/**
 * The test files that call no binding of the Worker (pure functions of src/ and scripts/).
 * They run one after the other in one shared test runtime (`isolate: false`) instead of one
 * runtime each: starting a runtime and loading the Worker's modules into it took 6 to 20 s a
 * file on the loaded 2-core machine, for checks of a few milliseconds (docs/testing.md). Every
 * other file keeps a runtime and storage of its own. A file added here must stay pure: a
 * company or a Durable Object it made would outlive it in the shared runtime.
 */
const PURE_TEST_FILES = [
  "test/scripts/**/*.test.ts",
  "test/api-layout.test.ts",
  "test/architecture.test.ts",
  "test/board/**/*.test.ts",
  "test/docs-references.test.ts",
  "test/db/json-rows.test.ts",
  "test/streams/live-state.test.ts",
  "test/http/instants.test.ts",
  "test/http/server-errors.test.ts",
  "test/machine-state/runs.test.ts",
  "test/parquet/zstd.test.ts",
  "test/rate-limit/leases.test.ts",
  "test/realtime/rules.test.ts",
  "test/realtime/write-behind.test.ts",
  "test/reports/calendar.test.ts",
  "test/reports/kpi-figures.test.ts",
  "test/reports/oee.test.ts",
  "test/resources/archive-format.test.ts",
  "test/shifts/instance-series.test.ts",
  "test/shifts/instances.test.ts",
  "test/webhooks/group-commit.test.ts",
  "test/webhooks/retry-policy.test.ts",
];

/**
 * The test files that need a runtime of their own (Vitest's `isolate: true`, a workerd and
 * Miniflare started for the file alone). Every other file of the worker project shares a
 * runtime, its storage and its Durable Objects with the files run before it on the same core
 * (`isolate: false`): starting a runtime and loading the Worker into it was a third of the
 * suite's time (docs/testing.md, "A fast loop"). A test of a shared runtime asserts on the
 * company it made, never on a whole table; a file that cannot is named here, with why:
 */
const ISOLATED_TEST_FILES = [
  // Two companies made one after the other land on different shards: placement picks the
  // emptiest shard, so this holds only from an even start (the other files' companies are
  // spread over the shards by how many each file made).
  "test/db/shards.test.ts",
  "test/operator/operator-api.test.ts",
  // The demo's plant with its fixed machine and signal uuids (docs/demo-data.md), which are
  // unique in a deployment, and ids counted from 1: a second file making it in one runtime
  // gets a 409, and the ids follow the other files' rows.
  "test/clients/typescript-client.test.ts",
  "test/http/docs-examples.test.ts",
  // The outbox sweeper resends every company's lost deliveries: in a shared runtime, those
  // the webhook files before it left undelivered too, not only the test's own.
  "test/webhooks/events.test.ts",
  // Its operator property (seed 42) draws from the world's ids: with another runtime's ids it
  // drew two overlapping shifts for one machine, a 422 ("a machine runs at most one shift at
  // a time") that test/hardening/contract-rules.ts does not list yet.
  "test/hardening/schema-contract.test.ts",
  // Its R2 read-back fault leaves the store's archive failing and retrying after the file:
  // in a shared runtime its "read back differs" errors printed among the next files' output.
  "test/resources/signal-archive.test.ts",
];

export default defineConfig(async () => {
  // The pool loads a module matching wrangler.toml's Text rule from disk when a test imports
  // the Worker's modules itself (test/auth/access-tokens.test.ts: "No such module
  // dist/board.js" in a fresh clone, where no `wrangler dev` had built it), past the plugin
  // below; so the run writes the bundle first, as wrangler's `[build]` does.
  await writeBoardScript();
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  // The public half of a test-only key pair (test/fixtures/); tests sign with the private half.
  const testJwks = readFileSync(path.join(import.meta.dirname, "test/fixtures/jwks.json"), "utf8");
  return {
    plugins: [
      withoutSourcemaps(/\/node_modules\/@modelcontextprotocol\/sdk\/dist\/.*\.js$/),
      markdownSnippets(),
      boardScript(),
      textModules(
        /(swagger-ui-dist\/(swagger-ui-bundle\.js|swagger-ui\.css)|\/docs\/metrics\.md)$/,
      ),
      cloudflareTest({
        // src/index.ts's Worker with the machine's store observed (test/fixtures/worker.ts).
        main: "./test/fixtures/worker.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // A database outside the shard pattern, which test/db/shards.test.ts binds as a new
          // shard to check that adding one is a deployment step only.
          d1Databases: { SPARE_D1: "spare-d1" },
          // No test reaches outside the machine: every outbound fetch goes to the tests' own
          // network (a local DNS-over-HTTPS resolver, loopback passed on, anything else
          // refused and failed by test/setup.ts).
          outboundService: testNetwork,
          bindings: {
            ENVIRONMENT: "test",
            OPERATOR_TOKEN: "test-operator-token",
            TEST_MIGRATIONS: migrations,
            JWT_JWKS: testJwks,
            JWT_ISSUER: "https://idp.test/",
            JWT_AUDIENCE: "https://api.test/v1",
            WEBHOOK_DOH_URL: TEST_RESOLVER_URL,
            TEST_REFUSED_REQUESTS_URL: REFUSED_REQUESTS_URL,
          },
        },
      }),
    ],
    test: {
      // The Worker's own structured logs (`{"level": ...}` JSON lines: a 5XX with its cause, a
      // refused access token, a stream that could not be told) are what an operator reads in
      // production; in the tests they are what the tests provoke on purpose, and the tests that
      // are about them spy on them (test/http/server-errors.test.ts). Printed with
      // PM_TEST_LOGS=1, to read them around a failing test (docs/testing.md).
      onConsoleLog: (log) => process.env.PM_TEST_LOGS === "1" || !log.startsWith('{"level":'),
      setupFiles: ["./test/setup.ts"],
      // DuckDB in Node, the export tests' Parquet reader (it cannot run in workerd).
      globalSetup: ["./test/node/duckdb-bridge.ts"],
      // Some tests drive hundreds of requests through workerd; on a loaded 2-core CI
      // machine they need more than vitest's 5 s default.
      testTimeout: 30_000,
      hookTimeout: 30_000,
      // A test runtime a core. Vitest's default for a run is one fewer than the cores, which
      // on a 2-core machine ran one file at a time with the second core mostly idle: a
      // runtime's start-up and its file's tests are one JavaScript thread (docs/testing.md).
      maxWorkers: availableParallelism(),
      projects: [
        {
          extends: true,
          test: {
            name: "worker",
            include: ["test/**/*.test.ts"],
            exclude: [...PURE_TEST_FILES, ...ISOLATED_TEST_FILES],
            isolate: false,
          },
        },
        { extends: true, test: { name: "isolated", include: ISOLATED_TEST_FILES } },
        { extends: true, test: { name: "pure", include: PURE_TEST_FILES, isolate: false } },
      ],
    },
  };
});
