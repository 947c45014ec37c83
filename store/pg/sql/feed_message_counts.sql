-- Each live feed's queued messages for the webhookd_feed_messages gauge: waiting (no
-- lease) and leased (a lease that ended counts until the sweeper ends it). A feed with
-- none shows 0 of each. The queue rows are reached by the index that begins with the
-- destination, so the cost follows the feeds' own rows.
SELECT t.id,
       count(q.id) FILTER (WHERE q.claim_token IS NULL),
       count(q.id) FILTER (WHERE q.claim_token IS NOT NULL)
  FROM destinations t
  LEFT JOIN delivery_queue q ON q.destination_id = t.id
 WHERE t.url = 'feed:' AND t.deleted_at IS NULL
 GROUP BY t.id
 ORDER BY t.id
