-- Detected stops (docs/machine-state.md): the key a machine's SignalStore gives each stop it
-- detected from the signals, unique so that a resent write finds the row it made instead of
-- adding a second one; NULL on every recorded stop (SQLite treats NULLs as distinct).
ALTER TABLE `stops` ADD `detection_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `stops_detection_key_unique` ON `stops` (`detection_key`);