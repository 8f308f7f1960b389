/**
 * What the company's exports object (`CompanyExports`, ./export-object.ts) offers over RPC,
 * typed apart from the class so that the routes call it without importing it.
 */
import type { ExportDataset, ExportFormat, ExportState } from "./schemas";
import type { ExportSpec } from "./sources";

/** A finished file of an export. */
export interface ExportFileRecord {
  name: string;
  rows: number;
  bytes: number;
}

/** A signal an export stopped reading (deleted meanwhile), as the client is told. */
export interface LeftOutRecord {
  machineUuid: string;
  publicId: string;
  name: string;
  /** The files hold its points before this instant (ms), none from it on. */
  from: number;
}

/** An export as the object keeps it (instants in ms). */
export interface ExportRecord {
  id: string;
  dataset: ExportDataset;
  format: ExportFormat;
  state: ExportState;
  createdAt: number;
  finishedAt: number | null;
  expiresAt: number | null;
  progress: number;
  rows: number;
  totalRows: number | null;
  error: string | null;
  files: ExportFileRecord[];
  /** Signals deleted while it ran, whose later points it does not hold. */
  leftOut: LeftOutRecord[];
  /** Steps run so far (alarm invocations that advanced it). */
  steps: number;
  /** Most bytes one of its steps held for the file being written (its memory, measured). */
  peakBytes: number;
}

/** What starting an export needs. */
export interface ExportStart {
  id: string;
  spec: ExportSpec;
  /** Rows it will hold, when counted in advance. */
  totalRows: number | null;
}

/** The answer to a start: the export, or how long until one of the company's ends. */
export type StartAnswer = { ok: true; record: ExportRecord } | { ok: false; active: number };

export interface CompanyExportsRpc extends Rpc.DurableObjectBranded {
  /** Queues an export, unless the company has `MAX_ACTIVE_EXPORTS` queued or running. */
  start(companyId: number, request: ExportStart): Promise<StartAnswer>;
  /** One export of the company, with its finished files; null when unknown. */
  describe(companyId: number, id: string): Promise<ExportRecord | null>;
}

/** The R2 key of an export's file: under `exports/`, then the company and the export. */
export function exportFileKey(companyId: number, exportId: string, name: string): string {
  return `exports/${companyId}/${exportId}/${name}`;
}

/** The name of a file: `part-00001.parquet`, numbered from 1. */
export function exportFileName(index: number, extension: string): string {
  return `part-${String(index).padStart(5, "0")}.${extension}`;
}
