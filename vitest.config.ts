import { readFileSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig, type Plugin } from "vitest/config";

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

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(import.meta.dirname, "migrations"));
  // The public half of a test-only key pair (test/fixtures/); tests sign with the private half.
  const testJwks = readFileSync(path.join(import.meta.dirname, "test/fixtures/jwks.json"), "utf8");
  return {
    plugins: [
      markdownSnippets(),
      textModules(
        /(swagger-ui-dist\/(swagger-ui-bundle\.js|swagger-ui\.css)|\.client\.js|\/docs\/metrics\.md)$/,
      ),
      cloudflareTest({
        main: "./src/index.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // A database outside the shard pattern, which test/db/shards.test.ts binds as a new
          // shard to check that adding one is a deployment step only.
          d1Databases: { SPARE_D1: "spare-d1" },
          bindings: {
            ENVIRONMENT: "test",
            OPERATOR_TOKEN: "test-operator-token",
            TEST_MIGRATIONS: migrations,
            JWT_JWKS: testJwks,
            JWT_ISSUER: "https://idp.test/",
            JWT_AUDIENCE: "https://api.test/v1",
            // Webhook deliverers set no alarm: a test runs their due deliveries itself
            // (test/webhooks/webhook-harness.ts), counting attempts without racing a timer.
            WEBHOOK_DELIVERY_ALARMS: "off",
          },
        },
      }),
    ],
    test: {
      setupFiles: ["./test/setup.ts"],
      // DuckDB in Node, the export tests' Parquet reader (it cannot run in workerd).
      globalSetup: ["./test/node/duckdb-bridge.ts"],
      include: ["test/**/*.test.ts"],
      // Some tests drive hundreds of requests through workerd; on a loaded 2-core CI
      // machine they need more than vitest's 5 s default.
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  };
});
