/**
 * The house rules of docs/architecture.md that a reader can check in the sources: no
 * public-API code imports from src/operator/; every public router is made by
 * `createRouter()`; tenant isolation and soft delete are written in one module
 * (src/db/company-scope.ts); no source file is over 400 lines and no function over 80; no folder loop, file cycle or
 * import against the layers; exports only what another file uses; one name, one thing; a test
 * reads an answer with the generated clients' types, never a hand-written copy (docs/testing.md).
 */
import ts from "typescript";
import { describe, expect, it } from "vitest";
import publicDocumentText from "../clients/typescript/src/generated/openapi.json?raw";
import operatorDocumentText from "../scripts/lib/generated/operator-openapi.json?raw";

const sources = import.meta.glob<string>("../src/**/*.ts", {
  query: "?raw",
  import: "default",
  eager: true,
});

/** The module paths a source file imports (static `import ... from` and `export ... from`). */
function importsOf(text: string): string[] {
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)";/gms)].map(
    (m) => m[1] ?? "",
  );
}

describe("the layers", () => {
  it("keep public-API code free of imports from src/operator/", () => {
    const files = Object.keys(sources);
    expect(files.length).toBeGreaterThan(50);
    const offenders: string[] = [];
    for (const [file, text] of Object.entries(sources)) {
      if (file.startsWith("../src/operator/") || file === "../src/app.ts") continue;
      for (const spec of importsOf(text)) {
        if (/(^|\/)operator(\/|$)/.test(spec)) offenders.push(`${file} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("make every public router with createRouter()", () => {
    const publicRouters = Object.entries(sources).filter(
      ([file, text]) =>
        !file.startsWith("../src/operator/") &&
        file !== "../src/http/openapi.ts" &&
        /\.openapi\(/.test(text),
    );
    expect(publicRouters.length).toBeGreaterThan(8);
    for (const [file, text] of publicRouters) {
      expect(text, file).not.toMatch(/new OpenAPIHono/);
    }
  });
});

describe("one security chain", () => {
  it("is assembled in src/app-chain/ only: no door (/v1, /mcp) rebuilds it by hand", () => {
    // The chain's first and third steps: a module that calls them outside app-chain/ has a
    // chain of its own, which may drift from /v1's (its order, its body limit, a new step).
    const steps = /\b(limitFailedAuthentications|rateLimit)\(/;
    const own = ["../src/rate-limit/middleware.ts"];
    const outside = Object.keys(sources).filter((f) => f.startsWith("../src/app-chain/"));
    expect(outside.length).toBeGreaterThan(0);
    expect(linesMatching(steps, [...own, ...outside])).toEqual([]);
    // The pattern does see the chain where it is built.
    expect(linesMatching(steps, own).length).toBeGreaterThan(0);
  });
});

/**
 * Every TypeScript file of the project by its path from the root (`src/app.ts`,
 * `test/harness.ts`, `scripts/lib/replay.ts`): the Worker, its tests, the scripts, the
 * benchmarks and the browser checks, whose imports the structure checks below read.
 */
const project: Record<string, string> = {};
for (const [key, text] of Object.entries({
  ...sources,
  ...import.meta.glob<string>(["./**/*.ts", "../scripts/**/*.ts", "../bench/**/*.ts"], {
    query: "?raw",
    import: "default",
    eager: true,
  }),
  ...import.meta.glob<string>("../e2e/**/*.ts", { query: "?raw", import: "default", eager: true }),
})) {
  // A declaration file (`*.d.ts`) declares modules; it imports nothing of the project.
  if (key.endsWith(".d.ts")) continue;
  project[key.startsWith("../") ? key.slice(3) : `test/${key.slice(2)}`] = text;
}

/**
 * The module paths a file imports: static `import`/`export ... from` (type-only included),
 * side-effect `import "..."` and dynamic `import("...")`.
 */
function allImportsOf(text: string): string[] {
  return [
    ...importsOf(text),
    ...[...text.matchAll(/^import\s+"([^"]+)";/gm)].map((m) => m[1] ?? ""),
    ...[...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? ""),
  ];
}

/** The project file a relative import of `file` names (`src/x/y.ts`), or null (a package, a text module). */
function resolveImport(files: Record<string, string>, file: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const parts = file.split("/").slice(0, -1);
  for (const part of spec.replace(/\?.*$/, "").split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  const base = parts.join("/").replace(/\.js$/, "");
  return [`${base}.ts`, `${base}/index.ts`].find((candidate) => candidate in files) ?? null;
}

/** The file import graph: file -> the project files it imports, each with the import that makes the edge. */
function fileGraph(files: Record<string, string>): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const [file, text] of Object.entries(files)) {
    const edges = new Map<string, string>();
    for (const spec of allImportsOf(text)) {
      const target = resolveImport(files, file, spec);
      if (target !== null && target !== file && !edges.has(target)) {
        edges.set(target, `${file} imports ${spec}`);
      }
    }
    graph.set(file, edges);
  }
  return graph;
}

/**
 * The room of a file inside its tree (`src`, `test`, `scripts`, `bench`, `e2e`): its
 * folder (`src/realtime`), or for a file at the top of the tree the file itself
 * (`src/app-env.ts`), a room of its own: no file is left out of the loops.
 */
function roomOf(file: string): string {
  const parts = file.split("/");
  return parts.slice(0, 2).join("/");
}

/** The graph between rooms: room -> the rooms it imports from, with one import each. */
function roomGraph(files: Record<string, string>): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const [file, edges] of fileGraph(files)) {
    const from = roomOf(file);
    const out = graph.get(from) ?? new Map<string, string>();
    graph.set(from, out);
    for (const [target, why] of edges) {
      const to = roomOf(target);
      if (to !== from && !out.has(to)) out.set(to, why);
    }
  }
  return graph;
}

/**
 * The loops of a graph: its strongly connected components of more than one node (Tarjan's
 * algorithm), each with the imports that close it.
 */
function loopsOf(graph: Map<string, Map<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const loops: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) ?? 0);
    stack.push(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (stack.includes(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      component.push(w);
    }
    if (component.length > 1) {
      loops.push(
        component.flatMap((a) =>
          component.flatMap((b) => {
            const edge = graph.get(a)?.get(b);
            return edge ? [edge] : [];
          }),
        ),
      );
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return loops;
}

/**
 * The rooms of src/, top to bottom (docs/architecture.md, "The layers"): a room imports
 * only rooms below it. The composition (index.ts, app.ts); the operator API, MCP, exports
 * and the board over the domain; the domain one way, realtime/ over machine-state/ over
 * stops/ over streams/ over webhooks/ over reports/ over resources/ over shifts/ over
 * durable/ and parquet/; the public security chain (app-chain/, used by the routes in the
 * domain's folders) over the rate limiter; the shared kernel (auth/, http/, app-env.ts,
 * env.ts); storage (db/); at the bottom the time units (time/) and the logger
 * (observability/), which import nothing of src/. A new folder or top file takes its place here.
 */
const LAYERS = [
  "src/index.ts",
  "src/app.ts",
  "src/operator",
  "src/mcp",
  "src/exports",
  "src/board",
  "src/realtime",
  "src/machine-state",
  "src/stops",
  "src/streams",
  "src/webhooks",
  "src/reports",
  "src/resources",
  "src/shifts",
  "src/durable",
  "src/parquet",
  "src/app-chain",
  "src/rate-limit",
  "src/auth",
  "src/http",
  "src/app-env.ts",
  "src/env.ts",
  "src/db",
  "src/time",
  "src/observability",
] as const;

/** The imports of src/ against `LAYERS`: upward or sideways, or from or to a room not placed. */
function againstTheLayers(files: Record<string, string>): string[] {
  const rank = new Map<string, number>(LAYERS.map((room, i) => [room, i]));
  const out: string[] = [];
  for (const [from, edges] of roomGraph(files)) {
    if (!from.startsWith("src/")) continue;
    if (!rank.has(from)) out.push(`${from} is in no layer`);
    for (const [to, why] of edges) {
      if ((rank.get(from) ?? -1) >= (rank.get(to) ?? -1)) out.push(`${from} -> ${to}: ${why}`);
    }
  }
  return out;
}

/**
 * The imports of test files from another test folder's helpers (as "file imports spec"): a
 * helper that several test folders use lives in test/fixtures/, or is the harness every test
 * starts from (test/harness.ts); a folder's own helper is for that folder's tests alone
 * (docs/testing.md). A file at the top of test/ is a room of its own, so a helper there
 * (other than the harness) is one folder's helper that others borrow too.
 */
function borrowedTestHelpers(files: Record<string, string>): string[] {
  const shared = (target: string) =>
    target.startsWith("test/fixtures/") || target === "test/harness.ts";
  const out: string[] = [];
  for (const [file, edges] of fileGraph(files)) {
    if (!file.startsWith("test/")) continue;
    for (const [target, why] of edges) {
      if (!target.startsWith("test/") || shared(target)) continue;
      if (roomOf(target) !== roomOf(file)) out.push(why);
    }
  }
  return out.sort();
}

describe("the import structure", () => {
  it("reads every tree of the project", () => {
    const rooms = new Set(Object.keys(project).map((f) => f.split("/")[0]));
    expect([...rooms].sort()).toEqual(["bench", "e2e", "scripts", "src", "test"]);
    const graph = roomGraph(project);
    // The graph is read at all: realtime publishes through events, events read the reports,
    // the tests import the Worker, a dynamic import is an edge.
    expect(graph.get("src/realtime")?.has("src/streams")).toBe(true);
    expect(graph.get("src/streams")?.has("src/reports")).toBe(true);
    expect(graph.get("test/harness.ts")?.has("src/db")).toBe(true);
    expect(fileGraph(project).get("src/mcp/routes.ts")?.has("src/mcp/handle.ts")).toBe(true);
  });

  it("has no folder loop: no two rooms (a folder, or a file at the top of a tree) import each other, directly or through others", () => {
    expect(loopsOf(roomGraph(project))).toEqual([]);
  });

  it("has no file cycle, type-only imports included", () => {
    expect(loopsOf(fileGraph(project))).toEqual([]);
  });

  it("has no import against the layering of src/", () => {
    expect(againstTheLayers(project)).toEqual([]);
  });

  it("has no test file borrowing a helper of another test folder: shared ones are in test/fixtures/", () => {
    expect(borrowedTestHelpers(project)).toEqual([]);
  });

  it("finds a borrowed test helper when there is one", () => {
    const files = {
      "test/harness.ts": "export const api = 1;\n",
      "test/fixtures/api-types.ts": "export type Api = 1;\n",
      "test/attic/plant.ts": 'import { api } from "../harness";\n',
      "test/attic/own.test.ts": 'import { plant } from "./plant";\n',
      "test/cellar/x.test.ts":
        'import { plant } from "../attic/plant";\nimport { api } from "../harness";\n',
      "test/cellar/y.test.ts": 'import type { Api } from "../fixtures/api-types";\n',
      "test/top-helper.ts": "export const top = 1;\n",
      "test/cellar/z.test.ts": 'import { top } from "../top-helper";\n',
      "test/top.test.ts": 'import { api } from "./harness";\nimport { top } from "./top-helper";\n',
    };
    expect(borrowedTestHelpers(files)).toEqual([
      "test/cellar/x.test.ts imports ../attic/plant",
      "test/cellar/z.test.ts imports ../top-helper",
      "test/top.test.ts imports ./top-helper",
    ]);
  });

  it("finds a folder loop, a file cycle and an upward import when one is there", () => {
    const broken = {
      ...project,
      // Through a file at the top (the loop once exempted: http/ -> app-env.ts -> auth/ -> http/).
      "src/app-env.ts": `${project["src/app-env.ts"]}\nimport { authenticate } from "./auth/middleware";\n`,
      "scripts/lib/a.ts": 'import { b } from "./b";\n',
      "scripts/lib/b.ts": 'import type { a } from "./a";\n',
      "src/durable/upward.ts": 'import { machineObject } from "../realtime/machine-stub";\n',
    };
    const loops = loopsOf(roomGraph(broken)).flat();
    expect(loops).toContain("src/app-env.ts imports ./auth/middleware");
    expect(loopsOf(fileGraph(broken)).flat()).toEqual(
      expect.arrayContaining(["scripts/lib/a.ts imports ./b", "scripts/lib/b.ts imports ./a"]),
    );
    expect(againstTheLayers(broken)).toEqual(
      expect.arrayContaining([
        "src/durable -> src/realtime: src/durable/upward.ts imports ../realtime/machine-stub",
        "src/app-env.ts -> src/auth: src/app-env.ts imports ./auth/middleware",
      ]),
    );
    expect(againstTheLayers({ ...project, "src/attic/x.ts": "" })).toEqual([
      "src/attic is in no layer",
    ]);
  });
});

/**
 * The exports of src/ that no other file uses (named in no other file of the project): a
 * module exports what it offers, so what only its own file uses is not exported. The tables
 * of src/db/schema/ are exported for drizzle-kit, which reads the module's exports, so they
 * are left out.
 */
function needlessExports(files: Record<string, string>): string[] {
  const declaration =
    /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|type|interface|enum)\s+([A-Za-z_$][\w$]*)/gm;
  const texts = Object.entries(files);
  const dead: string[] = [];
  for (const [file, text] of texts) {
    if (!file.startsWith("src/") || file.startsWith("src/db/schema")) continue;
    for (const [, name = ""] of text.matchAll(declaration)) {
      const named = new RegExp(`\\b${name.replace(/\$/g, "\\$")}\\b`);
      if (!texts.some(([other, t]) => other !== file && named.test(t))) {
        dead.push(`${file}: ${name}`);
      }
    }
  }
  return dead;
}

describe("exports say what a module offers", () => {
  it("exports nothing that only its own file uses (or nothing uses)", () => {
    expect(needlessExports(project)).toEqual([]);
  });

  it("finds one when it is there", () => {
    const withNeedless = {
      ...project,
      "src/http/attic.ts":
        "export const StringIdListFilter = 1;\nexport const onlyInAttic = 2;\nexport const used = onlyInAttic;\n",
      "src/http/user.ts": 'import { used } from "./attic";\n',
    };
    expect(needlessExports(withNeedless)).toEqual([
      "src/http/attic.ts: StringIdListFilter",
      "src/http/attic.ts: onlyInAttic",
    ]);
  });
});

/**
 * The names of src/ that mean two things: an exported name declared in two files, and a file
 * name used in two folders. The layout's names (a resource's `routes.ts`, `schemas.ts`,
 * `queries.ts`, `rules.ts`, a folder's `index.ts` and `middleware.ts`) repeat by design, and
 * so do the schema's parts (src/db/schema/<area>.ts, named after the area they store).
 */
function duplicatedNames(files: Record<string, string>): string[] {
  const declaration =
    /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|type|interface|enum)\s+([A-Za-z_$][\w$]*)/gm;
  const layout = new Set(["routes", "schemas", "queries", "rules", "index", "middleware"]);
  const declaredIn = new Map<string, Set<string>>();
  const filesNamed = new Map<string, string[]>();
  for (const [file, text] of Object.entries(files)) {
    if (!file.startsWith("src/") || !file.endsWith(".ts") || file.endsWith(".d.ts")) continue;
    for (const [, name = ""] of text.matchAll(declaration)) {
      declaredIn.set(name, (declaredIn.get(name) ?? new Set()).add(file));
    }
    const base = file.slice(file.lastIndexOf("/") + 1, -".ts".length);
    if (layout.has(base) || file.startsWith("src/db/schema/")) continue;
    filesNamed.set(base, [...(filesNamed.get(base) ?? []), file]);
  }
  return [
    ...[...declaredIn]
      .filter(([, where]) => where.size > 1)
      .map(([name, where]) => `${name}: ${[...where].sort().join(", ")}`),
    ...[...filesNamed]
      .filter(([, where]) => where.length > 1)
      .map(([base, where]) => `${base}.ts: ${where.sort().join(", ")}`),
  ];
}

describe("one name, one thing", () => {
  it("declares no exported name of src/ twice and uses no file name in two folders", () => {
    expect(duplicatedNames(project)).toEqual([]);
  });

  it("finds both when they are there", () => {
    const twice = {
      ...project,
      "src/http/attic/outbox.ts": "export const RETRY_MS = 1;\n",
      "src/shifts/attic/outbox.ts": "export const RETRY_MS = 2;\n",
    };
    expect(duplicatedNames(twice)).toEqual([
      "RETRY_MS: src/http/attic/outbox.ts, src/shifts/attic/outbox.ts",
      "outbox.ts: src/http/attic/outbox.ts, src/shifts/attic/outbox.ts",
    ]);
  });
});

/** "path:line: text" of every source line matching `pattern`, outside the files `except`. */
function linesMatching(pattern: RegExp, except: string[]): string[] {
  const out: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    if (except.includes(file)) continue;
    text.split("\n").forEach((line, i) => {
      if (pattern.test(line)) out.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return out;
}

const SCOPE_MODULE = "../src/db/company-scope.ts";

describe("tenant isolation in one place", () => {
  it("builds every company condition in src/db/company-scope.ts", () => {
    expect(Object.keys(sources)).toContain(SCOPE_MODULE);
    // `eq(<table>.companyId, …)` anywhere else is a query with a tenant rule of its own.
    expect(linesMatching(/\beq\(\s*\w+\.companyId\b/, [SCOPE_MODULE])).toEqual([]);
  });

  it("writes every raw SQL company condition through its helpers too", () => {
    // `company_id = …` (or `IN`, `IS`, `<>`) in SQL text is a tenant rule by hand; the
    // statement takes `ownedSql` / `ownedText` instead. Column lists and DDL do not match.
    // (`===` and `!==` are JavaScript comparisons of a row's field, not SQL.)
    const raw = /\bcompany_id"?\s*(=(?!=)|<>|!=(?!=)|\bIN\b|\bIS\b)/i;
    expect(linesMatching(raw, [SCOPE_MODULE])).toEqual([]);
    // The pattern does see a condition, qualified, index-hidden or quoted.
    for (const condition of [
      "WHERE company_id = ?1",
      "AND +l.company_id = CAST(?1 AS INTEGER)",
      'w."company_id" IN (1, 2)',
    ]) {
      expect(condition).toMatch(raw);
    }
    expect("meta.company_id !== key.companyId").not.toMatch(raw);
  });

  it("soft-deletes through its helpers only", () => {
    // A `deletedAt` set by hand is a second soft-delete rule (and forgets `updatedAt`).
    expect(linesMatching(/\.set\(\{[^}]*\bdeletedAt:\s*(?!null)/, [SCOPE_MODULE])).toEqual([]);
  });
});

describe("one home per rule", () => {
  it("writes the JSON-list idiom `IN (SELECT value FROM json_each(...))` in src/db/json-list.ts only", () => {
    const idiom = /IN \(SELECT value FROM json_each\(/i;
    expect(linesMatching(idiom, ["../src/db/json-list.ts"])).toEqual([]);
    expect("AND id NOT IN (SELECT value FROM json_each(?2))").toMatch(idiom);
  });

  it("converts report minutes in src/reports/oee.ts only (MS_PER_MINUTE)", () => {
    const home = "../src/reports/oee.ts";
    expect(linesMatching(/\bMS_PER_MINUTE\s*=/, [home])).toEqual([]);
    // A duration in minutes written by hand (`/ 60_000`, `/ 60000`) in a report is a second rule.
    const reportFiles = Object.keys(sources).filter(
      (f) => f.startsWith("../src/reports/") && f !== home,
    );
    const byHand = linesMatching(
      /\/\s*60_?000\b/,
      Object.keys(sources).filter((f) => !reportFiles.includes(f)),
    );
    expect(byHand).toEqual([]);
  });
});

describe("one job per file", () => {
  it("keeps every source file at 400 lines or fewer, the board's browser code included", () => {
    expect(Object.keys(sources).some((f) => f.startsWith("../src/board/browser/"))).toBe(true);
    const long = Object.entries(sources)
      .map(([file, text]) => ({
        file,
        lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
      }))
      .filter((f) => f.lines > 400);
    expect(long).toEqual([]);
  });

  it("keeps JavaScript out of src/: the board's browser code is TypeScript too", () => {
    const javascript = Object.keys(
      import.meta.glob("../src/**/*.{js,mjs,cjs}", { query: "?raw", import: "default" }),
    );
    expect(javascript).toEqual([]);
  });
});

describe("one way for each thing", () => {
  const LOG_MODULE = "../src/observability/log.ts";

  it("logs through src/observability/log.ts only: no direct console call elsewhere in src/", () => {
    expect(Object.keys(sources)).toContain(LOG_MODULE);
    const direct = /\bconsole\s*\.\s*(log|info|warn|error|debug|trace)\b/;
    expect(linesMatching(direct, [LOG_MODULE])).toEqual([]);
    // The pattern sees a call, a method picked at run time and one passed on.
    for (const line of [
      'console.error(JSON.stringify({ level: "error" }));',
      "(down ? console.error : console.log)(line);",
      "promise.catch(console.warn);",
    ]) {
      expect(line).toMatch(direct);
    }
    expect(linesMatching(direct, []).length).toBeGreaterThan(0);
  });

  const TIME_MODULE = "../src/time/units.ts";

  it("declares the time units in src/time/units.ts only, and rounds to the hour with its hourStart", () => {
    expect(Object.keys(sources)).toContain(TIME_MODULE);
    const unit = /\bconst\s+[A-Z_]*(SECOND|MINUTE|HOUR|DAY|WEEK)_MS\s*[:=]/;
    expect(linesMatching(unit, [TIME_MODULE])).toEqual([]);
    // The hour's start by hand: `Math.floor(t / HOUR_MS) * HOUR_MS`, `t - (t % BLOCK_MS)`.
    const byHand =
      /Math\.floor\([^;]*\/\s*(HOUR_MS|BLOCK_MS|3_?600_?000)\)\s*\*|(\w+)\s*-\s*\(\2\s*%\s*(HOUR_MS|BLOCK_MS|3_?600_?000)\)/;
    expect(linesMatching(byHand, [TIME_MODULE])).toEqual([]);
    expect(linesMatching(unit, []).length).toBeGreaterThan(0);
    for (const line of [
      "const DAY_MS = 86_400_000;",
      "export const MINUTE_MS = 60_000;",
      "const PLAN_HOUR_MS: number = 3_600_000;",
      "const hourOf = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;",
      "const from = Math.floor((now - REEVALUATE_MS) / 3_600_000) * 3_600_000;",
    ]) {
      expect(unit.test(line) || byHand.test(line), line).toBe(true);
    }
    expect("if (!hours.has(t - (t % BLOCK_MS))) continue;").toMatch(byHand);
    expect("const REEVALUATE_MS = 7 * DAY_MS;").not.toMatch(unit);
    expect("if (bucketWidthMs % BLOCK_MS === 0) return;").not.toMatch(byHand);
  });

  it("writes a Durable Object's schema in its steps only (a *-migrations.ts file, run by src/db/object-migrations.ts)", () => {
    const ddl = /\b(CREATE|ALTER|DROP)\s+(TABLE|INDEX|TRIGGER|VIEW)\b/i;
    const runner = "../src/db/object-migrations.ts";
    // D1's company-move triggers, made from the D1 schema's table list at run time: D1's
    // own schema is drizzle-kit's migrations/, not a Durable Object's.
    const d1 = "../src/db/move-fence.ts";
    const steps = Object.keys(sources).filter((f) => f.endsWith("-migrations.ts") && f !== runner);
    expect(steps.length).toBeGreaterThanOrEqual(8);
    expect(linesMatching(ddl, [runner, d1, ...steps])).toEqual([]);
    // The count of DDL sites: the step files, the runner (its version table) and the D1 fence.
    const sites = new Set(linesMatching(ddl, []).map((line) => line.split(":")[0]));
    expect([...sites].sort()).toEqual([d1, runner, ...steps].sort());
    expect("sql.exec(`CREATE TABLE IF NOT EXISTS leases (id TEXT)`);").toMatch(ddl);
    expect('sql.exec("ALTER TABLE leases ADD COLUMN stream TEXT");').toMatch(ddl);
    expect("// the table is created by the steps").not.toMatch(ddl);
  });
});

/** Longest function of src/, in lines from its first token to its closing brace. */
const FUNCTION_LINE_LIMIT = 80;

/**
 * The functions of src/ (declarations, methods, arrows, function expressions, constructors,
 * read with the TypeScript compiler's parser) longer than {@link FUNCTION_LINE_LIMIT} lines,
 * as "file: name (lines)", longest first; a nested function is counted on its own and inside
 * its parent.
 */
function longFunctions(files: Record<string, string>): string[] {
  const long: { where: string; lines: number }[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (!file.startsWith("src/") || file.endsWith(".d.ts")) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (
        (ts.isFunctionDeclaration(node) ||
          ts.isMethodDeclaration(node) ||
          ts.isArrowFunction(node) ||
          ts.isFunctionExpression(node) ||
          ts.isConstructorDeclaration(node)) &&
        node.body
      ) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.end).line;
        const lines = last - first + 1;
        if (lines > FUNCTION_LINE_LIMIT) long.push({ where: `${file}: ${nameOf(node)}`, lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return long.sort((a, b) => b.lines - a.lines).map((f) => `${f.where} (${f.lines})`);
}

/** A function's name: its own, or that of the variable or property it is assigned to. */
function nameOf(node: ts.SignatureDeclaration): string {
  const parent = node.parent;
  const name =
    node.name ??
    (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
      ? parent.name
      : undefined);
  return name?.getText() ?? "(anonymous)";
}

/**
 * Functions still over the limit, waiting for their split (issue 51) while other branches
 * change their files; the list only shrinks: a function not named here must fit the limit.
 */
const NOT_YET_SPLIT: string[] = [];

describe("functions that fit a screen", () => {
  it(`keeps every function of src/ at ${FUNCTION_LINE_LIMIT} lines or fewer`, () => {
    const long = longFunctions(project).filter(
      (f) => !NOT_YET_SPLIT.includes(f.replace(/ \(\d+\)$/, "")),
    );
    expect(long).toEqual([]);
  });

  it("finds one when it is there", () => {
    const body = Array.from({ length: FUNCTION_LINE_LIMIT }, (_, i) => `  total += ${i};`);
    const text = `export function sum() {\n  let total = 0;\n${body.join("\n")}\n}\n`;
    const short = "export const ok = () => {\n  return 1;\n};\n";
    expect(longFunctions({ "src/http/attic.ts": text, "src/http/ok.ts": short })).toEqual([
      `src/http/attic.ts: sum (${FUNCTION_LINE_LIMIT + 3})`,
    ]);
  });
});

/** The two OpenAPI documents the generated clients were written from (test/fixtures/api-types.ts). */
const documents = [publicDocumentText, operatorDocumentText].map(
  (text) => JSON.parse(text) as { components: { schemas: Record<string, unknown> } },
);

/**
 * The object shapes of the documents, each as the names of its properties: every schema with
 * `properties`, at any depth (a component, a nested object, an answer written inline in an
 * operation), and every `allOf` as the union of its parts (a `$ref` part read from the
 * components).
 */
function documentShapes(): Set<string>[] {
  const shapes: Set<string>[] = [];
  const schemas = Object.assign({}, ...documents.map((d) => d.components.schemas)) as Record<
    string,
    unknown
  >;
  const keysOf = (schema: unknown): string[] => {
    if (typeof schema !== "object" || schema === null) return [];
    const s = schema as { $ref?: string; properties?: object; allOf?: unknown[] };
    if (s.$ref) return keysOf(schemas[s.$ref.split("/").at(-1) ?? ""]);
    return [...Object.keys(s.properties ?? {}), ...(s.allOf ?? []).flatMap(keysOf)];
  };
  const visit = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    const s = node as { properties?: unknown; allOf?: unknown };
    if (s.properties !== undefined || Array.isArray(s.allOf)) shapes.push(new Set(keysOf(node)));
    for (const child of Object.values(node)) visit(child);
  };
  for (const document of documents) visit(document);
  return shapes;
}

/** A name that says "an answer's body": a schema's name, or a name ending in one of these. */
const RESPONSE_NAME = /(Response|Body|Row|Page)$/;

/**
 * Object types that are not an answer's body though their fields are named like one's, each
 * with why (a new entry needs a reason as good).
 */
const NOT_RESPONSE_BODIES = {
  "test/harness.ts: TestCompany": "the harness's own record: a company's id and name with a key",
  "test/fixtures/production-logs.ts: LogFixture":
    "a production log written into the shard directly, in epoch ms: a row to insert, not an answer",
  "test/shifts/instance-series.test.ts: Def":
    "a shift definition handed to a pure function of src/shifts/, not read from an answer",
  "test/streams/pull-sync.test.ts: Synced":
    "the bound of a generic over the rows of five collections: the fields pull sync reads",
};

/**
 * The object types a test declares by hand (an `interface`, or a `type` of an object literal,
 * at any depth of any file of test/ but test/fixtures/api-types.ts, the home of the generated
 * types; the shared helpers of test/fixtures/ read answers too) that describe an answer of the APIs,
 * as "file: name": named as a schema of the documents or ending in Response, Body, Row or
 * Page, or with two properties or more, all named as the properties of one shape of the
 * documents. An alias of a generated type (`type Row = Api["MetricsReportRow"]`) is not an
 * object literal, and is what a test writes instead.
 */
function handWrittenResponseTypes(files: Record<string, string>): string[] {
  const shapes = documentShapes();
  const schemaNames = new Set(documents.flatMap((d) => Object.keys(d.components.schemas)));
  const found: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (!file.startsWith("test/") || file === "test/fixtures/api-types.ts") continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      const members = ts.isInterfaceDeclaration(node)
        ? node.members
        : ts.isTypeAliasDeclaration(node) && ts.isTypeLiteralNode(node.type)
          ? node.type.members
          : undefined;
      if (members && (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node))) {
        const name = node.name.text;
        const keys = members
          .filter(ts.isPropertySignature)
          .map((m) => m.name.getText(source).replace(/^["']|["']$/g, ""));
        const shaped = keys.length >= 2 && shapes.some((s) => keys.every((k) => s.has(k)));
        if (schemaNames.has(name) || RESPONSE_NAME.test(name) || shaped) {
          found.push(`${file}: ${name}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found.filter((f) => !(f in NOT_RESPONSE_BODIES));
}

describe("tests read answers with the generated clients' types", () => {
  it("declares no response body by hand in test/, only aliases of the generated types (docs/testing.md)", () => {
    expect(handWrittenResponseTypes(project)).toEqual([]);
  });

  it("finds one by its name or by its fields, in a fixture too, and leaves aliases and other types", () => {
    const files = {
      "test/x/a.test.ts": [
        // Named as a schema, named as a body, shaped as a stop, one nested in a function.
        "interface Stop { id: number }",
        "type ExportBody = { id: string };",
        "export interface Held { startTime: string; endTime: string | null; isManual: boolean }",
        "function f() { interface Inner { generalCauses: unknown[]; components: unknown[] } }",
        // An alias of a generated type, and types that are no answer.
        'type MetricsRow = Api["MetricsReportRow"];',
        "interface Spy { anchors: string[]; calls: number }",
        'type Era = "a" | "b";',
      ].join("\n"),
      "test/fixtures/b.ts": "interface Stop { id: number; startTime: string }",
      "test/fixtures/api-types.ts":
        'export type Api = components["schemas"];\ninterface Page { x: 1 }',
    };
    expect(handWrittenResponseTypes(files)).toEqual([
      "test/x/a.test.ts: Stop",
      "test/x/a.test.ts: ExportBody",
      "test/x/a.test.ts: Held",
      "test/x/a.test.ts: Inner",
      "test/fixtures/b.ts: Stop",
    ]);
    // Each exception names a file that is there.
    for (const entry of Object.keys(NOT_RESPONSE_BODIES)) {
      expect(Object.keys(project), entry).toContain(entry.split(": ")[0]);
    }
  });
});
