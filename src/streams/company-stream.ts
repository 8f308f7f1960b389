/**
 * A company's event stream (`CompanyStream`, one object per company, named `c:<companyId>`,
 * `./names.ts`): every machine's events, forwarded by the machine streams
 * (`./machine-stream.ts`) in each machine's order, with ids of its own, for plant boards.
 * Its log and subscribers are the shared `StreamCore` (`./stream-core.ts`); it computes no
 * figures and forwards nothing.
 */

import type { Env } from "../env";
import type { StreamEventInput } from "./names";
import { COMPANY_STREAM_MIGRATIONS } from "./stream-migrations";
import { StreamObject } from "./stream-object";
import type { StreamDelivery } from "./stream-outbox";
import type { CompanyStreamRpc } from "./stream-rpc";

export class CompanyStream extends StreamObject implements CompanyStreamRpc {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, COMPANY_STREAM_MIGRATIONS);
  }

  /**
   * Appends a machine stream's forwarded events in order, each once (`StreamCore.fresh`).
   *
   * @param stream this object's name (`c:...`), kept on first use.
   * @returns the id of the last one appended (0 for none).
   */
  async appendMany(
    stream: string,
    inputs: StreamEventInput[],
    delivery?: StreamDelivery,
  ): Promise<number> {
    this.core.log.remember(stream);
    let last = 0;
    for (const input of this.core.fresh(inputs, delivery)) last = this.core.record(input).id;
    return last;
  }

  /** Ends connections whose access token expired, then waits for the next one. */
  override async alarm(): Promise<void> {
    await this.closeExpired();
    await this.core.scheduleClosing();
  }
}
