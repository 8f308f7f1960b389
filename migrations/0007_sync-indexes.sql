CREATE INDEX `nominal_speeds_company_updated_idx` ON `nominal_speeds` (`company_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `operators_company_updated_idx` ON `operators` (`company_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `simple_work_orders_company_updated_idx` ON `simple_work_orders` (`company_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `skus_company_updated_idx` ON `skus` (`company_id`,`updated_at`,`id`);