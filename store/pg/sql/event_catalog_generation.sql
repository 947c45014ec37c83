SELECT generation FROM event_catalog
