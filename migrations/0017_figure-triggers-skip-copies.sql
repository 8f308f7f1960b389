-- A company's rows that a move writes into a shard (src/db/company-copy.ts) are copies: the
-- target receives the source's kept figures (instance_figures) and write counts
-- (machine_writes) as rows of their own, so the figure triggers of 0009/0013 must not run
-- again on the copied production logs, stops and classifications (an open stop copied before
-- the figures deleted every figure after its start: the copy never matched, and the move
-- failed for any company with stops and kept figures). Neither while a move removes a
-- company's rows. A company in state `receiving` or `removing` in `company_moves` (the move's
-- table, created here so that the triggers may name it) is skipped; every other write runs
-- them as before. The triggers are otherwise unchanged. See docs/scaling.md, "Moving a company".
CREATE TABLE IF NOT EXISTS company_moves (company_id INTEGER PRIMARY KEY, state TEXT NOT NULL);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS company_move_changes (company_id INTEGER NOT NULL, table_name TEXT NOT NULL, pk TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (company_id, table_name, pk));
--> statement-breakpoint
DROP TRIGGER IF EXISTS `production_logs_figures_insert`;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_insert` AFTER INSERT ON `production_logs`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start - 90000000 AND start < NEW."end" AND "end" > NEW.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `production_logs_figures_update`;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_update` AFTER UPDATE ON `production_logs`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start - 90000000 AND start < NEW."end" AND "end" > NEW.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `production_logs_figures_update_old`;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_update_old` AFTER UPDATE ON `production_logs`
  WHEN (OLD.machine_id IS NOT NEW.machine_id OR OLD.start < NEW.start OR OLD."end" > NEW."end")
    AND NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start - 90000000 AND start < OLD."end" AND "end" > OLD.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `production_logs_figures_delete`;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_delete` AFTER DELETE ON `production_logs`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = OLD.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start - 90000000 AND start < OLD."end" AND "end" > OLD.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stops_figures_insert`;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_insert` AFTER INSERT ON `stops`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start_time - 90000000 AND start < ifnull(NEW.end_time, 9007199254740991) AND "end" > NEW.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stops_figures_update`;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_update` AFTER UPDATE ON `stops`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start_time - 90000000 AND start < ifnull(NEW.end_time, 9007199254740991) AND "end" > NEW.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stops_figures_update_old`;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_update_old` AFTER UPDATE ON `stops`
  WHEN (OLD.machine_id IS NOT NEW.machine_id OR OLD.start_time < NEW.start_time
    OR ifnull(OLD.end_time, 9007199254740991) > ifnull(NEW.end_time, 9007199254740991))
    AND NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start_time - 90000000 AND start < ifnull(OLD.end_time, 9007199254740991) AND "end" > OLD.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stops_figures_delete`;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_delete` AFTER DELETE ON `stops`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = OLD.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start_time - 90000000 AND start < ifnull(OLD.end_time, 9007199254740991) AND "end" > OLD.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stop_classifications_figures_insert`;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_insert` AFTER INSERT ON `stop_classifications`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = NEW.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = NEW.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = NEW.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = NEW.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = NEW.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stop_classifications_figures_update`;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_update` AFTER UPDATE ON `stop_classifications`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = NEW.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = NEW.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = NEW.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = NEW.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = NEW.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stop_classifications_figures_update_old`;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_update_old` AFTER UPDATE ON `stop_classifications`
  WHEN (OLD.stop_id IS NOT NEW.stop_id)
    AND NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = NEW.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = OLD.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = OLD.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = OLD.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = OLD.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = OLD.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stop_classifications_figures_delete`;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_delete` AFTER DELETE ON `stop_classifications`
  WHEN NOT EXISTS (SELECT 1 FROM company_moves AS m WHERE m.company_id = OLD.company_id
    AND m.state IN ('receiving', 'removing'))
BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = OLD.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = OLD.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = OLD.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = OLD.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = OLD.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
