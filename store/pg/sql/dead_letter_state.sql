SELECT x.replayed_at IS NOT NULL, t.deleted_at IS NOT NULL
  FROM dead_letters x JOIN destinations t ON t.id = x.destination_id WHERE x.id = $1
