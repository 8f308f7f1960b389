CREATE TABLE `realtime_pending` (
	`company_id` integer NOT NULL,
	`machine_id` integer NOT NULL,
	`since` integer NOT NULL,
	PRIMARY KEY(`company_id`, `machine_id`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`machine_id`) REFERENCES `machines`(`id`) ON UPDATE no action ON DELETE no action
);
