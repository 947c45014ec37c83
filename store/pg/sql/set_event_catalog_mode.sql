-- WEBHOOKD_EVENT_TYPES, for webhookd.publish(): written by a server when it starts.
UPDATE event_catalog SET mode = $1 WHERE mode <> $1
