/**
 * Worker entry: the HTTP app and the Durable Object classes.
 */
import { createApp } from "./app";
import type { Env } from "./env";

export { RateLimiter } from "./rate-limit/rate-limiter";
export { RealtimeMachine } from "./realtime/realtime-machine";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
