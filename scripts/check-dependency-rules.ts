/**
 * Fails when a rule of `.dependency-cruiser.cjs` names files that do not exist.
 *
 * dependency-cruiser reports a violation only where a file matches a rule's path: a rule
 * whose `from.path` or `to.path` matches no file of `src/` (a folder renamed, a naming
 * convention dropped) passes forever while checking nothing. So every alternative of
 * every `path` (the parts of a top-level `(a)|(b)`) must match at least one file; a
 * `pathNot` may match nothing (it only narrows). Run by `npm run lint`.
 */
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";

interface PathRule {
  path?: string | string[];
  pathNot?: string | string[];
}

interface ForbiddenRule {
  name: string;
  from: PathRule;
  to: PathRule & { circular?: boolean };
}

const root = join(import.meta.dirname, "..");
const config = createRequire(import.meta.url)(join(root, ".dependency-cruiser.cjs")) as {
  forbidden: ForbiddenRule[];
  options: { exclude?: { path?: string } };
};

/** Every file under `dir`, as `src/...` paths with forward slashes. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split("\\").join("/"));
}

/**
 * The alternatives of a pattern: `(a)|(b)` at the top level gives `a` and `b`; any other
 * pattern is its own single alternative.
 */
export function alternatives(pattern: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") i++;
    else if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (ch === "|" && depth === 0) {
      parts.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(pattern.slice(start));
  return parts;
}

const excluded = config.options.exclude?.path ? new RegExp(config.options.exclude.path) : null;
const files = filesUnder("src").filter((f) => !excluded?.test(f));
const problems: string[] = [];
for (const rule of config.forbidden) {
  for (const [side, part] of [
    ["from", rule.from],
    ["to", rule.to],
  ] as const) {
    const paths = part.path === undefined ? [] : [part.path].flat();
    for (const path of paths) {
      for (const alternative of alternatives(path)) {
        const re = new RegExp(alternative);
        if (!files.some((f) => re.test(f))) {
          problems.push(
            `${rule.name}: ${side}.path ${JSON.stringify(alternative)} matches no file`,
          );
        }
      }
    }
  }
}

if (problems.length > 0) {
  console.error(
    `.dependency-cruiser.cjs has rules that check nothing:\n  ${problems.join("\n  ")}`,
  );
  process.exit(1);
}
console.log(`✔ every path of ${config.forbidden.length} dependency rules matches a file`);
