/**
 * The end-to-end suite and its tools, each against a Worker of its own (`wrangler dev` on
 * a free port, a fresh `--persist-to` folder, a random operator token):
 *
 * - `tsx e2e/run.ts` (`npm run e2e`): starts the Worker and a Stoplight Prism proxy
 *   (`prism proxy <the Worker's /openapi.json> <worker> --errors`) in front of it, seeds a
 *   company through the operator API, calls every public operation through Prism with
 *   the typed client (openapi-fetch over the generated types), and fails on any
 *   contract violation Prism reports, any operation of the document left uncalled, any
 *   Spectral finding, or a committed client (./generate-client.ts) that differs from the
 *   documents the Worker serves.
 * - `tsx e2e/run.ts client` (`npm run client:generate`, `npm run e2e:client`): writes the
 *   documents and types of the public client (`clients/typescript/src/generated/`) and of the
 *   scripts' operator client (`scripts/lib/generated/`) from the Worker's documents.
 * - `tsx e2e/run.ts lint` (`npm run lint:openapi`): lints the Worker's document with
 *   Spectral (`.spectral.yaml`); fails on any warning or error.
 *
 * Every process started is stopped at the end, also on a failure or Ctrl-C.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { OpenAPI3 } from "openapi-typescript";
import { documentText, GENERATED_CLIENTS, generateTypes, readCommitted } from "./generate-client";
import { ViolationRecorder } from "./public-client";
import { runScenarios } from "./scenarios";
import { runSpectral, startStack, stopAllStacks, stopStack } from "./stack";

type Command = "e2e" | "client" | "lint";

const HTTP_METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"];

/**
 * Fetches one of the Worker's OpenAPI documents.
 *
 * @param path the document's path, default the public `/openapi.json`.
 * @param operatorToken sent as a Bearer token (the operator document needs it).
 * @throws Error on a non-200 answer.
 */
async function fetchDocument(
  workerUrl: string,
  path = "/openapi.json",
  operatorToken?: string,
): Promise<OpenAPI3> {
  const response = await fetch(`${workerUrl}${path}`, {
    headers: operatorToken ? { authorization: `Bearer ${operatorToken}` } : {},
  });
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
  return (await response.json()) as OpenAPI3;
}

/**
 * Operations the scenarios do not call through Prism, and why: the two stream-event streams
 * never end, and Prism's proxy validates a response body once it has ended. They are
 * checked in workerd by test/streams/*.test.ts (SSE, WebSocket, resume, tickets) and by
 * `bench/events.ts`.
 */
const NOT_THROUGH_PRISM = new Set([
  "GET /v1/realtime/{machine_id}/events",
  "GET /v1/realtime/events",
]);

/** Every operation of the document as `METHOD /path`. */
function documentedOperations(document: OpenAPI3): string[] {
  const operations: string[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of Object.keys(item)) {
      if (HTTP_METHODS.includes(method)) operations.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return operations;
}

/**
 * Compares the committed generated files with the ones the Worker's documents give.
 *
 * @returns one line per stale or missing file; empty when all are current.
 */
async function staleGeneratedFiles(workerUrl: string, operatorToken: string): Promise<string[]> {
  const stale: string[] = [];
  for (const generated of GENERATED_CLIENTS) {
    const document = await fetchDocument(workerUrl, generated.documentUrlPath, operatorToken);
    if (readCommitted(generated.documentPath) !== documentText(document)) {
      stale.push(generated.documentPath);
    }
    if (readCommitted(generated.typesPath) !== (await generateTypes(document))) {
      stale.push(generated.typesPath);
    }
  }
  return stale;
}

/** `npm run e2e`. @returns the process exit code. */
async function e2e(): Promise<number> {
  let document: OpenAPI3 | undefined;
  const stack = await startStack({
    async beforePrism(started) {
      document = await fetchDocument(started.workerUrl);
      const path = join(started.workDir, "openapi.json");
      writeFileSync(path, documentText(document));
      return path;
    },
  });
  const { prismUrl } = stack;
  if (!document || !prismUrl) throw new Error("the stack started without Prism");
  console.log(`Worker ${stack.workerUrl}, Prism ${prismUrl} (logs in ${stack.workDir})`);

  const problems: string[] = [];
  const recorder = new ViolationRecorder();
  try {
    const passed = await runScenarios({
      workerUrl: stack.workerUrl,
      prismUrl,
      operatorToken: stack.operatorToken,
      recorder,
    });
    console.log(`${passed.length} scenario steps passed.`);
  } catch (error) {
    problems.push(`Scenario failed: ${error instanceof Error ? error.message : String(error)}`);
  }

  const missed = documentedOperations(document).filter(
    (op) => !recorder.operationsSeen.has(op) && !NOT_THROUGH_PRISM.has(op),
  );
  if (missed.length > 0) {
    problems.push(`Operations of the document never called:\n  ${missed.join("\n  ")}`);
  }
  const requests = [...recorder.operationsSeen.values()].reduce((a, b) => a + b, 0);
  console.log(
    `${requests} requests through Prism over ${recorder.operationsSeen.size} of ` +
      `${documentedOperations(document).length} operations.`,
  );
  if (recorder.violations.length > 0) {
    problems.push(
      `${recorder.violations.length} requests with contract violations:\n${recorder.format()}`,
    );
  } else {
    console.log("Prism: 0 violations.");
  }

  const lint = await runSpectral(join(stack.workDir, "openapi.json"));
  if (lint.code !== 0) problems.push(`Spectral found problems in /openapi.json:\n${lint.output}`);
  else console.log("Spectral: no findings.");

  const stale = await staleGeneratedFiles(stack.workerUrl, stack.operatorToken);
  if (stale.length > 0) {
    problems.push(
      `The committed client is not the one /openapi.json gives; run \`npm run e2e:client\`:\n  ${stale.join("\n  ")}`,
    );
  }

  for (const problem of problems) console.error(`\n${problem}`);
  await stopStack(stack, { keepWorkDir: problems.length > 0 });
  if (problems.length > 0) {
    console.error(`\nFAILED. Logs of the Worker and Prism: ${stack.workDir}`);
    return 1;
  }
  console.log("\nEnd-to-end suite passed.");
  return 0;
}

/** `npm run e2e:client`. @returns the process exit code. */
async function client(): Promise<number> {
  const stack = await startStack({});
  try {
    for (const generated of GENERATED_CLIENTS) {
      const document = await fetchDocument(
        stack.workerUrl,
        generated.documentUrlPath,
        stack.operatorToken,
      );
      mkdirSync(dirname(generated.documentPath), { recursive: true });
      writeFileSync(generated.documentPath, documentText(document));
      writeFileSync(generated.typesPath, await generateTypes(document));
      console.log(`Wrote ${generated.documentPath} and ${generated.typesPath}.`);
    }
    return 0;
  } finally {
    await stopStack(stack);
  }
}

/** `npm run lint:openapi`. @returns Spectral's exit code. */
async function lint(): Promise<number> {
  const stack = await startStack({});
  try {
    const path = join(stack.workDir, "openapi.json");
    writeFileSync(path, documentText(await fetchDocument(stack.workerUrl)));
    const result = await runSpectral(path);
    console.log(result.output.trim() || "No findings.");
    return result.code;
  } finally {
    await stopStack(stack);
  }
}

async function main(): Promise<void> {
  const command = (process.argv[2] ?? "e2e") as Command;
  const commands: Record<Command, () => Promise<number>> = { e2e, client, lint };
  const run = commands[command];
  if (!run) {
    console.error(`Unknown command ${command}; use one of: ${Object.keys(commands).join(", ")}`);
    process.exitCode = 2;
    return;
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the Worker and Prism.`);
      void stopAllStacks().finally(() => process.exit(130));
    });
  }
  try {
    process.exitCode = await run();
  } catch (error) {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    await stopAllStacks({ keepWorkDir: true });
    process.exitCode = 1;
  }
}

await main();
