CREATE TABLE `idempotency_chunks` (
	`credential_id` text NOT NULL,
	`key` text NOT NULL,
	`seq` integer NOT NULL,
	`data` blob NOT NULL,
	PRIMARY KEY(`credential_id`, `key`, `seq`),
	FOREIGN KEY (`credential_id`,`key`) REFERENCES `idempotency_keys`(`credential_id`,`key`) ON UPDATE no action ON DELETE cascade
);
