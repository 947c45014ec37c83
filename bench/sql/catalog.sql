-- scripts/bench's schema case: the event type order.created in the catalog, with a JSON
-- Schema (draft 7) of 20 properties when :schema is true, else with none, and the
-- posted payload as its one example. The schema is what a shop would write: strings,
-- integers, numbers and booleans, five required, enums, a pattern, a date-time format,
-- bounds, a nested object and an array of objects; the payload is valid against it
-- (ingest answers 422 otherwise, which the script counts as failed requests).
-- Variables: schema (true or false), payload (the JSON object that bench_load posts).
INSERT INTO event_types (name, description, schema, examples)
VALUES ('order.created', 'An order was placed.',
        CASE WHEN :schema THEN '{
  "type": "object",
  "required": ["id", "amount", "currency", "created_at", "items"],
  "properties": {
    "id": {"type": "string", "pattern": "^ord_[0-9]{1,12}$"},
    "amount": {"type": "number", "minimum": 0, "maximum": 1000000},
    "currency": {"enum": ["EUR", "USD", "GBP", "CHF", "JPY"]},
    "status": {"enum": ["pending", "paid", "refunded", "cancelled"]},
    "customer": {"type": "string", "minLength": 1, "maxLength": 64},
    "email": {"type": "string", "maxLength": 254},
    "created_at": {"type": "string", "format": "date-time"},
    "quantity": {"type": "integer", "minimum": 1, "maximum": 1000},
    "paid": {"type": "boolean"},
    "test": {"type": "boolean"},
    "tax": {"type": "number", "minimum": 0},
    "discount": {"type": "number", "minimum": 0, "maximum": 100},
    "channel": {"type": "string", "maxLength": 16},
    "country": {"type": "string", "minLength": 2, "maxLength": 2},
    "note": {"type": "string", "maxLength": 500},
    "version": {"type": "integer", "minimum": 1},
    "priority": {"type": "integer", "minimum": 0, "maximum": 9},
    "shipping": {
      "type": "object",
      "required": ["method"],
      "properties": {
        "method": {"enum": ["std", "express", "pickup"]},
        "cost": {"type": "number", "minimum": 0},
        "zip": {"type": "string", "maxLength": 10}
      }
    },
    "items": {
      "type": "array",
      "minItems": 1,
      "maxItems": 100,
      "items": {
        "type": "object",
        "required": ["sku", "qty"],
        "properties": {
          "sku": {"type": "string", "maxLength": 32},
          "qty": {"type": "integer", "minimum": 1},
          "price": {"type": "number", "minimum": 0}
        }
      }
    },
    "tags": {"type": "array", "maxItems": 10, "items": {"type": "string"}}
  }
}'::jsonb END,
        jsonb_build_array(:'payload'::jsonb));
