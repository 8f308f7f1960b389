/**
 * `npm run test:changed [-- <base>] [--list]`: the part of `npm test` that a change touches, for the
 * loop between two edits (docs/testing.md, "A change's own checks").
 *
 * The change is every file that differs from `<base>` (default `main`; `HEAD` for the
 * uncommitted edits only): committed since the merge base, staged, unstaged and untracked.
 * Runs at the same time:
 * - Biome over the changed files it lints; dependency-cruiser and the dependency rules when a
 *   file of src/ or a manifest changed;
 * - `tsgo` (TypeScript 7, as `npm run typecheck`) for each type-check project (package.json's
 *   `typecheck`) that holds a changed file,
 *   every project when a manifest or a tsconfig changed, and the Worker types' check when
 *   wrangler.toml changed;
 * - Vitest over the test files the change touches (testsTouched below): those importing a
 *   changed file, directly or not; those of the test folder named as a changed folder of src/
 *   (the routes they reach through the Worker show in no import); the ones that read every
 *   file (`import.meta.glob`); all of them when the config, a manifest, the harness or a module
 *   every route passes through changed.
 * `--list` prints those test files and runs nothing. Exits non-zero when any check fails. `npm test` stays the check before a merge: a change
 * to a document, a migration or a fixture read at run time reaches tests that do not import it.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { type Check, runCheck, runInTurn } from "./lib/checks";
import { PROJECT_ROOT } from "./lib/project";

/** A type-check project: the folders whose files it holds, and its `tsgo` runs' arguments. */
interface TypeProject {
  owns: (file: string) => boolean;
  runs: string[][];
}

const under =
  (...prefixes: string[]) =>
  (file: string) =>
    prefixes.some((p) => file.startsWith(p));

/** package.json's `typecheck`, by folder; a file belongs to the first project that owns it. */
const TYPE_PROJECTS: TypeProject[] = [
  { owns: under("src/board/browser/"), runs: [["--noEmit", "-p", "src/board/browser"]] },
  { owns: under("test/node/"), runs: [["--noEmit", "-p", "test/node"]] },
  { owns: under("bench/workers/"), runs: [["--noEmit", "-p", "bench/workers"]] },
  { owns: under("bench/"), runs: [["--noEmit", "-p", "bench"]] },
  { owns: under("scripts/", "vitest.config.ts"), runs: [["--noEmit", "-p", "scripts"]] },
  { owns: under("e2e/"), runs: [["--noEmit", "-p", "e2e"]] },
  {
    owns: under("clients/typescript/"),
    runs: [
      ["--noEmit", "-p", "clients/typescript"],
      ["-p", "clients/typescript/check/tsconfig.nodenext.json"],
      ["-p", "clients/typescript/check/tsconfig.bundler.json"],
    ],
  },
  { owns: under("src/", "test/", "worker-configuration.d.ts"), runs: [["--noEmit", "-p", "."]] },
];

/** Files whose change may alter any check: every project, every test. */
const MANIFESTS = ["package.json", "package-lock.json", "tsconfig.json", "biome.json"];

function git(...args: string[]): string[] {
  const run = spawnSync("git", args, { cwd: PROJECT_ROOT, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr.trim()}`);
  return run.stdout.split("\n").filter((line) => line !== "");
}

/** The files that differ from `base` (since the merge base) or are untracked, that exist. */
function changedFiles(base: string): string[] {
  const [since = base] = base === "HEAD" ? ["HEAD"] : git("merge-base", base, "HEAD");
  const files = new Set([
    ...git("diff", "--name-only", since),
    ...git("ls-files", "--others", "--exclude-standard"),
  ]);
  return [...files].filter((file) => existsSync(`${PROJECT_ROOT}/${file}`)).sort();
}

/**
 * Files whose change may alter any test: every test file runs. The Worker's entry and the
 * modules every route passes through are among them, since most test files reach the Worker
 * through its routes (`exports.default.fetch`), which no import of theirs shows.
 */
const EVERY_TEST = [
  ...MANIFESTS,
  "vitest.config.ts",
  "wrangler.toml",
  "test/setup.ts",
  "test/harness.ts",
  "test/node/",
  "migrations/",
  "src/index.ts",
  "src/app.ts",
  "src/app-env.ts",
  "src/env.ts",
  "src/app-chain/",
  "src/durable/",
  "src/http/",
  "src/db/",
  "src/auth/",
];

/** The files a module imports by a relative path (`.ts` added as Vite does; `?query` dropped). */
function relativeImports(file: string): string[] {
  const text = readFileSync(join(PROJECT_ROOT, file), "utf8");
  return [...text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"?]+)(?:\?[^"]*)?"/g)].flatMap(
    ([, spec = ""]) => {
      const target = join(dirname(file), spec);
      return [target, `${target}.ts`, `${target}/index.ts`]
        .filter((candidate) =>
          statSync(join(PROJECT_ROOT, candidate), { throwIfNoEntry: false })?.isFile(),
        )
        .slice(0, 1);
    },
  );
}

/** Whether `test` imports, directly or through other files, one of `changed`. */
function reaches(test: string, changed: Set<string>, seen = new Set<string>()): boolean {
  if (changed.has(test)) return true;
  seen.add(test);
  return relativeImports(test).some((next) => !seen.has(next) && reaches(next, changed, seen));
}

/**
 * The test files a change touches: those that import a changed file (directly or not), those
 * of the test folder named as a changed folder of src/ (`src/webhooks/` → `test/webhooks/`:
 * the tests that reach that code through the Worker's routes), those that read every file of
 * the repository (`import.meta.glob`: the layering, the documents' references), and all of
 * them when one of EVERY_TEST changed.
 */
function testsTouched(changed: string[]): string[] {
  const tests = git("ls-files", "--cached", "--others", "--exclude-standard", "test/").filter(
    (file) => file.endsWith(".test.ts") && existsSync(join(PROJECT_ROOT, file)),
  );
  if (changed.some(under(...EVERY_TEST))) return tests;
  const set = new Set(changed);
  const folders = changed.flatMap((file) => /^src\/([^/]+)\//.exec(file)?.[1] ?? []);
  return tests.filter(
    (test) =>
      reaches(test, set) ||
      folders.some((folder) => test.startsWith(`test/${folder}/`)) ||
      /import\.meta\.glob\b/.test(readFileSync(join(PROJECT_ROOT, test), "utf8")),
  );
}

const list = process.argv.includes("--list");
const base = process.argv.slice(2).find((arg) => arg !== "--list") ?? "main";
const files = changedFiles(base);
if (files.length === 0) {
  console.log(`test:changed: nothing differs from ${base}`);
  process.exit(0);
}
console.log(`test:changed: ${files.length} files differ from ${base}: ${files.join(" ")}`);

if (list) {
  console.log(testsTouched(files).join("\n"));
  process.exit(0);
}
const everything = files.some((file) => MANIFESTS.includes(file) || file.endsWith("tsconfig.json"));
const checks: Promise<boolean>[] = [];

checks.push(
  runCheck("biome", "biome", [
    "check",
    "--no-errors-on-unmatched",
    "--files-ignore-unknown=true",
    ...files,
  ]),
);
if (everything || files.some(under("src/", ".dependency-cruiser.cjs"))) {
  checks.push(
    runCheck("dependency-cruiser", "depcruise", ["src", "--config", ".dependency-cruiser.cjs"]),
    runCheck("dependency rules", "tsx", ["scripts/check-dependency-rules.ts"]),
  );
}
if (everything || files.includes("wrangler.toml")) {
  checks.push(runCheck("worker types", "tsx", ["scripts/check-worker-types.ts"]));
}
const sources = files.filter((file) => /\.(ts|tsx|mts|d\.ts|json)$/.test(file));
const touched = new Set(
  everything
    ? TYPE_PROJECTS
    : sources.flatMap((file) => TYPE_PROJECTS.find((project) => project.owns(file)) ?? []),
);
checks.push(
  runInTurn(
    [...touched].flatMap((project) =>
      project.runs.map((args): Check => [`tsgo ${args.join(" ")}`, "tsgo", args]),
    ),
  ),
);
const tests = testsTouched(files);
console.log(`test:changed: ${tests.length} test files: ${tests.join(" ")}`);
// Vitest's own output streams: it is the long part, and its progress is worth seeing.
if (tests.length > 0) checks.push(runCheck("vitest", "vitest", ["run", ...tests], true));

const results = await Promise.all(checks);
process.exit(results.every(Boolean) ? 0 : 1);
