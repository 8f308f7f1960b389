// What the Node side of the test run hands to the tests (vitest's provide/inject).
import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** The DuckDB bridge's origin, `http://127.0.0.1:<port>` (test/node/duckdb-bridge.ts). */
    duckdbBridge: string;
  }
}
