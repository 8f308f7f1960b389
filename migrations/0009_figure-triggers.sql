-- Kept figures of closed shift instances (instance_figures) are forgotten when a production
-- log, stop or stop classification overlapping them is written, whatever writes it (public
-- API, realtime flush, operator API, seed), and every such write is counted per machine
-- (machine_writes) so that a report never keeps figures computed from records that changed
-- meanwhile. An open stop reaches to the end of time. See docs/bounded-work.md.
CREATE TRIGGER `production_logs_figures_insert` AFTER INSERT ON `production_logs` BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start - 90000000 AND start < NEW."end" AND "end" > NEW.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_insert` AFTER INSERT ON `stops` BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start_time - 90000000 AND start < ifnull(NEW.end_time, 9007199254740991) AND "end" > NEW.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_insert` AFTER INSERT ON `stop_classifications` BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = NEW.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = NEW.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = NEW.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = NEW.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = NEW.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_update` AFTER UPDATE ON `production_logs` BEGIN
  DELETE FROM instance_figures WHERE machine_id = NEW.machine_id
    AND start > NEW.start - 90000000 AND start < NEW."end" AND "end" > NEW.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (NEW.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
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
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = OLD.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = OLD.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = OLD.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = OLD.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = OLD.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `production_logs_figures_delete` AFTER DELETE ON `production_logs` BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start - 90000000 AND start < OLD."end" AND "end" > OLD.start;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stops_figures_delete` AFTER DELETE ON `stops` BEGIN
  DELETE FROM instance_figures WHERE machine_id = OLD.machine_id
    AND start > OLD.start_time - 90000000 AND start < ifnull(OLD.end_time, 9007199254740991) AND "end" > OLD.start_time;
  INSERT INTO machine_writes (machine_id, count) VALUES (OLD.machine_id, 1)
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `stop_classifications_figures_delete` AFTER DELETE ON `stop_classifications` BEGIN
  DELETE FROM instance_figures WHERE machine_id = (SELECT machine_id FROM stops WHERE id = OLD.stop_id)
    AND start > (SELECT start_time FROM stops WHERE id = OLD.stop_id) - 90000000
    AND start < (SELECT ifnull(end_time, 9007199254740991) FROM stops WHERE id = OLD.stop_id)
    AND "end" > (SELECT start_time FROM stops WHERE id = OLD.stop_id);
  INSERT INTO machine_writes (machine_id, count) SELECT s.machine_id, 1 FROM stops AS s WHERE s.id = OLD.stop_id AND true
    ON CONFLICT (machine_id) DO UPDATE SET count = count + 1;
END;
