/**
 * The shape the /v1 collections share (SKUs, operators, simple work orders, nominal speeds,
 * production logs): `POST /v1/<things>` (a JSON array of 1 to 1,000, all or none, 200 with
 * what was created), `POST /v1/<things>/filters` (the paged search), and `GET`, `PATCH` (204)
 * and `DELETE` (a soft delete, 204) of `/v1/<things>/{<thing>_id}`, where an id that is
 * deleted, unknown or another company's is a 404. `crudRoutes` writes the five operations:
 * each one's route (`publicRoute`: security, scope `<section>.create|read|update|delete`,
 * idempotency and the error responses), its OpenAPI responses, the company scope and the
 * answer. A collection declares only what is its own: its `routes.ts` its names, texts,
 * schemas and rules (operations of its own where the shared ones do not fit), its
 * `queries.ts` its table (./crud-queries.ts: the row, the search's filters and order).
 */
import { type RouteConfig, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { publicRoute } from "../app-chain/public-route";
import { type AppEnv, scopeOf } from "../app-env";
import type { NamedScope } from "../db/company-scope";
import type { Env } from "../env";
import { notFound } from "../http/errors";
import { isoInstant as iso } from "../http/instants";
import { type createRouter, jsonResponse, NOT_FOUND_RESPONSE } from "../http/openapi";
import {
  type Page,
  type PageRequest,
  pagedResponseSchema,
  pageEnvelope,
  pageRequest,
} from "../http/pagination";
import { arrayBody, IntId, objectBody, UuidId } from "../http/schemas";
import type { SyncFilters } from "../http/sync";
import {
  type CrudTable,
  findRow,
  patchSet,
  searchRows,
  softDeleteRow,
  updateRow,
} from "./crud-queries";

type Router = ReturnType<typeof createRouter>;
type Responses = RouteConfig["responses"];

/** A search body: pull sync's fields and the page. */
type SearchFilters = SyncFilters & { page?: number | null; limit?: number | null };

/** What an operation runs with: the request's company scope and the Worker's bindings. */
interface CrudContext {
  readonly scope: NamedScope;
  readonly env: Env;
}

/** The item path's id: the parameter's name and schema, and the id the queries take. */
interface PathId<Id> {
  readonly name: string;
  readonly schema: z.ZodType;
  /** The validated parameter as the queries take it. */
  of(value: unknown): Id;
}

/** A uuid path id `name` (any case), taken lower case. */
export function uuidPathId(name: string): PathId<string> {
  return { name, schema: UuidId(name), of: (value) => (value as string).toLowerCase() };
}

/** A positive integer path id `name`, with the example the document shows. */
export function intPathId(name: string, example: number): PathId<number> {
  return { name, schema: IntId(name).openapi({ example }), of: (value) => value as number };
}

/** An operation's texts in the document, and its responses beyond the shared ones. */
interface OperationDoc {
  summary: string;
  description: string;
  /** Its own responses (a 409 of its rule, the read barrier's 503). */
  responses?: Responses;
}

/**
 * A collection: what is its own. Types: `Row` as its queries give it, `Out` as the API shows
 * it, `Id` its path id, `Create`, `Patch` and `Filters` its validated bodies.
 */
interface CrudSpec<Row, Out, Id, Create, Patch, Filters extends SearchFilters> {
  /** The scopes' section: `skus` for `skus.create`, `skus.read`, `skus.update`, `skus.delete`. */
  scope: string;
  /** The collection's path (`/v1/skus`). */
  path: string;
  /** The operations' tag. */
  tag: string;
  /**
   * The names in code: `one` and `many` make the operation ids (`createSkus`, `searchSkus`,
   * `getSku`, `updateSku`, `deleteSku`) and the page's component (`SkuPage`); `list` is the
   * page's list (`skus`).
   */
  name: { one: string; many: string; list: string };
  /** The names in prose (`SKU`, `SKUs`), for the texts the shape writes. */
  noun: { one: string; many: string };
  /** The item path's id. */
  id: PathId<Id>;
  /** The 404's `detail` (`SKU not found`). */
  notFound: string;
  schemas: {
    row: z.ZodType<Out>;
    create: z.ZodType<Create>;
    patch: z.ZodType<Patch>;
    filters: z.ZodType<Filters>;
  };
  /**
   * Its table, for the operations it leaves to the shape (`search`, `get`, `update` and
   * `delete` without a `run` of their own).
   */
  table?: CrudTable<Row, Filters>;
  /** A row as the API shows it (`shown` writes the usual one). */
  out(row: Row, scope: NamedScope): Out;
  /** The create: its texts and what it does with the items (all or none). */
  create: OperationDoc & {
    /** The 200's description; default `The created <things>.` */
    created?: string;
    run(ctx: CrudContext, items: Create[]): Promise<Row[]>;
  };
  /** The search; default: the table's (`searchRows`). */
  search: OperationDoc & {
    run?(ctx: CrudContext, filters: Filters, page: PageRequest): Promise<Page<Row>>;
  };
  /** The GET of one; its `run` gives undefined for a 404 (default: the table's `findRow`). */
  get: Omit<OperationDoc, "description"> & {
    /** Default: `A deleted <thing>, or one of another company, is a 404.` */
    description?: string;
    run?(ctx: CrudContext, id: Id): Promise<Row | undefined>;
  };
  /** The PATCH; its `run` returns false for a 404 (default: the fields given, `patchSet`). */
  update: OperationDoc & {
    /** The 204's description; default `Updated.` */
    done?: string;
    run?(ctx: CrudContext, id: Id, patch: Patch): Promise<boolean>;
  };
  /** The DELETE; its `run` returns false for a 404 (default: the soft delete). */
  delete: OperationDoc & {
    /** The 204's description; default `Deleted.` */
    done?: string;
    run?(ctx: CrudContext, id: Id): Promise<boolean>;
  };
}

/** A row's instants (ms since the epoch), as every collection keeps them. */
interface Stamps {
  id: unknown;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

/** A row as {@link shown} gives it: its instants as ISO 8601 text. */
type Shown<R extends Stamps> = Omit<R, "createdAt" | "updatedAt" | "deletedAt"> & {
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
};

/**
 * A row as the API shows it: its fields in order, the instants as ISO 8601 text.
 *
 * @param row a row of the queries (instants in ms since the epoch).
 */
export function shown<R extends Stamps>(row: R): Shown<R> {
  const { createdAt, updatedAt, deletedAt, ...fields } = row;
  return {
    ...fields,
    createdAt: iso(createdAt),
    updatedAt: iso(updatedAt),
    deletedAt: deletedAt === null ? null : iso(deletedAt),
  };
}

/**
 * {@link shown}, with the company `{id, name}` right after the row's id.
 *
 * @param scope the request's company (its name as the credential read it).
 */
export function shownWithCompany<R extends Stamps>(
  row: R,
  scope: NamedScope,
): Shown<R> & { company: { id: number; name: string } } {
  const { id, ...rest } = shown(row);
  return { id, company: { id: scope.companyId, name: scope.companyName }, ...rest } as Shown<R> & {
    company: { id: number; name: string };
  };
}

/** A handler of the shape: the request's context to its answer. */
type Handler = (c: Context<AppEnv>) => Promise<Response>;

/** A part of the request as the route's schemas validated it. */
function valid(c: Context<AppEnv>, part: "json" | "param"): unknown {
  return (c.req as unknown as { valid(target: string): unknown }).valid(part);
}

/** The five operations' functions: the spec's own, or the shared ones on its table. */
function operationsOf<Row, Out, Id, Create, Patch, Filters extends SearchFilters>(
  spec: CrudSpec<Row, Out, Id, Create, Patch, Filters>,
) {
  const { search, get, update, delete: remove } = spec;
  if (!spec.table && !(search.run && get.run && update.run && remove.run)) {
    throw new Error(`crudRoutes(${spec.path}): an operation without a run needs the table`);
  }
  // Present wherever a shared operation runs (checked above).
  const table = spec.table as CrudTable<Row, Filters>;
  type Ids = string | number;
  return {
    search: search.run ?? ((ctx, filters, page) => searchRows(ctx.scope, table, filters, page)),
    get: get.run ?? ((ctx, id) => findRow(ctx.scope, table, id as Ids)),
    update:
      update.run ??
      ((ctx, id, patch) =>
        updateRow(ctx.scope, table, id as Ids, patchSet(table, patch as Record<string, unknown>))),
    delete: remove.run ?? ((ctx, id) => softDeleteRow(ctx.scope, table, id as Ids)),
  };
}

/**
 * The five operations' routes (`publicRoute`), in the document's order: the path, operation
 * id, tag and texts of each, its request and its responses (the shared ones, and the
 * operation's own); every route's keys in the order of the document's other routes.
 */
function routesOf<Row, Out, Id, Create, Patch, Filters extends SearchFilters>(
  spec: CrudSpec<Row, Out, Id, Create, Patch, Filters>,
) {
  const { name, noun, path, schemas, scope } = spec;
  const item = `${path}/{${spec.id.name}}`;
  const params = z.object({ [spec.id.name]: spec.id.schema });
  const head = <M extends "get" | "post" | "patch" | "delete">(
    method: M,
    at: string,
    operationId: string,
    doc: { summary: string; description?: string },
  ) => ({
    method,
    path: at,
    operationId,
    tags: [spec.tag],
    summary: doc.summary,
    description: doc.description,
  });
  return {
    create: publicRoute(`${scope}.create`, {
      ...head("post", path, `create${name.many}`, spec.create),
      request: { body: arrayBody(schemas.create) },
      responses: {
        200: jsonResponse(z.array(schemas.row), spec.create.created ?? `The created ${noun.many}.`),
        ...spec.create.responses,
      },
    }),
    search: publicRoute(`${scope}.read`, {
      ...head("post", `${path}/filters`, `search${name.many}`, spec.search),
      request: {
        body: {
          required: false,
          content: { "application/json": { schema: schemas.filters, example: {} } },
        },
      },
      responses: {
        200: jsonResponse(
          pagedResponseSchema(name.list, schemas.row, `${name.one}Page`),
          `One page of ${noun.many}.`,
        ),
        ...spec.search.responses,
      },
    }),
    get: publicRoute(`${scope}.read`, {
      ...head("get", item, `get${name.one}`, {
        summary: spec.get.summary,
        description:
          spec.get.description ?? `A deleted ${noun.one}, or one of another company, is a 404.`,
      }),
      request: { params },
      responses: {
        200: jsonResponse(schemas.row, `The ${noun.one}.`),
        ...NOT_FOUND_RESPONSE,
        ...spec.get.responses,
      },
    }),
    update: publicRoute(`${scope}.update`, {
      ...head("patch", item, `update${name.one}`, spec.update),
      request: { params, body: objectBody(schemas.patch) },
      responses: {
        204: { description: spec.update.done ?? "Updated." },
        ...NOT_FOUND_RESPONSE,
        ...spec.update.responses,
      },
    }),
    delete: publicRoute(`${scope}.delete`, {
      ...head("delete", item, `delete${name.one}`, spec.delete),
      request: { params },
      responses: {
        204: { description: spec.delete.done ?? "Deleted." },
        ...NOT_FOUND_RESPONSE,
        ...spec.delete.responses,
      },
    }),
  };
}

/**
 * Registers the five operations of a collection on `router`, in the document's order:
 * create, search, get, update, delete. Each answers as the shape says: the created rows
 * (200), the page envelope (`pageEnvelope`: totals and the list under `name.list`), the row,
 * or 204; an operation that finds no row is the 404 `spec.notFound`.
 *
 * @param router the resource's router (its `routes.ts` makes it).
 * @param spec what the collection declares.
 * @returns the router.
 * @throws Error at start-up when an operation has no `run` and the spec no `table`.
 */
export function crudRoutes<Row, Out, Id, Create, Patch, Filters extends SearchFilters>(
  router: Router,
  spec: CrudSpec<Row, Out, Id, Create, Patch, Filters>,
): Router {
  const routes = routesOf(spec);
  const run = operationsOf(spec);
  const context = (c: Context<AppEnv>): CrudContext => ({ scope: scopeOf(c), env: c.env });
  const idOf = (c: Context<AppEnv>) =>
    spec.id.of((valid(c, "param") as Record<string, unknown>)[spec.id.name]);
  const out = (scope: NamedScope) => (row: Row) => spec.out(row, scope);
  // `never`: the typed handlers of @hono/zod-openapi cannot see through the spec's types;
  // what the handlers read is what the routes' schemas validated.
  const on = (route: (typeof routes)[keyof typeof routes], handler: Handler) =>
    router.openapi(route, handler as never);
  on(routes.create, async (c) => {
    const ctx = context(c);
    const rows = await spec.create.run(ctx, valid(c, "json") as Create[]);
    return c.json(rows.map(out(ctx.scope)), 200);
  });
  on(routes.search, async (c) => {
    const ctx = context(c);
    const filters = (valid(c, "json") ?? {}) as Filters;
    const page = await run.search(ctx, filters, pageRequest(filters));
    return c.json(pageEnvelope(spec.name.list, page, out(ctx.scope)), 200);
  });
  on(routes.get, async (c) => {
    const ctx = context(c);
    const row = await run.get(ctx, idOf(c));
    if (!row) throw notFound(spec.notFound);
    return c.json(out(ctx.scope)(row), 200);
  });
  on(routes.update, async (c) => {
    if (!(await run.update(context(c), idOf(c), valid(c, "json") as Patch))) {
      throw notFound(spec.notFound);
    }
    return c.body(null, 204);
  });
  on(routes.delete, async (c) => {
    if (!(await run.delete(context(c), idOf(c)))) throw notFound(spec.notFound);
    return c.body(null, 204);
  });
  return router;
}
