/**
 * Direct URLs of export files: presigned GET URLs of R2's S3 API (AWS Signature Version 4
 * in the query string, signed with `aws4fetch`), so that a large file downloads straight
 * from object storage, without a credential and without passing through the Worker. Set up
 * as docs/exports.md ("Direct URLs") says; without that configuration files are downloaded
 * through the API only.
 */
import { AwsClient } from "aws4fetch";
import type { ExportUrlSettings } from "../env";
import { SECOND_MS } from "../time/units";

/** The signing identity: an S3 API access key, its secret, and the region (R2: `auto`). */
interface SigningKey {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/**
 * A presigned GET URL of an object.
 *
 * @param key the signing identity.
 * @param objectUrl the object's S3 URL (`https://<account>.r2.cloudflarestorage.com/<bucket>/<key>`).
 * @param seconds how long the URL works (1 to 604,800).
 * @param now the signing instant, ms (the URL works from then on for `seconds`).
 * @returns the URL with `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`,
 *   `X-Amz-SignedHeaders` and `X-Amz-Signature`.
 */
export async function presignGet(
  key: SigningKey,
  objectUrl: string,
  seconds: number,
  now: number,
): Promise<string> {
  const client = new AwsClient({
    accessKeyId: key.accessKeyId,
    secretAccessKey: key.secretAccessKey,
    service: "s3",
    region: key.region,
  });
  const url = new URL(objectUrl);
  url.searchParams.set("X-Amz-Expires", String(seconds));
  const datetime = new Date(now).toISOString().replace(/[:-]|\.\d{3}/g, "");
  const signed = await client.sign(new Request(url, { method: "GET" }), {
    aws: { signQuery: true, datetime },
  });
  return signed.url;
}

/** The S3 URL of an object of the configured bucket (path style, each key segment encoded). */
export function r2ObjectUrl(accountId: string, bucket: string, objectKey: string): string {
  const path = objectKey.split("/").map(encodeURIComponent).join("/");
  return `https://${accountId}.r2.cloudflarestorage.com/${encodeURIComponent(bucket)}/${path}`;
}

/**
 * The direct URL of an export file and when it stops working, when the deployment is
 * configured for direct URLs; null otherwise.
 */
export async function directUrl(
  settings: ExportUrlSettings,
  objectKey: string,
  now: number,
): Promise<{ url: string; expiresAt: number } | null> {
  const { accountId, bucket, accessKeyId, secretAccessKey, seconds } = settings;
  if (!accountId || !bucket || !accessKeyId || !secretAccessKey) return null;
  const url = await presignGet(
    { accessKeyId, secretAccessKey, region: "auto" },
    r2ObjectUrl(accountId, bucket, objectKey),
    seconds,
    now,
  );
  return { url, expiresAt: now + seconds * SECOND_MS };
}
