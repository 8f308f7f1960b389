/// <reference types="vite/client" />
/**
 * The repository stands alone: every document a code comment cites exists in `docs/`,
 * every relative link of the README and of `docs/` leads to a file of the repository, and
 * no file points outside the repository. The files are read at build time by Vite
 * (`import.meta.glob`), since the tests run inside workerd, without a file system.
 */
import { describe, expect, it } from "vitest";

const read = (files: Record<string, unknown>): Map<string, string> =>
  new Map(Object.entries(files).map(([path, text]) => [path.replace(/^\.\.\//, ""), String(text)]));

const code = read(
  import.meta.glob(
    [
      "../src/**/*.ts",
      "../scripts/**/*.ts",
      "../bench/**/*.{ts,md}",
      "../test/**/*.ts",
      "../e2e/*.ts",
      "../wrangler.toml",
      "../package.json",
    ],
    { query: "?raw", import: "default", eager: true },
  ),
);
const documents = read(
  import.meta.glob(["../README.md", "../docs/*.md", "../data/README.md"], {
    query: "?raw",
    import: "default",
    eager: true,
  }),
);
/** Every file a link may point at (names only; their content is not loaded). */
const existing = new Set(
  Object.keys(
    import.meta.glob(["../**/*", "!../**/node_modules/**", "!../**/.wrangler/**"], {
      query: "?url",
      import: "default",
    }),
  ).map((path) => path.replace(/^\.\.\//, "")),
);

/** `a/b/../c` -> `a/c`. */
function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return out.join("/");
}

describe("the repository stands alone", () => {
  it("loads the files it checks", () => {
    expect(code.has("src/reports/oee.ts")).toBe(true);
    expect(documents.has("docs/metrics.md")).toBe(true);
    expect(existing.has("docs/webhooks.md")).toBe(true);
  });

  it("has every docs/*.md that a code comment cites", () => {
    const missing: string[] = [];
    for (const [file, text] of code) {
      for (const [cited] of text.matchAll(/docs\/[\w-]+\.md/g)) {
        if (!documents.has(cited)) missing.push(`${file}: ${cited}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("links only to files that exist, from the README and docs/", () => {
    const broken: string[] = [];
    for (const [file, text] of documents) {
      const folder = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (match[1] ?? "").split("#")[0] ?? "";
        if (target === "" || /^[a-z]+:/i.test(target) || target.startsWith("/")) continue;
        const path = normalize(folder === "" ? target : `${folder}/${target}`);
        if (!existing.has(path) && ![...existing].some((f) => f.startsWith(`${path}/`))) {
          broken.push(`${file}: ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("never points outside the repository", () => {
    // Built from parts, so that this file does not match itself.
    const outside = ["../", "shared"].join("");
    const found = [...code, ...documents]
      .filter(([, text]) => text.includes(outside))
      .map(([file]) => file);
    expect(found).toEqual([]);
  });
});
