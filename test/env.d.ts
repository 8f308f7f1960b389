import type { D1Migration } from "cloudflare:test";

// The Worker's bindings and `Cloudflare.GlobalProps` (its main module and Durable Object
// classes) come from worker-configuration.d.ts (wrangler types); the tests add theirs.
declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** A D1 database no binding pattern names: test/db/shards.test.ts adds it as a shard. */
      SPARE_D1: D1Database;
      /**
       * Where a test runtime takes the URLs it tried to reach outside the machine
       * (test/node/test-network.ts; test/setup.ts checks it after every test).
       */
      TEST_REFUSED_REQUESTS_URL: string;
    }
  }
}
