-- Events already sent keep their type; webhookd's own types stay.
DELETE FROM event_types WHERE name = $1 AND NOT builtin RETURNING name
