/**
 * `npm test`: Biome, dependency-cruiser and `tsgo` (`npm run lint`, then `npm run typecheck`)
 * while Vitest runs every test file, instead of before it (docs/testing.md, "How long
 * `npm test` takes"). The type-check keeps a core busy for a minute; beside it the test files use
 * what is left of two. Vitest prints as it goes; the lint and type-check output comes whole
 * when each ends. Exits non-zero when any of the three fails, after all have run.
 */
import { runCheck, runInTurn } from "./lib/checks";

const results = await Promise.all([
  runInTurn([
    ["npm run lint", "npm", ["run", "--silent", "lint"]],
    ["npm run typecheck", "npm", ["run", "--silent", "typecheck"]],
  ]),
  runCheck("vitest", "vitest", ["run", ...process.argv.slice(2)], true),
]);
process.exit(results.every(Boolean) ? 0 : 1);
