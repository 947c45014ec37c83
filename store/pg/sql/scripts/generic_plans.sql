-- For the hot batch statements, whose re-planning on every call cost as much as running
-- them; not for the list queries, whose optional filters need a plan made for the
-- arguments given.
SET plan_cache_mode = force_generic_plan
