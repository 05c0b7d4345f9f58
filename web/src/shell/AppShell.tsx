import { useState } from 'react';
import { NavLink, Outlet } from 'react-router';
import { canManage } from '../lib/claims';
import { useClaims, useSession } from '../lib/session';
import { OrgSwitcher } from './OrgSwitcher';
import { ReconnectBanner } from './ReconnectBanner';
import { UnreadCount } from './UnreadCount';

/** Where each area lives; `manage` areas are for owners and admins only (and hidden from members). */
const NAV = [
  { to: '/app', label: 'Overview', end: true },
  { to: '/app/contacts', label: 'Contacts' },
  { to: '/app/orders', label: 'Orders' },
  { to: '/app/inventory', label: 'Inventory' },
  { to: '/app/inbox', label: 'Inbox' },
  { to: '/app/social', label: 'Social calendar' },
  { to: '/app/agents', label: 'Agents and keys', manage: true },
  { to: '/app/members', label: 'Members' },
  { to: '/app/accounts', label: 'Connected accounts', manage: true },
  { to: '/app/webhooks', label: 'Webhook deliveries', manage: true },
  { to: '/app/account', label: 'Your account' },
];

export function AppShell() {
  const claims = useClaims();
  const { signOut } = useSession();
  const [open, setOpen] = useState(false);
  const items = NAV.filter((n) => !n.manage || canManage(claims));
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={open}
          aria-controls="nav"
          onClick={() => setOpen(!open)}
        >
          Menu
        </button>
        <span className="brand">svc</span>
        <OrgSwitcher />
        <span className="who">
          {claims.email} <span className="role">{claims.role}</span>
        </span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <nav id="nav" className={open ? 'nav open' : 'nav'} aria-label="Main">
        <ul>
          {items.map((n) => (
            <li key={n.to} className="nav-item">
              <NavLink to={n.to} end={n.end} onClick={() => setOpen(false)}>
                {n.label}
              </NavLink>
              {n.to === '/app/inbox' && <UnreadCount />}
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" className="content">
        <ReconnectBanner />
        <Outlet />
      </main>
    </div>
  );
}
