/** What the dashboard reads from a person's access token (spec 2.5). */
export type Claims = {
  userId: string;
  email: string;
  organizationId: string | null;
  role: 'owner' | 'admin' | 'member' | null;
};

export function readClaims(accessToken: string): Claims {
  const payload = accessToken.split('.')[1] ?? '';
  const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as {
    sub: string;
    email?: string;
    app_metadata?: { organization_id?: string; org_id?: string; org_role?: Claims['role'] };
  };
  const meta = json.app_metadata ?? {};
  return {
    userId: json.sub,
    email: json.email ?? '',
    organizationId: meta.organization_id ?? meta.org_id ?? null,
    role: meta.org_role ?? null,
  };
}

/** Owners and admins manage keys, members, accounts and webhooks; members do the daily work. */
export const canManage = (c: Claims) => c.role === 'owner' || c.role === 'admin';
