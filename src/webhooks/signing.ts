/**
 * The `X-Service-Signature` header of docs/webhooks.md: `sha256=<lowercase hex
 * of HMAC-SHA256(key, raw body)>`, the form of GitHub's `X-Hub-Signature-256`,
 * with the whole secret string (UTF-8) as the key; during the 24 h after a
 * rotation, two signatures separated by a comma, new first.
 */

const encoder = new TextEncoder();

/** The company's signing secrets as stored (`companies` row). */
interface SigningSecrets {
  webhookSecret: string;
  previousWebhookSecret: string | null;
  /** ms since the epoch; the previous secret signs until then. */
  previousWebhookSecretExpiresAt: number | null;
}

function toHex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * One signature of a body.
 *
 * @param secret the whole secret string (`whsec_...`), used as UTF-8 key bytes.
 * @param body the exact body sent.
 * @returns `sha256=<64 lowercase hex digits>`.
 */
async function signBody(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return `sha256=${toHex(await crypto.subtle.sign("HMAC", key, encoder.encode(body)))}`;
}

/**
 * The value of `X-Service-Signature` for a body at instant `now`.
 *
 * @param secrets the company's current and previous secrets.
 * @param body the exact body sent.
 * @param now ms since the epoch.
 * @returns `sha256=<new>` or, while the previous secret has not expired,
 *   `sha256=<new>,sha256=<old>`.
 */
export async function signatureHeader(
  secrets: SigningSecrets,
  body: string,
  now: number,
): Promise<string> {
  const current = await signBody(secrets.webhookSecret, body);
  const { previousWebhookSecret: previous, previousWebhookSecretExpiresAt: expiresAt } = secrets;
  if (previous === null || expiresAt === null || expiresAt <= now) return current;
  return `${current},${await signBody(previous, body)}`;
}
