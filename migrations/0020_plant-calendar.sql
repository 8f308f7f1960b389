-- The plant calendar (docs/metrics.md, "The plant calendar"): closures of a company, or of one
-- of its machines, over local dates or between two instants; a shift instance starting inside
-- one is not scheduled. The index answers "a closure of this company holding this instant".
CREATE TABLE `plant_closures` (
	`id` text PRIMARY KEY NOT NULL,
	`company_id` integer NOT NULL,
	`machine_id` integer,
	`name` text NOT NULL,
	`start_date` text,
	`end_date` text,
	`start_at` integer NOT NULL,
	`end_at` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`updated_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `plant_closures_company_start_idx` ON `plant_closures` (`company_id`,`start_at`,`end_at`);