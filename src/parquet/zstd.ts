/**
 * ZSTD for Parquet pages, from the runtime's own zstd (`node:zlib` under `nodejs_compat`):
 * nothing compiled to WebAssembly in the bundle. Why this codec and this library:
 * docs/signal-storage.md, "Which Parquet writer".
 */
import { constants, zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { concatBytes } from "./bytes";

/**
 * Most bytes one zstd frame is given. workerd's zstd (1.20260426 and Cloudflare's at the time
 * of writing, workerd issue 6769) throws "Unexpected end of file" when an incompressible input
 * reaches 40,960 bytes; a longer page is compressed as several frames one after the other,
 * which the zstd format allows (RFC 8878, section 3) and DuckDB, Arrow, parquet-java and
 * hyparquet's own decompressor decode as one. Writers keep pages to this size
 * (`PARQUET_PAGE_BYTES`), so a page is one frame unless one value is longer.
 */
export const ZSTD_FRAME_BYTES = 32_768;

/** hyparquet-writer's `pageSize` (uncompressed bytes a page) that keeps a page one frame. */
export const PARQUET_PAGE_BYTES = ZSTD_FRAME_BYTES;

/**
 * The compression level. Measured on the demo's series (docs/signal-storage.md): 12 stores
 * the full-precision floats of Fleet B 0.2 bytes a sample smaller than the default 3, at
 * about 0.6 times its speed.
 */
const ZSTD_LEVEL = 12;

const params = { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL };

/**
 * Compresses one Parquet page (hyparquet-writer's `compressors.ZSTD`).
 *
 * @param input the page's bytes.
 * @returns zstd frames, one per `ZSTD_FRAME_BYTES` of input.
 */
export function zstdCompress(input: Uint8Array): Uint8Array {
  if (input.length <= ZSTD_FRAME_BYTES) return bytes(zstdCompressSync(input, { params }));
  const frames: Uint8Array[] = [];
  for (let at = 0; at < input.length; at += ZSTD_FRAME_BYTES) {
    frames.push(bytes(zstdCompressSync(input.subarray(at, at + ZSTD_FRAME_BYTES), { params })));
  }
  return concatBytes(frames);
}

/**
 * Compresses a BYTE_STREAM_SPLIT page of `width`-byte values (hyparquet-writer's
 * `compressors.ZSTD` for a file whose ZSTD pages are all such pages) with each of its
 * `width` byte streams in a frame of its own. zstd codes a block's literals with one Huffman
 * table; a page of full-precision floats holds six streams of random mantissa bytes beside
 * the sign, exponent and top mantissa bits, which need a few bits a byte, and with one table
 * they cost nearly eight. Measured on the demo's Fleet B (docs/signal-storage.md): 7.0-7.1
 * bytes a sample in one frame, 6.6 in eight.
 *
 * @param width the value's size in bytes (8 for DOUBLE).
 * @throws Error when the page is not a whole number of values.
 */
export function zstdCompressByteStreams(width: number): (input: Uint8Array) => Uint8Array {
  return (input) => {
    if (input.length % width !== 0) {
      throw new Error(`a page of ${input.length} bytes is not made of ${width}-byte values`);
    }
    const n = input.length / width;
    const frames: Uint8Array[] = [];
    for (let k = 0; k < width; k++) frames.push(zstdCompress(input.subarray(k * n, (k + 1) * n)));
    return concatBytes(frames);
  };
}

/**
 * Decompresses one Parquet page (hyparquet's `compressors.ZSTD`), frame by frame: workerd's
 * `zstdDecompressSync` stops after the first frame.
 *
 * @param input one or more zstd frames (skippable frames are skipped).
 * @param outputLength the page's uncompressed size, from its header.
 * @throws Error when the frames are corrupt or decode to another length.
 */
export function zstdDecompress(input: Uint8Array, outputLength: number): Uint8Array {
  const out = new Uint8Array(outputLength);
  let written = 0;
  for (let at = 0; at < input.length; ) {
    const end = frameEnd(input, at);
    if ((readU32(input, at) & 0xfffffff0) !== SKIPPABLE_MAGIC) {
      const part = zstdDecompressSync(input.subarray(at, end), {
        maxOutputLength: Math.max(outputLength - written, 1),
      });
      if (written + part.length > outputLength) break;
      out.set(part, written);
      written += part.length;
    }
    at = end;
  }
  if (written !== outputLength) {
    throw new Error(
      `zstd page decoded to ${written} bytes or more, its header says ${outputLength}`,
    );
  }
  return out;
}

const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC = 0x184d2a50;

const readU32 = (b: Uint8Array, at: number): number =>
  ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>>
  0;

/**
 * Where the zstd frame starting at `at` ends (RFC 8878, 3.1.1: the frame header, its blocks
 * up to the one marked last, and the optional checksum).
 *
 * @throws Error when `at` starts no frame or the frame runs past the input.
 */
function frameEnd(b: Uint8Array, at: number): number {
  const magic = readU32(b, at);
  if ((magic & 0xfffffff0) === SKIPPABLE_MAGIC) return at + 8 + readU32(b, at + 4);
  if (magic !== FRAME_MAGIC) throw new Error(`no zstd frame at byte ${at}`);
  const descriptor = b[at + 4] ?? 0;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const checksum = (descriptor >> 2) & 1;
  const dictIdBytes = [0, 1, 2, 4][descriptor & 3] ?? 0;
  const fcsBytes = [singleSegment, 2, 4, 8][fcsFlag] ?? 0;
  let pos = at + 5 + (singleSegment ? 0 : 1) + dictIdBytes + fcsBytes;
  for (;;) {
    const header = (b[pos] ?? 0) | ((b[pos + 1] ?? 0) << 8) | ((b[pos + 2] ?? 0) << 16);
    const last = header & 1;
    const type = (header >> 1) & 3;
    const size = header >>> 3;
    pos += 3 + (type === 1 ? 1 : size); // an RLE block holds one byte, repeated `size` times
    if (pos > b.length) throw new Error(`zstd frame at byte ${at} runs past the page`);
    if (last) break;
  }
  return pos + (checksum ? 4 : 0);
}

/** A plain Uint8Array over a Buffer's bytes (the runtime's zlib answers Buffers). */
const bytes = (b: Uint8Array): Uint8Array =>
  Object.getPrototypeOf(b) === Uint8Array.prototype
    ? b
    : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
