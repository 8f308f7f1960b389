/**
 * What every benchmark reads first: the project root and its numeric settings from the
 * environment (ports, durations, sizes), in one place.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project root (`bench/lib/../..`): where wrangler.toml and package.json are. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * A benchmark setting from the environment variable `name`, or `fallback` when it is unset.
 *
 * @param options.positive when true, 0 is refused too (a rate, a duration).
 * @returns the number.
 * @throws Error naming the variable when it is set to something that is not a finite number
 *   >= 0 (> 0 with `positive`): a typo must not run a benchmark with NaN.
 */
export function envNumber(
  name: string,
  fallback: number,
  options: { positive?: boolean } = {},
): number {
  const value = Number(process.env[name] ?? fallback);
  const low = options.positive === true ? value <= 0 : value < 0;
  if (!Number.isFinite(value) || low) {
    throw new Error(`${name} must be a number ${options.positive === true ? ">" : ">="} 0`);
  }
  return value;
}
