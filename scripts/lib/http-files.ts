/**
 * Reads the request collection (`requests/*.http`, the VS Code REST Client format) and runs
 * it: the subset of the format the collection uses, nothing more.
 *
 * - Requests are separated by `###` lines; `#` lines are comments, `# @name N` names the
 *   request that follows; `@var = value` lines (before the first request) set variables.
 * - `# @until $.field value` (ours; REST Client reads it as a comment) marks a request to
 *   send again until a field of its JSON answer has that value, as a person following a job
 *   sends it again until it is done (an export's `$.state succeeded`).
 * - A request is `METHOD URL`, header lines, an empty line, then the body.
 * - `{{var}}` is a variable, `{{$processEnv NAME}}` an environment variable, `{{$guid}}` a
 *   new uuid, `{{$datetime iso8601}}` now, and `{{N.response.body.$[0].id}}` or
 *   `{{N.response.body.$.id}}` a field of the JSON answer of the request named N.
 */

/** One request of a `.http` file, before any variable is replaced. */
export interface HttpRequest {
  /** The `# @name` of the request, when it has one. */
  name?: string;
  /** `# @until $.path value`: sent again until that field of its answer has that value. */
  until?: { path: string; value: string };
  /** The first `###` line's text, for messages. */
  title: string;
  method: string;
  url: string;
  headers: [string, string][];
  body?: string;
}

/** A parsed `.http` file. */
export interface HttpFile {
  variables: Map<string, string>;
  requests: HttpRequest[];
}

const REQUEST_LINE = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+)(?: HTTP\/[\d.]+)?$/;

/**
 * Parses the text of a `.http` file.
 *
 * @param text the file's content.
 * @returns its file-level variables and its requests, in order.
 * @throws Error on a block whose first non-comment line is not a request line.
 */
export function parseHttpFile(text: string): HttpFile {
  const variables = new Map<string, string>();
  const requests: HttpRequest[] = [];
  const blocks = text.split(/^###(.*)$/m);
  // split with a capture group: [preamble, title1, block1, title2, block2, ...]
  for (const line of (blocks[0] ?? "").split("\n")) {
    const variable = /^@([\w-]+)\s*=\s*(.*)$/.exec(line.trim());
    if (variable?.[1] !== undefined) variables.set(variable[1], variable[2] ?? "");
  }
  for (let i = 1; i < blocks.length; i += 2) {
    const title = (blocks[i] ?? "").trim();
    const lines = (blocks[i + 1] ?? "").split("\n");
    let name: string | undefined;
    let until: HttpRequest["until"];
    let at = 0;
    while (at < lines.length && /^\s*(#.*)?$/.test(lines[at] ?? "")) {
      const line = (lines[at] ?? "").trim();
      const named = /^#\s*@name\s+(\S+)/.exec(line);
      if (named) name = named[1];
      const awaited = /^#\s*@until\s+\$(\S*)\s+(.+)$/.exec(line);
      if (awaited) until = { path: awaited[1] ?? "", value: (awaited[2] ?? "").trim() };
      at += 1;
    }
    const requestLine = REQUEST_LINE.exec((lines[at] ?? "").trim());
    if (!requestLine?.[1] || !requestLine[2]) {
      throw new Error(`"### ${title}": no request line (METHOD URL)`);
    }
    at += 1;
    const headers: [string, string][] = [];
    for (; at < lines.length && (lines[at] ?? "").trim() !== ""; at += 1) {
      const line = lines[at] ?? "";
      const colon = line.indexOf(":");
      if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    const body = lines
      .slice(at + 1)
      .join("\n")
      .trim();
    requests.push({
      ...(name ? { name } : {}),
      ...(until ? { until } : {}),
      title,
      method: requestLine[1],
      url: requestLine[2],
      headers,
      ...(body !== "" ? { body } : {}),
    });
  }
  return { variables, requests };
}

/** What a variable can be resolved from while a file runs. */
export interface RunContext {
  variables: Map<string, string>;
  /** Environment variables (`{{$processEnv NAME}}`). */
  env: Record<string, string | undefined>;
  /** The parsed JSON answers of the named requests run so far. */
  answers: Map<string, unknown>;
}

/**
 * Replaces every `{{...}}` of a text.
 *
 * @throws Error naming a variable that cannot be resolved.
 */
export function substitute(text: string, context: RunContext, depth = 0): string {
  return text.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (_, expression: string) => {
    const value = resolve(expression, context);
    return depth < 5 ? substitute(value, context, depth + 1) : value;
  });
}

function resolve(expression: string, context: RunContext): string {
  const env = /^\$processEnv\s+(\w+)$/.exec(expression);
  if (env?.[1]) {
    const value = context.env[env[1]];
    if (value === undefined) throw new Error(`{{${expression}}}: ${env[1]} is not set`);
    return value;
  }
  if (expression === "$guid") return crypto.randomUUID();
  if (expression === "$datetime iso8601") return new Date().toISOString();
  const answer = /^([\w-]+)\.response\.body\.\$(.*)$/.exec(expression);
  if (answer?.[1] !== undefined) {
    if (!context.answers.has(answer[1])) {
      throw new Error(`{{${expression}}}: the request ${answer[1]} has not run`);
    }
    const value = fieldOf(context.answers.get(answer[1]), answer[2] ?? "");
    if (value === undefined) throw new Error(`{{${expression}}}: not in the answer`);
    return typeof value === "string" ? value : JSON.stringify(value);
  }
  const variable = context.variables.get(expression);
  if (variable === undefined) throw new Error(`{{${expression}}}: unknown variable`);
  return variable;
}

/**
 * A field of a JSON answer by the path after `$` (`[0].id`, `.files[0].name`, empty for the
 * answer itself); undefined where the answer has no such field.
 */
function fieldOf(answer: unknown, path: string): unknown {
  let value = answer;
  for (const step of path.matchAll(/\[(\d+)\]|\.(\w+)/g)) {
    const key = step[1] !== undefined ? Number(step[1]) : (step[2] ?? "");
    value =
      value !== null && typeof value === "object"
        ? (value as Record<string | number, unknown>)[key]
        : undefined;
  }
  return value;
}

/** The outcome of one request of a run. */
export interface RunResult {
  title: string;
  method: string;
  url: string;
  status: number;
}

/** How a run follows a `# @until` request. */
export interface UntilOptions {
  /** Between two sends, ms (default 500). */
  pollMs?: number;
  /** After this long without the awaited value the run fails, ms (default 120,000). */
  timeoutMs?: number;
}

/**
 * Runs the requests of a file one after the other.
 *
 * @param file the parsed file.
 * @param send the fetch to send with.
 * @param options environment variables, variables that replace the file's own, and how a
 *   `# @until` request is sent again.
 * @returns one result per request (a `# @until` request counts once, with its last
 *   answer's status); the run stops after the first non-2XX answer.
 * @throws Error on a variable that cannot be resolved, or a `# @until` request whose answer
 *   does not reach the awaited value in time.
 */
export async function runHttpFile(
  file: HttpFile,
  send: (request: Request) => Promise<Response>,
  options: {
    env: Record<string, string | undefined>;
    overrides?: Record<string, string>;
    until?: UntilOptions;
  },
): Promise<RunResult[]> {
  const variables = new Map(file.variables);
  for (const [name, value] of Object.entries(options.overrides ?? {})) variables.set(name, value);
  const context: RunContext = { variables, env: options.env, answers: new Map() };
  const pollMs = options.until?.pollMs ?? 500;
  const timeoutMs = options.until?.timeoutMs ?? 120_000;
  const results: RunResult[] = [];
  for (const request of file.requests) {
    const url = substitute(request.url, context);
    const headers = request.headers.map(([name, value]): [string, string] => [
      name,
      substitute(value, context),
    ]);
    const body = request.body === undefined ? undefined : substitute(request.body, context);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const response = await send(new Request(url, { method: request.method, headers, body }));
      // An event stream never ends: its first chunk shows it opened, then it is closed.
      const stream = response.headers.get("content-type")?.startsWith("text/event-stream");
      const text = stream ? await firstChunk(response) : await response.text();
      const until = request.until;
      // Only a named or awaited answer is read as JSON (others may be CSV or Parquet).
      const json = (request.name !== undefined || until !== undefined) && response.ok && !stream;
      const answer = json && text !== "" ? JSON.parse(text) : null;
      if (response.ok && until && String(fieldOf(answer, until.path)) !== until.value) {
        if (Date.now() >= deadline) {
          throw new Error(
            `"### ${request.title}": $${until.path} is ${JSON.stringify(fieldOf(answer, until.path))}, ` +
              `not ${until.value}, after ${timeoutMs / 1000} s`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        continue;
      }
      results.push({ title: request.title, method: request.method, url, status: response.status });
      if (!response.ok) return results;
      if (request.name && !stream) context.answers.set(request.name, answer);
      break;
    }
  }
  return results;
}

/** The first chunk of a streamed body as text; the stream is then cancelled. */
async function firstChunk(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const { value } = await reader.read();
  await reader.cancel();
  return value === undefined ? "" : new TextDecoder().decode(value);
}
