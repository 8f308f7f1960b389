/**
 * `npm run build:board`, and the `[build]` command of wrangler.toml (run by `wrangler dev`,
 * again whenever src/board/browser/ changes, and by `wrangler deploy`): bundles the plant
 * board's browser code into dist/board.js (git-ignored), which src/board/board-page.ts
 * serves. The file is rewritten only when its text changes, so a build that changes nothing
 * does not reload `wrangler dev`.
 */
import { writeBoardScript } from "./lib/board-bundle";

await writeBoardScript();
