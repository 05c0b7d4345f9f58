import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import type { Connected, FacebookPage, PopupResult, Returned, SignIn } from './meta-sign-in';

const TITLES: Record<SignIn, string> = {
  facebook: 'Connect with Facebook',
  whatsapp: 'Connect WhatsApp',
  instagram: 'Connect Instagram',
};

const connectedSentence = (c: Connected) =>
  `Connected ${c.accounts.map((a) => a.name ?? a.external_id).join(', ')}.`;

/**
 * Where Meta and Instagram send the browser back (/app/accounts/connect/{provider}): hands the
 * code and state to the service once. Facebook then shows the Pages to pick; Instagram is done;
 * WhatsApp's popup passes them to the page that opened it and closes.
 */
export function ConnectCallbackPage() {
  const provider = useParams().provider as SignIn;
  const [params] = useSearchParams();
  const returned: Returned = {
    state: params.get('state') ?? '',
    ...(params.get('code')
      ? { code: params.get('code') as string }
      : { error: params.get('error') ?? 'access_denied' }),
  };
  const queries = useQueryClient();
  const finish = useMutation({
    mutationFn: () =>
      invoke<Connected | { state: string | null; pages: FacebookPage[] }>(`connect-${provider}`, {
        body: returned,
      }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['connected-accounts'] }),
  });
  // A state works once: post it once, even when React runs the effect twice.
  const sent = useRef(false);
  const toOpener = provider === 'whatsapp' && window.opener && window.opener !== window;
  useEffect(() => {
    if (sent.current || !TITLES[provider]) return;
    sent.current = true;
    if (!toOpener) {
      if (provider !== 'whatsapp') finish.mutate();
      return;
    }
    const message: PopupResult = { type: 'svc-connect', provider, ...returned };
    (window.opener as Window).postMessage(message, window.location.origin);
    window.close();
  });

  if (!TITLES[provider]) return <p>There is no such page.</p>;
  const back = <Link to="/app/accounts">Back to connected accounts</Link>;
  if (provider === 'whatsapp')
    return (
      <Page title={TITLES.whatsapp}>
        <p role="status">
          {toOpener
            ? 'Finishing in the window that opened this one…'
            : 'WhatsApp signup finishes in the window that opened it: start again from Connected accounts.'}
        </p>
        {back}
      </Page>
    );
  return (
    <Page title={TITLES[provider]}>
      {finish.isPending || finish.isIdle ? <Loading /> : null}
      <ErrorNote error={finish.error} />
      {finish.data && 'accounts' in finish.data && <p role="status">{connectedSentence(finish.data)}</p>}
      {finish.data && 'pages' in finish.data && (
        <PagePicker state={finish.data.state} pages={finish.data.pages} />
      )}
      <p>{back}</p>
    </Page>
  );
}

/** The Pages and Instagram accounts the sign-in granted; the person ticks what to connect. */
function PagePicker({ state, pages }: { state: string | null; pages: FacebookPage[] }) {
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const queries = useQueryClient();
  const select = useMutation({
    mutationFn: () =>
      invoke<Connected>('connect-facebook-select', {
        body: {
          state,
          page_ids: pages.filter((p) => picked.has(`page:${p.id}`)).map((p) => p.id),
          instagram_ids: pages.flatMap((p) =>
            p.instagram && picked.has(`ig:${p.instagram.id}`) ? [p.instagram.id] : [],
          ),
        },
      }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['connected-accounts'] }),
  });
  if (!state || pages.length === 0)
    return (
      <p role="alert" className="error">
        Facebook gave this sign-in no Pages to connect. Connect again and, at Facebook, choose at least one
        Page (and its Instagram account) to share.
      </p>
    );
  if (select.data) return <p role="status">{connectedSentence(select.data)}</p>;
  const toggle = (key: string) =>
    setPicked((old) => {
      const next = new Set(old);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  return (
    <form
      className="grid-form"
      onSubmit={(e) => {
        e.preventDefault();
        select.mutate();
      }}
    >
      <fieldset className="scopes">
        <legend>Choose what to connect</legend>
        {pages.flatMap((p) => [
          <label key={`page:${p.id}`}>
            <input
              type="checkbox"
              checked={picked.has(`page:${p.id}`)}
              onChange={() => toggle(`page:${p.id}`)}
            />
            Facebook Page {p.name}
          </label>,
          ...(p.instagram
            ? [
                <label key={`ig:${p.instagram.id}`}>
                  <input
                    type="checkbox"
                    checked={picked.has(`ig:${p.instagram.id}`)}
                    onChange={() => toggle(`ig:${p.instagram?.id}`)}
                  />
                  Instagram {p.instagram.username ? `@${p.instagram.username}` : p.instagram.id} (through{' '}
                  {p.name})
                </label>,
              ]
            : []),
        ])}
      </fieldset>
      <ErrorNote error={select.error} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={picked.size === 0 || select.isPending}>
          Connect selected
        </button>
      </div>
    </form>
  );
}
