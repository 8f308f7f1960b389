/**
 * The base URL a script talks to, from its sources in order (pure; the sources are read by
 * ./local-server.ts).
 */

/** Where a script's base URL comes from, in order (see {@link chooseBaseUrl}). */
export interface BaseUrlSources {
  /** `--url` on the command line. */
  explicit?: string | undefined;
  /** `$PM_URL`. */
  env?: string | undefined;
  /** The URL a running `npm start` recorded. */
  running?: string | undefined;
  /**
   * Take the running server before `$PM_URL`: for `demo-env`, whose job is to set `PM_URL`
   * to the server now running (a shell may still hold the one of an earlier start).
   */
  preferRunning?: boolean;
  /** When none of the above is set: the default of `wrangler dev`, `http://127.0.0.1:8787`. */
  fallback: string;
}

/**
 * Chooses the base URL: `--url`, then `$PM_URL`, then the server `npm start` runs (the two
 * swapped with `preferRunning`), then `fallback`. Empty values count as unset.
 *
 * @returns the origin without a trailing slash.
 */
export function chooseBaseUrl(sources: BaseUrlSources): string {
  const set = (value: string | undefined) => (value ? value : undefined);
  const [first, second] = sources.preferRunning
    ? [sources.running, sources.env]
    : [sources.env, sources.running];
  const url = set(sources.explicit) ?? set(first) ?? set(second) ?? sources.fallback;
  return url.replace(/\/+$/, "");
}
