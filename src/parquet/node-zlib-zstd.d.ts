/**
 * The zstd functions of `node:zlib` that workerd offers with `nodejs_compat` (and Node from
 * 22.15): the project's `@types/node` is Node 20's, which has none of them.
 */
declare module "node:zlib" {
  interface ZstdOptions {
    /** zstd parameters by `constants.ZSTD_c_*` key. */
    params?: Record<number, number>;
    maxOutputLength?: number;
  }
  export function zstdCompressSync(input: ArrayBufferView, options?: ZstdOptions): Uint8Array;
  export function zstdDecompressSync(input: ArrayBufferView, options?: ZstdOptions): Uint8Array;
  namespace constants {
    const ZSTD_c_compressionLevel: number;
  }
}
