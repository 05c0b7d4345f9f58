-- Internal events (issue 13, docs/webhooks.md): an `order.status` event posted to
-- internal-webhook speaks for an organization, not for a connected account. Such an event has no
-- account; every other provider's event still names one.
alter table app.webhook_events alter column account_id drop not null;
alter table app.webhook_events add constraint webhook_events_account_present
  check (account_id is not null or provider = 'internal');
