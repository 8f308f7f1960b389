// Vite's `?raw` imports: the file's text.
declare module "*.md?raw" {
  const content: string;
  export default content;
}
declare module "*.toml?raw" {
  const content: string;
  export default content;
}
