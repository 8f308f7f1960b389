/**
 * Runs the project's checks side by side (`npm test`, `npm run test:changed`): each command's
 * output is held and printed whole when it ends, under a line naming it, so that two checks'
 * lines never mix; one command (Vitest) may print as it goes instead.
 */
import { spawn } from "node:child_process";
import { PROJECT_ROOT } from "./project";

/**
 * Runs `node_modules/.bin/<bin> <args>` (`npm <args>` for `npm`) in the project root; resolves to whether it exited
 * with 0. Its output is printed when it ends, after `── <label>: ok|FAILED`, or as it comes
 * when `stream` is set.
 */
export function runCheck(
  label: string,
  bin: string,
  args: string[],
  stream = false,
): Promise<boolean> {
  return new Promise((resolve) => {
    const command = bin === "npm" ? "npm" : `${PROJECT_ROOT}/node_modules/.bin/${bin}`;
    const child = spawn(command, args, {
      cwd: PROJECT_ROOT,
      stdio: stream ? "inherit" : ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      output += chunk;
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.on("close", (code) => {
      if (!stream) process.stdout.write(`── ${label}: ${code === 0 ? "ok" : "FAILED"}\n${output}`);
      resolve(code === 0);
    });
  });
}

/** A check: its label, the bin of node_modules/.bin it runs, and the arguments. */
export type Check = [label: string, bin: string, args: string[]];

/**
 * Runs the checks one after another (each `tsc` holds half a gigabyte; two cores); all of them
 * run even after one fails, so one pass reports every failure. Resolves to whether all passed.
 */
export async function runInTurn(checks: Check[]): Promise<boolean> {
  let passed = true;
  for (const [label, bin, args] of checks) passed = (await runCheck(label, bin, args)) && passed;
  return passed;
}
