/**
 * The per-credential rate-limit Durable Object: one object per credential,
 * counting in its SQLite storage. Declared now so that its storage class exists
 * from the first deployment; the rate-limit middleware gives it its methods.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class RateLimiter extends DurableObject<Env> {}
