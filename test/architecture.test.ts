/**
 * The house rules of docs/architecture.md that a reader can check in the sources: no
 * public-API code imports from src/operator/ (the operator API is mounted by src/app.ts
 * only); every router of a public route is made by `createRouter()`; tenant isolation and
 * soft delete are written in one module (src/db/company-scope.ts); no source file is over
 * 400 lines. The layers and the absence of cycles are checked by dependency-cruiser in
 * `npm run lint` (`.dependency-cruiser.cjs`).
 */
import { describe, expect, it } from "vitest";

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

/** The folder of src/ a source file is in (`realtime`, `resources`), or null for a file at the top. */
function folderOf(file: string): string | null {
  const parts = file.replace(/^\.\.\/src\//, "").split("/");
  return parts.length > 1 ? (parts[0] ?? null) : null;
}

/** The source file a relative import of `file` names (`../src/x/y.ts`), or null for a package. */
function resolveImport(file: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const parts = file.split("/").slice(0, -1);
  for (const part of spec.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  const base = parts.join("/");
  return [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => candidate in sources) ?? null;
}

/**
 * The import graph of src/ between folders (a file at the top, such as app.ts or
 * env.ts, belongs to none): folder -> the folders it imports from, with one import each.
 */
function folderGraph(files: Record<string, string>): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const [file, text] of Object.entries(files)) {
    const from = folderOf(file);
    if (from === null) continue;
    for (const spec of importsOf(text)) {
      const target = resolveImport(file, spec);
      const to = target === null ? null : folderOf(target);
      if (to === null || to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, `${file} imports ${spec}`);
      graph.set(from, edges);
    }
  }
  return graph;
}

/**
 * The folder loops of a graph: its strongly connected components of more than one folder
 * (Tarjan's algorithm), each with the imports that close it.
 */
function folderLoops(graph: Map<string, Map<string, string>>): string[][] {
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

describe("no folder loops", () => {
  it("has no two folders of src/ that import each other, directly or through others", () => {
    const graph = folderGraph(sources);
    // The graph is read at all: realtime publishes through events, events read the reports.
    expect(graph.get("realtime")?.has("events")).toBe(true);
    expect(graph.get("events")?.has("reports")).toBe(true);
    expect(folderLoops(graph)).toEqual([]);
  });

  it("finds a loop when one is there", () => {
    const looped = {
      ...sources,
      "../src/events/looped.ts": 'import { realtimeRoutes } from "../realtime/routes";\n',
    };
    expect(folderLoops(folderGraph(looped)).flat()).toContain(
      "../src/events/looped.ts imports ../realtime/routes",
    );
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

/** The board's browser script, shipped as text modules (src/board/*.client.js). */
const boardScripts = import.meta.glob<string>("../src/**/*.client.js", {
  query: "?raw",
  import: "default",
  eager: true,
});

describe("one job per file", () => {
  it("keeps every source file at 400 lines or fewer, the board's JavaScript included", () => {
    expect(Object.keys(boardScripts).length).toBeGreaterThan(1);
    const long = Object.entries({ ...sources, ...boardScripts })
      .map(([file, text]) => ({
        file,
        lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
      }))
      .filter((f) => f.lines > 400);
    expect(long).toEqual([]);
  });
});
