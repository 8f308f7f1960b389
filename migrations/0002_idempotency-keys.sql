CREATE TABLE `idempotency_keys` (
	`credential_id` text NOT NULL,
	`key` text NOT NULL,
	`company_id` integer NOT NULL,
	`fingerprint` text NOT NULL,
	`state` text NOT NULL,
	`lock_token` text,
	`locked_at` integer NOT NULL,
	`status` integer,
	`headers` text,
	`body` text,
	`created_at` integer DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)) NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`credential_id`, `key`),
	FOREIGN KEY (`company_id`) REFERENCES `companies`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expiry_idx` ON `idempotency_keys` (`credential_id`,`expires_at`);