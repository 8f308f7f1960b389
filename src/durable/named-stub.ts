/**
 * Stubs of Durable Objects addressed by name, with the name's id kept per isolate.
 */

/** Most object ids one isolate keeps per namespace (an id is a few dozen bytes). */
const MAX_CACHED_OBJECT_IDS = 10_000;

const idsByNamespace = new WeakMap<object, Map<string, DurableObjectId>>();

/**
 * The stub of the object named `name` in `ns`. Deriving an id hashes the name, so the id is
 * kept (up to 10,000 per namespace and isolate, then the cache starts over): a busy
 * machine or credential hashes once.
 *
 * @returns a stub; creating it makes no call.
 */
export function namedStub<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  name: string,
): DurableObjectStub<T> {
  let ids = idsByNamespace.get(ns);
  if (!ids) {
    ids = new Map();
    idsByNamespace.set(ns, ids);
  }
  let id = ids.get(name);
  if (id === undefined) {
    if (ids.size >= MAX_CACHED_OBJECT_IDS) ids.clear();
    id = ns.idFromName(name);
    ids.set(name, id);
  }
  return ns.get(id);
}
