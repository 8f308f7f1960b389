DROP INDEX `production_logs_live_company_start_idx`;--> statement-breakpoint
DROP INDEX `production_logs_live_company_end_idx`;--> statement-breakpoint
DROP INDEX `production_logs_live_company_count_idx`;--> statement-breakpoint
DROP INDEX `production_logs_live_company_sku_start_idx`;--> statement-breakpoint
CREATE INDEX `production_logs_active_company_start_idx` ON `production_logs` (`company_id`,`start`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `production_logs_active_company_end_idx` ON `production_logs` (`company_id`,`end`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `production_logs_active_company_count_idx` ON `production_logs` (`company_id`,`count`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `production_logs_active_company_sku_start_idx` ON `production_logs` (`company_id`,`sku_id`,`start`) WHERE deleted_at IS NULL;