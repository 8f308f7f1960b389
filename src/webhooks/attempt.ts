/**
 * One delivery attempt: the endpoint rules (src/webhooks/url-safety.ts), then
 * one signed POST, both within one time limit (10 s by default), redirects not
 * followed. Only the status and `Retry-After` of the answer are read.
 */
import { parseRetryAfter, type Verdict, verdictOf } from "./retry-policy";
import { signatureHeader } from "./signing";
import { checkEndpoint, type UrlSafetyOptions } from "./url-safety";

/** The error recorded for an attempt refused by the endpoint rules. */
const UNSAFE_DESTINATION = "unsafe destination";

/** What an attempt needs to know about its delivery. */
export interface AttemptTarget {
  url: string;
  eventId: string;
  eventType: string;
  /** The envelope, exactly the bytes signed and sent. */
  body: string;
  /** ms since the epoch. */
  eventTimestamp: number;
  webhookSecret: string;
  previousWebhookSecret: string | null;
  previousWebhookSecretExpiresAt: number | null;
}

/** The outcome of one attempt. */
export interface AttemptResult {
  verdict: Verdict;
  statusCode: number | null;
  error: string | null;
  /** `Retry-After` of the response, seconds, when given. */
  retryAfterSeconds: number | null;
}

/**
 * Makes one attempt. Never throws: a time-out, a network error or a refused
 * destination is a result.
 *
 * @param requestId the attempt's `X-Service-Request-Id`.
 * @param timeoutMs time limit of the whole attempt (DNS check included), ms.
 */
export async function attemptDelivery(
  target: AttemptTarget,
  requestId: string,
  urlOptions: UrlSafetyOptions,
  timeoutMs: number,
): Promise<AttemptResult> {
  const signal = AbortSignal.timeout(timeoutMs);
  const none = { statusCode: null, retryAfterSeconds: null };
  try {
    const check = await checkEndpoint(target.url, urlOptions, signal);
    if (check.kind === "refused") return { ...none, verdict: "failed", error: UNSAFE_DESTINATION };
    if (check.kind === "unresolved") return { ...none, verdict: "retryable", error: check.message };
    const response = await fetch(target.url, {
      method: "POST",
      redirect: "manual",
      signal,
      body: target.body,
      headers: {
        "Content-Type": "application/json",
        "X-Service-Signature": await signatureHeader(target, target.body, Date.now()),
        "X-Service-Event-Type": target.eventType,
        "X-Service-Event-Id": target.eventId,
        "X-Service-Timestamp": new Date(target.eventTimestamp).toISOString(),
        "X-Service-Request-Id": requestId,
      },
    });
    // Only the status is read; the body is dropped so the connection is freed.
    await response.body?.cancel().catch(() => undefined);
    return {
      verdict: verdictOf(response.status),
      statusCode: response.status,
      error: response.status >= 300 && response.status < 400 ? "redirect not followed" : null,
      retryAfterSeconds: parseRetryAfter(response.headers.get("retry-after"), Date.now()),
    };
  } catch (error) {
    const timedOut = signal.aborted || (error instanceof Error && error.name === "TimeoutError");
    const message = error instanceof Error ? error.message : String(error);
    return {
      ...none,
      verdict: "retryable",
      error: timedOut ? "timeout" : `network error: ${message}`,
    };
  }
}
