/**
 * The typed public client of the suite (openapi-fetch over the generated `paths`), sent
 * through the Prism proxy, and the recorder of every contract violation Prism reports.
 *
 * Prism (`proxy --errors`) checks each request against the document before forwarding
 * it, and each answer of the Worker against the document before returning it. A
 * violation comes back as Prism's own problem body (`application/problem+json`, `type`
 * `https://stoplight.io/prism/errors#...`) with the findings in `validation`, or, for
 * findings below error level, in the `sl-violations` header of the forwarded answer. The
 * Worker never answers `application/problem+json`, so either sign is Prism's.
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "../clients/typescript/src/generated/api";

/** One finding of Prism: where, and what. */
export interface Finding {
  location: string[];
  severity: string;
  code: string | number;
  message: string;
}

/** A request or response that Prism found outside the document. */
export interface Violation {
  /** The scenario step, for example `skus: create`. */
  step: string;
  method: string;
  url: string;
  /** The status the client received (Prism's when it replaced the answer). */
  status: number;
  /** Prism's problem `type` and `title`, when it replaced the answer. */
  problem?: string;
  findings: Finding[];
}

const PRISM_ERROR_TYPE = "https://stoplight.io/prism/errors#";

/** The public client, typed by the generated `paths`. */
export type PublicClient = Client<paths, "application/json">;

/** Collects the violations of a run; `step` names the scenario step being run. */
export class ViolationRecorder {
  readonly violations: Violation[] = [];
  /** Every request sent, as `METHOD /templated/path` → count; proves coverage. */
  readonly operationsSeen = new Map<string, number>();
  step = "setup";

  /**
   * Inspects one answer; records a violation when Prism reports one.
   *
   * @param request the request as sent.
   * @param response the answer received (read from a clone; the original is untouched).
   * @param schemaPath the templated path of the operation.
   */
  async inspect(request: Request, response: Response, schemaPath: string): Promise<void> {
    const operation = `${request.method} ${schemaPath}`;
    this.operationsSeen.set(operation, (this.operationsSeen.get(operation) ?? 0) + 1);
    const findings: Finding[] = [];
    let problem: string | undefined;
    if (response.headers.get("content-type")?.includes("application/problem+json")) {
      const body = (await response.clone().json()) as {
        type?: string;
        title?: string;
        detail?: string;
        validation?: Finding[];
      };
      if (body.type?.startsWith(PRISM_ERROR_TYPE)) {
        problem = `${body.type.slice(PRISM_ERROR_TYPE.length)}: ${body.title ?? ""}`;
        findings.push(
          ...(body.validation ?? [
            { location: [], severity: "Error", code: "prism", message: body.detail ?? "" },
          ]),
        );
      }
    }
    // The header repeats what a problem body lists; read it when Prism forwarded the answer.
    const header = response.headers.get("sl-violations");
    if (header && problem === undefined) findings.push(...parseFindings(header));
    if (findings.length > 0 || problem !== undefined) {
      this.violations.push({
        step: this.step,
        method: request.method,
        url: request.url,
        status: response.status,
        problem,
        findings,
      });
    }
  }

  /** A readable report of every violation, one block per request. */
  format(): string {
    return this.violations
      .map((v) =>
        [
          `✗ [${v.step}] ${v.method} ${v.url} → ${v.status}${v.problem ? ` (${v.problem})` : ""}`,
          ...v.findings.map(
            (f) => `    ${f.severity} ${f.code} at ${f.location.join(".") || "-"}: ${f.message}`,
          ),
        ].join("\n"),
      )
      .join("\n");
  }
}

function parseFindings(header: string): Finding[] {
  try {
    const parsed = JSON.parse(header) as Finding[];
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [{ location: [], severity: "Error", code: "sl-violations", message: header }];
  }
}

/**
 * Creates a typed client that sends every request through Prism with one credential.
 *
 * @param prismUrl origin of the Prism proxy.
 * @param apiKey the `x-api-key` to send.
 * @param recorder where Prism's findings are recorded.
 */
export function publicClient(
  prismUrl: string,
  apiKey: string,
  recorder: ViolationRecorder,
): PublicClient {
  const client = createClient<paths, "application/json">({
    baseUrl: prismUrl,
    headers: { "x-api-key": apiKey },
  });
  client.use({
    async onResponse({ request, response, schemaPath }) {
      await recorder.inspect(request, response, schemaPath);
      return undefined;
    },
  });
  return client;
}
