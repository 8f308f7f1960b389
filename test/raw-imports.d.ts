// Vite's `?raw` imports: the file's text.
declare module "*.md?raw" {
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
