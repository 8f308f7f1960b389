CREATE TABLE `company_departures` (
	`from_shard` text NOT NULL,
	`company_id` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	PRIMARY KEY(`from_shard`, `company_id`)
);
--> statement-breakpoint
CREATE TABLE `directory_keys` (
	`kind` text NOT NULL,
	`value` text NOT NULL,
	`company_id` integer NOT NULL,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	PRIMARY KEY(`kind`, `value`)
);
--> statement-breakpoint
CREATE TABLE `shard_ranges` (
	`range_index` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`shard` text NOT NULL,
	`ready_at` integer,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `shard_ranges_shard_idx` ON `shard_ranges` (`shard`,`range_index`);--> statement-breakpoint
ALTER TABLE `companies` ADD `shard` text;