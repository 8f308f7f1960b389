// Vite's `?raw` imports: the file's text.
declare module "*.md?raw" {
  const content: string;
  export default content;
}
declare module "*.toml?raw" {
  const content: string;
  export default content;
}

declare module "*.ts?raw" {
  const content: string;
  export default content;
}

declare module "*.http?raw" {
  const content: string;
  export default content;
}

declare module "*.csv?raw" {
  const content: string;
  export default content;
}

// Vite's `import.meta.glob` (the subset the tests use): files by path, eagerly imported.
interface ImportMeta {
  glob<T>(
    pattern: string,
    options: { query?: string; import?: string; eager: true },
  ): Record<string, T>;
}

// A code block of a document (`markdownSnippets` in vitest.config.ts).
declare module "*webhooks.md?snippet=verify-node" {
  export function verifySignature(
    secrets: readonly string[],
    rawBody: Uint8Array | string,
    header: string | null | undefined,
  ): Promise<boolean>;
}

declare module "*.json?raw" {
  const content: string;
  export default content;
}
