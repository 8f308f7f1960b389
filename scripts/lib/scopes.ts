/**
 * The scopes a demo key can carry, for the seed and the operator CLI.
 *
 * The list itself is the Worker's (`src/auth/scopes.ts`: every section of the public
 * API with read, create, update and delete, plus `realtime.read` and `realtime.write`),
 * so that the scripts can never issue a scope the Worker does not know.
 */
import { ALL_SCOPES } from "../../src/auth/scopes";

export { ALL_SCOPES };

/** Only the `.read` scopes, for a read-only key. */
export const READ_SCOPES: readonly string[] = ALL_SCOPES.filter((scope) => scope.endsWith(".read"));
