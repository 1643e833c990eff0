INSERT INTO anonsql_suppressed (run_id, class) SELECT :run_id, f.class FROM :frame AS f
