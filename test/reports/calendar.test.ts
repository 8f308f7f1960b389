/**
 * Local days found on demand (`LocalCalendar`, src/reports/calendar.ts): whatever the order
 * of the lookups (in start order, as the reports make them, or anywhere), the day of an
 * instant is the one `TZDate` gives: its local date, from its midnight to the next.
 */
import { TZDate } from "@date-fns/tz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LocalCalendar } from "../../src/reports/calendar";

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** The day of `at` by `TZDate` alone. */
function referenceDay(at: number, timezone: string) {
  const local = new TZDate(at, timezone);
  const [y, m, d] = [local.getFullYear(), local.getMonth(), local.getDate()];
  const start = new TZDate(y, m, d, timezone).getTime();
  const next = new TZDate(y, m, d + 1, 12, 0, timezone);
  const end = new TZDate(next.getFullYear(), next.getMonth(), next.getDate(), timezone).getTime();
  return { start, end, date: `${pad(y, 4)}-${pad(m + 1)}-${pad(d)}` };
}

const zone = fc.constantFrom(
  "UTC",
  "Europe/Rome",
  "America/Santiago",
  "Australia/Lord_Howe",
  "Pacific/Apia",
  "Asia/Kolkata",
);

describe("LocalCalendar", () => {
  it("gives TZDate's day for instants in order and out of order", () => {
    fc.assert(
      fc.property(
        zone,
        fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2040, 0, 1) }),
        fc.array(fc.integer({ min: -5 * 86_400_000, max: 40 * 86_400_000 }), { maxLength: 40 }),
        fc.boolean(),
        (timezone, base, offsets, sorted) => {
          const calendar = new LocalCalendar(timezone);
          const instants = offsets.map((o) => base + o);
          if (sorted) instants.sort((a, b) => a - b);
          for (const at of instants) {
            expect(calendar.dayOf(at)).toEqual(referenceDay(at, timezone));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("walks across the date Samoa skipped", () => {
    const calendar = new LocalCalendar("Pacific/Apia");
    for (let at = Date.UTC(2011, 11, 28); at < Date.UTC(2012, 0, 3); at += 3_600_000) {
      expect(calendar.dayOf(at)).toEqual(referenceDay(at, "Pacific/Apia"));
    }
  });
});
