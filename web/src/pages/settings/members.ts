import { invoke } from '../../lib/api';
import { type ListEnvelope, pageQuery } from './list';

export type Role = 'owner' | 'admin' | 'member';
export type Member = { user_id: string; email: string; role: Role; created_at: string };
export type OrgInvitation = {
  id: string;
  email: string;
  role: Role;
  expires_at: string;
  created_at: string;
  status: 'pending' | 'expired';
};

/** Members paged; `invitations` (all open ones) comes only for owners and admins. */
export type Roster = ListEnvelope<Member> & { invitations?: OrgInvitation[] };

export const roster = (page: number) => invoke<Roster>('organization-members', { query: pageQuery(page) });

export const inviteMember = (f: { email: string; role: Role }) =>
  invoke<OrgInvitation>('organization-members', { body: { email: f.email.trim(), role: f.role } });

export const changeRole = (user_id: string, role: Role) =>
  invoke<Member>('organization-members', { method: 'PATCH', body: { user_id, role } });

export const removeMember = (user_id: string) =>
  invoke('organization-members', { method: 'DELETE', body: { user_id } });

export const withdrawInvitation = (invitation_id: string) =>
  invoke('organization-members', { method: 'DELETE', body: { invitation_id } });
