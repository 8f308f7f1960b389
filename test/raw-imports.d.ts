// Vite's `?raw` imports: the file's text.
declare module "*.md?raw" {
  const content: string;
  export default content;
}
declare module "*.toml?raw" {
  const content: string;
  export default content;
}
// A code block of a document (`markdownSnippets` in vitest.config.ts).
declare module "*webhooks.md?snippet=verify-node" {
  export function verifySignature(
    secrets: readonly string[],
    rawBody: Uint8Array | string,
    header: string | null | undefined,
  ): Promise<boolean>;
}
