// Files imported as text modules (`[[rules]] type = "Text"` in wrangler.toml, and the
// matching plugin in vitest.config.ts): the default export is the file's text.
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const text: string;
  export default text;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const text: string;
  export default text;
}
// The plant board's bundled browser script (scripts/build-board.ts writes it; the tests' Vite
// plugin makes it in memory).
declare module "*/dist/board.js" {
  const text: string;
  export default text;
}
declare module "*.md" {
  const text: string;
  export default text;
}
