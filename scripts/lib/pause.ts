/**
 * A wait that an `AbortSignal` cuts short, without leaving anything on the signal.
 *
 * Why not `signal.addEventListener("abort", ...)` inside each wait: a long-running loop
 * (the demo replay waits once a minute for as long as `npm start` runs) then adds one
 * listener per wait to the same signal, and Node warns `MaxListenersExceededWarning ...
 * 11 abort listeners` after the eleventh. Each wait here removes its listener when it ends.
 */

/**
 * Resolves after `ms` milliseconds, or at once when `signal` aborts (or has aborted).
 * Never rejects.
 *
 * @param ms how long to wait, milliseconds.
 * @param signal optional; its abort ends the wait early.
 * @returns a promise that resolves to `true` when the full time passed, `false` when the
 *   signal cut it short.
 */
export function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
