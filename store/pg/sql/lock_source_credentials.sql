-- Up to $2 sources after id $1 (deleted ones too), locked against a concurrent change,
-- with the secrets they store.
SELECT id, secret, previous_secret
  FROM sources
 WHERE id > $1
 ORDER BY id
 LIMIT $2
   FOR UPDATE
