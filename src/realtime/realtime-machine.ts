/**
 * The per-machine realtime Durable Object: one object per machine (named
 * `company:machine`), holding the running shift instance's timeline in its
 * SQLite storage. Declared now so that its storage class exists from the first
 * deployment; the realtime endpoints give it its methods.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

export class RealtimeMachine extends DurableObject<Env> {}
