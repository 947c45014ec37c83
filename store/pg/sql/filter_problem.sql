-- Why $1 may not be a destination's filter, NULL when it may (store/pg/schema/filter_problem.sql).
SELECT filter_problem($1)
