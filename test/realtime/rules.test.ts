import { describe, expect, it } from "vitest";
import { machineKeyOf } from "../../src/realtime/machine-stub";
import { refuseSkuWrite, refuseStart } from "../../src/realtime/rules";

const instance = { id: 7, name: "Early", start: 1_000, end: 2_000, isConsidered: true };

describe("the realtime rules (one place for the object and the route)", () => {
  it("refuses a start outside the running instance, naming the instance", () => {
    expect(refuseStart(instance, 999)).toEqual({
      ok: false,
      reason: "outside_instance",
      field: "start",
      instance,
    });
    // The end is outside: the instance is [start, end).
    expect(refuseStart(instance, 2_000)?.reason).toBe("outside_instance");
    expect(refuseStart(instance, 1_000)).toBeNull();
    expect(refuseStart(null, 1_500)).toEqual({ ok: false, reason: "not_running" });
  });

  it("checks a SKU write's start (default: now) before its end", () => {
    expect(refuseSkuWrite(instance, { start: null, end: null }, 1_500)).toBeNull();
    expect(refuseSkuWrite(instance, { start: null, end: 1_500 }, 1_500)?.reason).toBe(
      "end_not_after_start",
    );
    expect(refuseSkuWrite(instance, { start: 500, end: 400 }, 1_500)?.reason).toBe(
      "outside_instance",
    );
    expect(refuseSkuWrite(instance, { start: 1_200, end: 1_201 }, 1_500)).toBeNull();
  });

  it("reads the machine from the object's name only", () => {
    expect(machineKeyOf("12:34")).toEqual({ companyId: 12, machineId: 34 });
    expect(() => machineKeyOf(undefined)).toThrow();
    expect(() => machineKeyOf("m:12:34")).toThrow();
  });
});
