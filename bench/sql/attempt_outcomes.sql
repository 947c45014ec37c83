-- scripts/bench: attempts by outcome and error, for a note when counts disagree.
SELECT outcome, left(error, 80), count(*) FROM attempts GROUP BY 1, 2;
