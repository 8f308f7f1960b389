DROP TABLE `signal_rollups`;--> statement-breakpoint
DROP TABLE `signal_samples`;--> statement-breakpoint
ALTER TABLE `companies` ADD `signal_retention_days` integer;