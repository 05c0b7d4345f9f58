-- Rows written in one transaction keep the order they were written in, where lists show them in
-- time order: messages (a webhook delivery carrying several) and order status events (an import
-- that walks an order through several statuses). now() is the transaction's start, so such rows
-- tied, and the lists broke the tie by random id; clock time does not tie.
--
-- 0017 already made clock time the messages' created_at default, but the touch trigger (0001)
-- stamps every insert with now() over any default. This one stamps the clock time after it:
-- triggers on the same event fire in the order of their names, and messages_touch comes first.
create or replace function app.stamp_clock_time() returns trigger
language plpgsql
as $$
begin
  new.created_at := clock_timestamp();
  return new;
end $$;

create trigger messages_touch_clock before insert on public.messages
  for each row execute function app.stamp_clock_time();

-- Status events have no touch trigger; app.record_order_status (0007) leaves created_at to it.
alter table public.order_status_events alter column created_at set default clock_timestamp();
