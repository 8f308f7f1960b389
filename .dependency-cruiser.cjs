/**
 * The layers of src/ (docs/architecture.md), checked by `npm run lint`:
 * app -> routes -> domain -> storage, with a shared kernel (http/, auth/) that
 * every layer may use and that uses only storage. No cycles. The whole order of the folders,
 * and the absence of folder loops and file cycles in every tree (src, test, scripts, bench,
 * e2e), with no exemption, is test/architecture.test.ts's. Every `path` of a rule
 * must match a file (`scripts/check-dependency-rules.ts`, part of `npm run lint`): a rule
 * that names no file checks nothing.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Import cycles make the layers meaningless (type-only cycles included).",
      from: {},
      to: { circular: true },
    },
    {
      name: "routes-are-leaves",
      severity: "error",
      comment: "Only the app mounts route modules; nothing below them imports one.",
      from: { path: "^src/", pathNot: "^src/(app|index)\\.ts$|^src/operator/index\\.ts$" },
      // A resource's router is <resource>/routes.ts; a sub-resource's, beside it, is
      // <resource>/<sub>-routes.ts (operator/stops/classifications-routes.ts).
      to: { path: "^src/.*/(routes|[^/]+-routes)\\.ts$" },
    },
    {
      name: "public-api-not-on-operator",
      severity: "error",
      comment: "The public API and the layers below never import the operator API.",
      from: { path: "^src/", pathNot: "^src/(operator/|app\\.ts$|index\\.ts$)" },
      to: { path: "^src/operator/" },
    },
    {
      name: "storage-at-the-bottom",
      severity: "error",
      comment:
        "db/ knows nothing of the layers above it; below it are only the logger (observability/) " +
        "and the time units (time/), which import nothing of src/.",
      from: { path: "^src/(db|observability|time)/" },
      to: { path: "^src/", pathNot: "^src/(db|observability|time)/" },
    },
    {
      name: "kernel-below-domain",
      severity: "error",
      comment:
        "http/, auth/, app-env.ts and env.ts serve every layer, so they import only each other " +
        "and storage (app-env.ts too: no loop through the top files).",
      from: { path: "^src/(http|auth)/|^src/(app-env|env)\\.ts$" },
      to: {
        path: "^src/",
        pathNot: "^src/(http|auth|db|observability|time)/|^src/(app-env|env)\\.ts$",
      },
    },
    {
      name: "realtime-over-the-streams",
      severity: "error",
      comment:
        "realtime/ publishes into streams/, classifies stops through stops/ and reads the catalog " +
        "in resources/; nothing below it " +
        "imports it back (the read barrier every log reader passes is durable/realtime-barrier.ts, " +
        "handed the realtime layer's flush). " +
        "test/architecture.test.ts checks that no two folders import each other at all.",
      from: { path: "^src/(stops|streams|reports|resources|shifts|durable|webhooks|db|http|auth)/" },
      to: { path: "^src/realtime/" },
    },
    {
      name: "streams-over-the-reports",
      severity: "error",
      comment: "streams/ computes live figures with reports/; reports/ and below never import streams/.",
      from: { path: "^src/(reports|resources|shifts|durable|webhooks|db|http|auth)/" },
      to: { path: "^src/streams/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
