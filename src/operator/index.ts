/**
 * The operator API under `/operator/v1`, with its own OpenAPI document.
 */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { validationHook } from "../http/validation";
import { operatorAuth } from "./auth";
import { operatorCompaniesRoutes } from "./companies";
import { operatorDiagnosticsRoutes } from "./diagnostics";
import { operatorMachinesRoutes } from "./machines";
import { operatorShiftsRoutes } from "./shifts";
import { operatorStopsRoutes } from "./stops";
import { operatorWebhooksRoutes } from "./webhooks/routes";

/** Builds the operator sub-app (mounted at `/operator/v1`); its document needs the operator token too. */
export function createOperatorApp() {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.openAPIRegistry.registerComponent("securitySchemes", "OperatorToken", {
    type: "http",
    scheme: "bearer",
    description: "The OPERATOR_TOKEN secret of the Worker.",
  });
  app.route("/", operatorCompaniesRoutes);
  app.route("/", operatorMachinesRoutes);
  app.route("/", operatorDiagnosticsRoutes);
  app.route("/", operatorShiftsRoutes);
  app.route("/", operatorStopsRoutes);
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
