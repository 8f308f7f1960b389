/**
 * The documents an assistant reads to explain a figure: the OEE definitions (docs/metrics.md,
 * bundled with the Worker as text, so the resource is the document the repository keeps) and
 * the public OpenAPI document (the one /openapi.json serves).
 */
import metricsMarkdown from "../../docs/metrics.md";

/** One readable document. */
export interface McpResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  /** The document's text. */
  read(): string;
}

/**
 * The server's resources.
 *
 * @param openApiDocument the public OpenAPI document, as /openapi.json serves it.
 */
export function mcpResources(openApiDocument: () => unknown): McpResource[] {
  return [
    {
      uri: "docs://metrics",
      name: "metrics",
      title: "How the metrics report computes OEE",
      description:
        "Every figure of metrics_report and machine_now defined: shift instances, how their " +
        "minutes are sorted, availability, effectiveness, quality, OEE, with a worked example.",
      mimeType: "text/markdown",
      read: () => metricsMarkdown,
    },
    {
      uri: "docs://openapi",
      name: "openapi",
      title: "Production Monitoring Public API (OpenAPI 3.1)",
      description:
        "The REST API the tools mirror: every operation, schema, scope and error, as /openapi.json.",
      mimeType: "application/json",
      read: () => JSON.stringify(openApiDocument()),
    },
  ];
}
