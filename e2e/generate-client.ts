/**
 * The generated types of the typed clients, written by openapi-typescript from the Worker's
 * own documents (each kept next to its types):
 *
 * - the public API (`/openapi.json`): `clients/typescript/src/generated/api.d.ts`, the types
 *   of the partners' client (clients/typescript/), which this suite uses too;
 * - the operator API (`/operator/v1/openapi.json`): `scripts/lib/generated/operator-api.d.ts`,
 *   the types of the scripts' operator client.
 *
 * `npm run client:generate` (also `npm run e2e:client`) writes them; `npm run e2e` fails
 * when they differ from what the running Worker serves, and `npm test` when a committed
 * document does (test/clients/generated-documents.test.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import { PROJECT_ROOT } from "./stack";

/** One generated client: the document's URL path and where it and its types are kept. */
export interface GeneratedClient {
  /** Path of the document on the Worker, for example `/openapi.json`. */
  documentUrlPath: string;
  /** Where the document is kept (absolute). */
  documentPath: string;
  /** Where its types are kept (absolute). */
  typesPath: string;
}

const PUBLIC_DIR = join(PROJECT_ROOT, "clients", "typescript", "src", "generated");
const OPERATOR_DIR = join(PROJECT_ROOT, "scripts", "lib", "generated");

/** Every generated client: the public API's, then the operator API's. */
export const GENERATED_CLIENTS: readonly GeneratedClient[] = [
  {
    documentUrlPath: "/openapi.json",
    documentPath: join(PUBLIC_DIR, "openapi.json"),
    typesPath: join(PUBLIC_DIR, "api.d.ts"),
  },
  {
    documentUrlPath: "/operator/v1/openapi.json",
    documentPath: join(OPERATOR_DIR, "operator-openapi.json"),
    typesPath: join(OPERATOR_DIR, "operator-api.d.ts"),
  },
];

/**
 * Serializes the document the way it is committed: 2-space JSON with a final newline.
 *
 * @param document the parsed `/openapi.json`.
 */
export function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * Generates the TypeScript types of a document with openapi-typescript.
 *
 * `defaultNonNullable: false`: a request field with a `default` (`page`, `limit`,
 * `archived`, ...) stays optional, as the API accepts it; the generator's default would
 * make callers send it.
 *
 * @param document the parsed `/openapi.json`.
 * @returns the text of `api.d.ts`.
 */
export async function generateTypes(document: OpenAPI3): Promise<string> {
  // openapi-typescript keeps state between runs (its enum cache): give it a copy.
  const ast = await openapiTS(structuredClone(document), {
    defaultNonNullable: false,
    silent: true,
  });
  return COMMENT_HEADER + astToString(ast);
}

/**
 * Reads a committed generated file.
 *
 * @returns its text, or undefined when it does not exist.
 */
export function readCommitted(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}
