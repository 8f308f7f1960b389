/**
 * One export file written to R2 as it is produced: its bytes go up in parts of
 * `PART_BYTES` (an R2 multipart upload: every part but the last of the same size, at least
 * 5 MiB), so that the writer holds at most one part and a batch, whatever the file's size.
 * A file smaller than one part is written with one `put`.
 */
import { concatBytes } from "../parquet/bytes";

/** The size of every part but the last, bytes (R2's minimum is 5 MiB). */
export const PART_BYTES = 5 * 1024 * 1024;

/** A file being written to R2, part by part. */
export class R2FileWriter {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private upload: R2MultipartUpload | null = null;
  private readonly parts: R2UploadedPart[] = [];
  /** Bytes pushed so far (the file's size once closed). */
  bytes = 0;
  /** Most bytes held at once (the measure of the writer's memory, docs/exports.md). */
  peakBuffered = 0;

  /**
   * @param bucket the bucket (`HISTORY`).
   * @param key the object's key.
   * @param contentType the object's media type, served with it.
   * @param onUpload called with the multipart upload's id when one starts, so that a writer
   *   cut short (a restart) can be aborted by whoever takes over.
   * @param partBytes the size of every part but the last, bytes (at least R2's 5 MiB).
   */
  constructor(
    private readonly bucket: R2Bucket,
    readonly key: string,
    private readonly contentType: string,
    private readonly onUpload: (uploadId: string) => void = () => undefined,
    private readonly partBytes = PART_BYTES,
  ) {}

  /** Appends bytes; uploads every full part they complete. */
  async push(bytes: Uint8Array): Promise<void> {
    if (bytes.length === 0) return;
    this.chunks.push(bytes);
    this.buffered += bytes.length;
    this.bytes += bytes.length;
    this.peakBuffered = Math.max(this.peakBuffered, this.buffered);
    while (this.buffered >= this.partBytes) await this.uploadPart(this.take(this.partBytes));
  }

  /** The first `n` buffered bytes, removed from the buffer. */
  private take(n: number): Uint8Array {
    const all = concatBytes(this.chunks, this.buffered);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return all.subarray(0, n);
  }

  private async uploadPart(part: Uint8Array): Promise<void> {
    if (this.upload === null) {
      this.upload = await this.bucket.createMultipartUpload(this.key, {
        httpMetadata: { contentType: this.contentType },
      });
      this.onUpload(this.upload.uploadId);
    }
    this.parts.push(await this.upload.uploadPart(this.parts.length + 1, part));
  }

  /**
   * Writes what is left and makes the object visible.
   *
   * @returns the file's size, bytes.
   */
  async close(): Promise<number> {
    const rest = this.take(this.buffered);
    if (this.upload === null) {
      await this.bucket.put(this.key, rest, { httpMetadata: { contentType: this.contentType } });
    } else {
      if (rest.length > 0) await this.uploadPart(rest);
      await this.upload.complete(this.parts);
    }
    return this.bytes;
  }

  /** Drops what was uploaded (the file is started again elsewhere). */
  async abort(): Promise<void> {
    this.chunks = [];
    this.buffered = 0;
    await this.upload?.abort();
  }
}
