/**
 * A zone's UTC offsets as the report walks need them, with few lookups (one costs tens of
 * microseconds in the runtime): sampled every few days and kept per isolate, to compute the
 * instants of wall-clock times far from any change by arithmetic (./instance-series.ts), and
 * the instants where the zone skipped a date. docs/bounded-work.md ("Any range at once").
 */

import { tzOffset } from "@date-fns/tz";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../time/units";

/** A zone offset change this large may skip (or repeat) a local date (as in ./instances.ts). */
const SKIPPED_DATE_MS = 20 * HOUR_MS;

/**
 * Around a wall-clock time, how far an instance's zone computation looks for a change (the
 * instant is within 14 h of the wall time, and ./instances.ts calls it plain when the zone
 * keeps its offset 25 h on either side).
 */
const PLAIN_REACH_MS = 40 * HOUR_MS;

/**
 * Days between two samples of a zone's offset where it does not change: under the shortest
 * time a zone keeps an offset before returning to the one before (7 days), so that no such
 * episode falls between two samples.
 */
const SAMPLE_DAYS = 3;

/** Most offsets kept per zone and isolate (a zone's samples of 130 years are about 17,000). */
const SAMPLES_PER_ZONE = 50_000;

/** Offsets sampled (ms) per zone and UTC day, kept per isolate: a zone's rules never change. */
const zoneSamples = new Map<string, Map<number, number>>();

/**
 * The zone's offset sampled at UTC midnights, every `SAMPLE_DAYS` and daily where it changed
 * (a lookup costs tens of microseconds in the runtime, and is kept per isolate): where the
 * samples around a wall-clock time all agree, the zone does not change near it and the
 * instant is the wall time less that offset, as ./instances.ts computes it, without its
 * three lookups per instant. This takes it that no zone leaves an offset and comes back to it
 * within `SAMPLE_DAYS`: in the time zone database for 1970-2100, sampled every 6 hours, the
 * shortest such return is 7 days (Boa Vista, Noronha and Recife in October 2000, Gaza's
 * predicted Ramadan rules from 2040; docs/bounded-work.md).
 */
export class ZoneSamples {
  private readonly samples: Map<number, number>;

  constructor(private readonly timezone: string) {
    let samples = zoneSamples.get(timezone);
    if (!samples || samples.size > SAMPLES_PER_ZONE) {
      samples = new Map();
      zoneSamples.set(timezone, samples);
    }
    this.samples = samples;
  }

  private at(day: number): number {
    let offset = this.samples.get(day);
    if (offset === undefined) {
      offset = tzOffset(this.timezone, new Date(day * DAY_MS)) * MINUTE_MS;
      this.samples.set(day, offset);
    }
    return offset;
  }

  /** The one offset of the zone over the UTC days `[first, last]`, or null if it changes. */
  private constantOver(first: number, last: number, step: number): number | null {
    const offset = this.at(first);
    for (let k = first + step; k < last; k += step) if (this.at(k) !== offset) return null;
    return this.at(last) === offset ? offset : null;
  }

  /** The offset (ms) around a wall-clock time (as UTC ms), or null when the zone changes near it. */
  plainOffset(wall: number): number | null {
    const first = Math.floor((wall - PLAIN_REACH_MS) / DAY_MS);
    const last = Math.ceil((wall + PLAIN_REACH_MS) / DAY_MS);
    const weekly = this.constantOver(
      Math.floor(first / SAMPLE_DAYS) * SAMPLE_DAYS,
      Math.ceil(last / SAMPLE_DAYS) * SAMPLE_DAYS,
      SAMPLE_DAYS,
    );
    return weekly ?? this.constantOver(first, last, 1);
  }
}

/**
 * Instants in `[from, to]` at which the zone's offset jumps by `SKIPPED_DATE_MS` or more (a
 * date skipped), by bisection: two offset lookups when there is none.
 */
export function dateJumps(timezone: string, from: number, to: number): number[] {
  const offsetAt = (t: number) => tzOffset(timezone, new Date(t)) * MINUTE_MS;
  const search = (a: number, b: number): number[] => {
    if (Math.abs(offsetAt(b) - offsetAt(a)) < SKIPPED_DATE_MS) return [];
    if (b - a <= HOUR_MS) return [b];
    const mid = Math.floor((a + b) / 2);
    return [...search(a, mid), ...search(mid, b)];
  };
  return search(from, to);
}
