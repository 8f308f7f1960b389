DROP INDEX `shift_instances_company_start_idx`;--> statement-breakpoint
CREATE INDEX `shift_instances_company_start_idx` ON `shift_instances` (`company_id`,`start`,`machine_id`,`shift_definition_id`,`end`);--> statement-breakpoint
CREATE INDEX `production_logs_machine_duration_idx` ON `production_logs` (`machine_id`,("end" - "start"));--> statement-breakpoint
CREATE INDEX `production_logs_live_company_start_idx` ON `production_logs` (`company_id`,`start`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `production_logs_live_company_end_idx` ON `production_logs` (`company_id`,`end`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `production_logs_live_company_count_idx` ON `production_logs` (`company_id`,`count`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `production_logs_live_company_sku_start_idx` ON `production_logs` (`company_id`,`sku_id`,`start`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `stops_machine_end_idx` ON `stops` (`machine_id`,`end_time`);--> statement-breakpoint
CREATE INDEX `stops_company_end_idx` ON `stops` (`company_id`,`end_time`);--> statement-breakpoint
CREATE INDEX `stops_machine_duration_idx` ON `stops` (`machine_id`,("end_time" - "start_time"));