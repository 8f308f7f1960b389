/**
 * The board's DOM helpers: elements built from attributes and children (strings become text
 * nodes, never HTML) and the page's fixed elements by id.
 */

/** A child of {@link el}: a node, a text, or nothing. */
type Child = Node | string | null | undefined;

/**
 * Attributes of {@link el}: `null`, `undefined` and `false` ones are left out, `true` is the
 * attribute present and empty (`required`, `hidden`), anything else its text.
 */
type Attributes = Record<string, string | number | boolean | null | undefined>;

/** An element with attributes and children (strings become text nodes: never HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** A figure that never breaks across lines: `<span class="fig">text</span>`. */
export function fig(text: string): HTMLSpanElement {
  return el("span", { class: "fig" }, text);
}

/**
 * An element of the page (src/board/board-page.ts writes them all).
 *
 * @param type the element's class when the caller needs more than an HTMLElement
 *   (`HTMLInputElement` for the key field); checked.
 * @throws Error when the page has no such element (a page and a script out of step).
 */
export function byId<T extends HTMLElement = HTMLElement>(
  id: string,
  type: abstract new () => T = HTMLElement as unknown as abstract new () => T,
): T {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`The board page has no #${id} of that kind`);
  return node;
}
