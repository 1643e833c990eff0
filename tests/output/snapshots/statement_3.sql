ANONYMIZE TABLE "x""; DROP TABLE t; --" INTO "select" WITH (qi = ("a b", "from"), k = 2)
