/**
 * The hostile-input properties of test/hardening/properties.test.ts (its header says what they
 * check) for the operations outside the catalog: production logs, reports, exports, realtime.
 * Split from that file so that the two halves run side by side (hostile-input.ts).
 */
import { describeHostileInput, hostileInputRoutes } from "./hostile-input";

describeHostileInput(hostileInputRoutes("facts"));
