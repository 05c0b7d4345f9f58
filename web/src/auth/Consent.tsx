import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { ApiError } from '../lib/api';
import { useSession } from '../lib/session';
import { ErrorNote } from '../ui/ErrorNote';
import { Loading } from '../ui/Page';
import { AuthLayout } from './AuthLayout';

// MCP sign-in (issue 31, docs/mcp-oauth.md): the authorization server sends the person here with
// the client's authorization request in the query. They see who asks and where the answer goes,
// pick the organization (those they own or administer) and the scopes (those its plan gives
// agents), and allow or deny; the service answers with the client's redirect, followed at once.

/** Kept in this tab while the person signs in (SignedOut sends them back here). */
export const CONSENT_KEPT = 'svc.oauth-consent';

type Organization = { id: string; name: string; role: string; plan_name: string; mcp_scopes: string[] };
type Described = {
  client_id: string;
  client_name: string;
  redirect_host: string;
  scopes_requested: string[];
  scopes: { scope: string; allows: string }[];
  organizations: Organization[];
};

function readRequest(): Record<string, string> {
  if (window.location.search) {
    sessionStorage.setItem(CONSENT_KEPT, window.location.search);
    return Object.fromEntries(new URLSearchParams(window.location.search));
  }
  return Object.fromEntries(new URLSearchParams(sessionStorage.getItem(CONSENT_KEPT) ?? ''));
}

async function post<T>(path: string, token: string, body: unknown): Promise<T> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    // A request the client got wrong goes back to it, as OAuth says.
    if (json.redirect_to) window.location.assign(json.redirect_to);
    throw new ApiError(
      json.error_description ?? json.message ?? `The service answered ${res.status}`,
      res.status,
    );
  }
  return json as T;
}

function Decision({
  token,
  params,
  described,
}: {
  token: string;
  params: Record<string, string>;
  described: Described;
}) {
  const [orgId, setOrgId] = useState(described.organizations[0]?.id ?? '');
  const org = described.organizations.find((o) => o.id === orgId);
  const offered = described.scopes.filter((s) => described.scopes_requested.includes(s.scope));
  const [chosen, setChosen] = useState<string[]>(described.scopes_requested);
  const decide = useMutation({
    mutationFn: (approve: boolean) =>
      post<{ redirect_to: string }>('/oauth/authorize/decision', token, {
        params,
        approve,
        organization_id: orgId,
        scopes: chosen.filter((s) => org?.mcp_scopes.includes(s)),
      }),
    onSuccess: ({ redirect_to }) => {
      sessionStorage.removeItem(CONSENT_KEPT);
      window.location.assign(redirect_to);
    },
  });
  if (described.organizations.length === 0) {
    return (
      <p>Only an owner or admin of an organization can connect an app to it, and you are neither in any.</p>
    );
  }
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        decide.mutate(true);
      }}
    >
      <p>
        <strong>{described.client_name}</strong> wants to use this service’s MCP server for you. It will be
        sent back to <strong>{described.redirect_host}</strong>.
      </p>
      <label>
        Organization
        <select value={orgId} onChange={(e) => setOrgId(e.target.value)}>
          {described.organizations.map((o) => (
            <option key={o.id} value={o.id}>
              {o.name} ({o.plan_name})
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>What it may do</legend>
        {offered.map(({ scope, allows }) => {
          const onPlan = org?.mcp_scopes.includes(scope) ?? false;
          return (
            <label key={scope}>
              <input
                type="checkbox"
                name="scope"
                value={scope}
                disabled={!onPlan}
                checked={onPlan && chosen.includes(scope)}
                onChange={(e) =>
                  setChosen((c) => (e.target.checked ? [...c, scope] : c.filter((x) => x !== scope)))
                }
              />
              {scope}: {allows}
              {!onPlan && <small className="hint"> (not on the {org?.plan_name} plan)</small>}
            </label>
          );
        })}
      </fieldset>
      <p className="hint">
        It counts as an agent of the organization. Owners and admins see it under Settings → Agents and keys
        as a connected app, and can revoke it there.
      </p>
      <ErrorNote error={decide.error} />
      <div className="actions">
        <button type="submit" disabled={decide.isPending}>
          Allow
        </button>
        <button
          type="button"
          className="secondary"
          disabled={decide.isPending}
          onClick={() => decide.mutate(false)}
        >
          Deny
        </button>
      </div>
    </form>
  );
}

export function Consent() {
  const { session } = useSession();
  const [params] = useState(readRequest);
  const token = session?.access_token ?? '';
  const described = useQuery({
    queryKey: ['oauth-consent', params.client_id, token],
    queryFn: () => post<Described>('/oauth/authorize/describe', token, { params }),
    enabled: !!session && !!params.client_id,
    retry: false,
  });
  if (!params.client_id)
    return <AuthLayout title="Connect an app">{<p>This link carries no request.</p>}</AuthLayout>;
  if (session === undefined) return <Loading />;
  if (!session) {
    return (
      <AuthLayout title="Connect an app">
        <p>Sign in to decide whether an app may use your organization’s data; you come back here.</p>
        <p>
          <Link to="/app/sign-in">Sign in</Link>
        </p>
      </AuthLayout>
    );
  }
  return (
    <AuthLayout title="Connect an app">
      {described.isPending ? (
        <Loading />
      ) : described.data ? (
        <Decision token={token} params={params} described={described.data} />
      ) : (
        <ErrorNote error={described.error} />
      )}
    </AuthLayout>
  );
}
