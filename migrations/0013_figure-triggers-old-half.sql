-- The UPDATE triggers of 0009 forgot the kept figures (instance_figures) the new row's span
-- overlaps and then those the old row's span overlaps, counting the write in machine_writes
-- for each. The realtime object's flush updates its live logs every minute keeping their
-- machine and start while their end grows: the old span lies inside the new one, so the old
-- half found nothing the new half had not already deleted, yet cost an index search and an
-- upsert each time. The old half now runs only when it can reach something the new half does
-- not: the row moved to another machine, or its old span is not inside the new one (a
-- figure overlapping [OLD.start, OLD.end) on the same machine overlaps [NEW.start, NEW.end)
-- when NEW.start <= OLD.start and OLD.end <= NEW.end). An open stop's end (NULL) is the end of
-- time, as in 0009. A classification's span is its stop's, read when the trigger runs, so the
-- old half matters only when the classification moved to another stop. machine_writes only has
-- to grow on every write of a machine (a report compares it with the value it read before),
-- so one count per update is enough when the old half is skipped. See docs/bounded-work.md.
DROP TRIGGER IF EXISTS `production_logs_figures_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stops_figures_update`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `stop_classifications_figures_update`;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_update` AFTER UPDATE ON `production_logs` BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start - 90000000 AND start < NEW."end" AND "end" > NEW.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_update_old` AFTER UPDATE ON `production_logs`
  WHEN OLD.machine_id IS NOT NEW.machine_id OR OLD.start < NEW.start OR OLD."end" > NEW."end"
BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start - 90000000 AND start < OLD."end" AND "end" > OLD.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_update` AFTER UPDATE ON `stops` BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start_time - 90000000 AND start < ifnull(NEW.end_time, 9007199254740991) AND "end" > NEW.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_update_old` AFTER UPDATE ON `stops`
  WHEN OLD.machine_id IS NOT NEW.machine_id OR OLD.start_time < NEW.start_time
    OR ifnull(OLD.end_time, 9007199254740991) > ifnull(NEW.end_time, 9007199254740991)
BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start_time - 90000000 AND start < ifnull(OLD.end_time, 9007199254740991) AND "end" > OLD.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_update` AFTER UPDATE ON `stop_classifications` BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = NEW.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = NEW.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = NEW.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = NEW.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = NEW.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_update_old` AFTER UPDATE ON `stop_classifications`
  WHEN OLD.stop_id IS NOT NEW.stop_id
BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = OLD.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = OLD.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = OLD.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = OLD.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = OLD.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
