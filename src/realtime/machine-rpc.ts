/**
 * What a machine's realtime object answers over RPC: the methods its stub offers to
 * the routes, the read barrier and the live figures. `RealtimeMachine` implements it;
 * the stub is typed by it, so code that calls the object does not import the class
 * (and the class, which calls other modules, is imported by nothing but the Worker's
 * entry: no import cycle, type-only ones included).
 */
import type { LiveLogOwnerRpc } from "../resources/production-logs/running-shift";
import type {
  OperatorWrite,
  SegmentUpdate,
  SkuWrite,
  SnapshotResult,
  WriteResult,
} from "./machine-types";

/**
 * The RPC methods of `RealtimeMachine` (src/realtime/realtime-machine.ts documents each).
 * None names the machine: the object's name does (`machineObject`). Besides these, what the
 * public production-log endpoints ask of it about its live logs (`LiveLogOwnerRpc`).
 */
export interface RealtimeMachineRpc extends LiveLogOwnerRpc {
  /** Starts a segment with this SKU (and work order), or refuses (not running, conflicts). */
  applySku(write: SkuWrite): Promise<WriteResult>;
  /** Changes the current segment's fields without starting a new one. */
  updateSegment(update: SegmentUpdate): Promise<WriteResult>;
  /** Assigns an operator from an instant of the running shift. */
  assignOperator(write: OperatorWrite): Promise<WriteResult>;
  /** The running shift's timeline, or `not_running`. */
  snapshot(): Promise<SnapshotResult>;
  /** Flushes held writes to D1 before a reader reads (the read barrier). */
  sync(): Promise<void>;
  /** Starts the shift-boundary clock of a machine that may never be written to. */
  arm(): Promise<void>;
}
