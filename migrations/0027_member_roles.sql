-- Owners and admins change a member's role (organization-members PATCH). The policy
-- members_update (0004) already limits it to them in their current organization, and
-- app.guard_owners to owners where an owner is made or unmade, never the last owner; only the
-- grant was missing, and only the role column is granted.
grant update (role) on public.organization_members to authenticated;
