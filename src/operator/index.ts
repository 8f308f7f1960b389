/**
 * The operator API (`/operator/v1`): mounts each resource's router (one folder per resource,
 * docs/architecture.md, "Layout") and serves its own OpenAPI document, behind the operator
 * token like its routes (docs/operator-api.md).
 */
import { createRouter } from "../http/openapi";
import { operatorApiKeysRoutes } from "./api-keys/routes";
import { operatorAuth } from "./auth";
import { operatorClosuresRoutes } from "./closures/routes";
import { operatorCompaniesRoutes } from "./companies/routes";
import { operatorCompanyMoveRoutes } from "./company-move/routes";
import { operatorDiagnosticsRoutes } from "./diagnostics/routes";
import { operatorMachinesRoutes } from "./machines/routes";
import { operatorRecordIdsRoutes } from "./record-ids/routes";
import { operatorShiftsRoutes } from "./shifts/routes";
import { operatorSignalsRoutes } from "./signals/routes";
import { operatorStopCausesRoutes } from "./stops/causes-routes";
import { operatorStopClassificationsRoutes } from "./stops/classifications-routes";
import { operatorStopDetectionRoutes } from "./stops/detection-routes";
import { operatorStopsRoutes } from "./stops/routes";
import { operatorWebhooksRoutes } from "./webhooks/routes";

/** Builds the operator sub-app (mounted at `/operator/v1`); its document needs the operator token too. */
export function createOperatorApp() {
  const app = createRouter();
  app.openAPIRegistry.registerComponent("securitySchemes", "OperatorToken", {
    type: "http",
    scheme: "bearer",
    description: "The OPERATOR_TOKEN secret of the Worker.",
  });
  app.route("/", operatorCompaniesRoutes);
  app.route("/", operatorCompanyMoveRoutes);
  app.route("/", operatorApiKeysRoutes);
  app.route("/", operatorMachinesRoutes);
  app.route("/", operatorSignalsRoutes);
  app.route("/", operatorDiagnosticsRoutes);
  app.route("/", operatorShiftsRoutes);
  app.route("/", operatorClosuresRoutes);
  app.route("/", operatorStopsRoutes);
  app.route("/", operatorStopClassificationsRoutes);
  app.route("/", operatorStopCausesRoutes);
  app.route("/", operatorStopDetectionRoutes);
  app.route("/", operatorRecordIdsRoutes);
  app.route("/", operatorWebhooksRoutes);
  // The list of operator routes is for the operator only, like the routes themselves.
  app.use("/openapi.json", operatorAuth());
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Production Monitoring Operator API",
      version: "0.1.0",
      description:
        "Companies, keys, plant data and webhook registrations. Not part of the public API.",
    },
    servers: [{ url: "/operator/v1" }],
  });
  return app;
}
