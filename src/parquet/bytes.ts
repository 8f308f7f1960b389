/**
 * Byte arrays joined: the one copy of the loop that the Parquet pages (zstd frames) and the
 * export files (R2 parts) both use.
 */

/**
 * Concatenates byte arrays into a new, unshared `Uint8Array`.
 *
 * @param parts the arrays, in order.
 * @param length their total length in bytes, when the caller keeps it (else summed here).
 * @returns the bytes of `parts` one after another.
 */
export function concatBytes(
  parts: readonly Uint8Array[],
  length = parts.reduce((sum, p) => sum + p.length, 0),
): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
