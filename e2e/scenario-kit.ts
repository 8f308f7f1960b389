/**
 * What every scenario step of the end-to-end suite shares (e2e/scenarios.ts and the files of
 * steps beside it): the seeded world, the state handed from step to step, and the checks of
 * an answer.
 */
import assert from "node:assert/strict";
import type { PublicClient } from "./public-client";

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** What a scenario step needs: the clients and the ids of the seeded plant. */
export interface World {
  full: PublicClient;
  readOnly: PublicClient;
  badKey: PublicClient;
  limited: PublicClient;
  /** Runs the Worker's clock; every instant of the scenarios is relative to it. */
  now: number;
  runId: string;
  machines: { line1: SeededMachine; line2: SeededMachine; packer: SeededMachine };
  /** Every machine id of the company, in creation order (the fourth has no uuid). */
  machineIds: number[];
  signals: { power: string; count: string };
}

export interface SeededMachine {
  id: number;
  uuid: string;
  name: string;
}

/** An openapi-fetch result, reduced to what the checks read. */
export interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Asserts the status of a result and returns its typed body.
 *
 * @throws AssertionError naming the request, the status and the body received.
 */
export function expectData<T>(result: Result<T>, status: number): T {
  expectStatus(result, status);
  assert.ok(result.data !== undefined, `${describe(result)}: no body`);
  return result.data;
}

/** Asserts the status of a result (any body). */
export function expectStatus(result: Result<unknown>, status: number): void {
  assert.equal(
    result.response.status,
    status,
    `${describe(result)}: expected ${status}, body ${JSON.stringify(result.error ?? result.data)}`,
  );
}

/** Asserts an error answer: its status and, for all but 422, its `detail` text. */
export function expectError(result: Result<unknown>, status: number, detail?: RegExp): void {
  expectStatus(result, status);
  const body = result.error as { detail?: unknown } | undefined;
  if (detail) {
    assert.ok(
      typeof body?.detail === "string" && detail.test(body.detail),
      `${describe(result)}: detail ${JSON.stringify(body?.detail)} does not match ${detail}`,
    );
  }
}

function describe(result: Result<unknown>): string {
  return `${result.response.url} → ${result.response.status}`;
}

/** One named step of the suite. */
export interface Step {
  name: string;
  run: (world: World, state: State) => Promise<void>;
}

/** Ids created by earlier steps and used by later ones. */
export interface State {
  skuIds: string[];
  operatorIds: number[];
  workOrderIds: string[];
  nominalSpeedIds: string[];
  productionLogIds: string[];
}
