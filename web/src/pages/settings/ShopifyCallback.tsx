import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import { Link } from 'react-router';
import { invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import { Page } from '../../ui/Page';

type Connected = { external_id: string; name: string | null };

/**
 * Where Shopify sends the browser back after "Install" (the app's redirection URL). Hands the
 * query, as Shopify sent it, to the service once, which checks it and connects the shop; the
 * address bar is cleared so a reload does not send it again.
 */
export function ShopifyCallback() {
  const sent = useRef(false);
  const finish = useMutation({
    mutationFn: (query: Record<string, string>) =>
      invoke<Connected>('connect-shopify/callback', { body: { query } }),
  });
  useEffect(() => {
    if (sent.current) return;
    sent.current = true;
    const query = Object.fromEntries(new URLSearchParams(window.location.search));
    window.history.replaceState(null, '', window.location.pathname);
    finish.mutate(query);
  }, [finish]);
  return (
    <Page title="Install on Shopify">
      {finish.isPending && <p role="status">Connecting your shop…</p>}
      {finish.isSuccess && (
        <p role="status">
          Connected {finish.data.name ?? finish.data.external_id} ({finish.data.external_id}). Its new and
          updated orders will arrive here.
        </p>
      )}
      <ErrorNote error={finish.error} />
      <p>
        <Link to="/app/accounts">Back to connected accounts</Link>
      </p>
    </Page>
  );
}
