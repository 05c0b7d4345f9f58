// What a signed-in person needs when the organization's daily API-call quota is used up, to see
// what happened and to leave the situation: who they are, the organization, its plan, usage and
// billing, the upgrade, another organization. These calls still count against the quota but are
// never refused by it (docs/decisions.md, "What counts against api_calls_per_day"); /auth/v1's
// signed-in endpoints are all of this kind (src/auth/routes.ts).

/** /functions/v1 names counted but never refused by the daily quota. */
export const ACCOUNT_FUNCTIONS: ReadonlySet<string> = new Set([
  'agent-usage',
  'billing',
  'billing-checkout',
  'billing-portal',
  'organization-switch',
]);

/** Tables whose reads (GET, HEAD) on /rest/v1 are counted but never refused: the organization picker and plan. */
export const ACCOUNT_TABLES: ReadonlySet<string> = new Set([
  'organizations',
  'plans',
  'organization_members',
]);
