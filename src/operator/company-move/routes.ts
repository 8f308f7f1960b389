/**
 * The operator's move command: `POST /operator/v1/companies/{company_id}/move` with
 * `{ "shard": "SHARD_1" }` moves the company's rows to that shard (./move.ts) and answers what
 * it did once the company reads and writes there (docs/scaling.md, "Moving a company to
 * another shard").
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "../../http/errors";
import { createRouter, jsonResponse } from "../../http/openapi";
import { objectBody } from "../../http/schemas";
import { companyRoute } from "../schemas";
import { MoveError, moveCompany } from "./move";
import { moveDeps } from "./queries";

const MoveRequest = z
  .object({
    shard: z.string().min(1).max(64).openapi({
      description: "The shard to move the company to: a shard binding's name.",
      example: "SHARD_1",
    }),
  })
  .strict()
  .openapi("CompanyMove");

const Counts = z.record(z.string(), z.number().int());

const MoveReportSchema = z
  .object({
    companyId: z.number().int(),
    from: z.string().openapi({ description: "The shard the company was on.", example: "SHARD_0" }),
    to: z.string().openapi({ description: "The shard it is on now.", example: "SHARD_1" }),
    copied: Counts.openapi({ description: "Rows copied in the bulk copy, by table." }),
    changesApplied: z.number().int().openapi({
      description: "Rows changed during the copy, applied after it (catch-up and switch).",
    }),
    rows: Counts.openapi({ description: "The company's rows on the new shard, by table." }),
    switchMs: z.number().int().openapi({
      description: "How long the company's requests waited during the switch, ms.",
    }),
    statements: z.number().int().openapi({
      description:
        "D1 statements the move sent to the two shards (a Worker invocation may send 1,000).",
    }),
  })
  .openapi("CompanyMoveReport");

export const operatorCompanyMoveRoutes = createRouter().openapi(
  companyRoute({
    method: "post",
    path: "/companies/{company_id}/move",
    tags: ["Companies"],
    summary: "Move a company to another shard",
    description:
      "Copies the company's rows to the shard named, catches up with what it writes meanwhile, " +
      "switches it there and removes its rows from the old shard: no acknowledged write is " +
      "lost. During the switch (a few seconds) the company's requests wait, then go on on the " +
      "new shard; a write that still reaches the old shard is refused whole with 503 and " +
      "`Retry-After: 1`. Answers once the company is on the new shard (docs/scaling.md).",
    request: {
      body: objectBody(MoveRequest),
    },
    responses: {
      200: jsonResponse(MoveReportSchema, "The company is on the new shard."),
      404: jsonResponse(z.object({ detail: z.string() }), "No such company."),
      409: jsonResponse(z.object({ detail: z.string() }), "The company is on that shard already."),
    },
  }),
  async (c) => {
    const { company_id } = c.req.valid("param");
    const { shard } = c.req.valid("json");
    try {
      return c.json(await moveCompany(moveDeps(c.env), company_id, shard), 200);
    } catch (error) {
      if (error instanceof MoveError) {
        if (error.status === 422) {
          throw new ApiError(422, [
            // A shard this deployment lacks: the same type as a company created on one.
            { loc: ["body", "shard"], msg: error.message, type: "value_error.shard" },
          ]);
        }
        throw new ApiError(error.status, error.message);
      }
      throw error;
    }
  },
);
