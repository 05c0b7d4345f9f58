import { createBrowserRouter, Navigate, Outlet, type RouteObject } from 'react-router';
import { AuthLayout } from './auth/AuthLayout';
import { CONSENT_KEPT, Consent } from './auth/Consent';
import { InvitationAnswer } from './auth/InvitationAnswer';
import { NewPasswordForm } from './auth/NewPassword';
import { Recover } from './auth/Recover';
import { SignIn } from './auth/SignIn';
import { SignUp } from './auth/SignUp';
import { useSession } from './lib/session';
import { contactRoutes } from './pages/contacts/routes';
import { inboxRoutes } from './pages/inbox/routes';
import { inventoryRoutes } from './pages/inventory/routes';
import { orderRoutes } from './pages/orders/routes';
import { overviewRoutes } from './pages/overview/routes';
import { settingsRoutes } from './pages/settings/routes';
import { socialRoutes } from './pages/social/routes';
import { AppShell } from './shell/AppShell';
import { NoOrganization } from './shell/NoOrganization';
import { Loading } from './ui/Page';

/** Pages for people who are signed out; a signed-in person goes to the app. */
function SignedOut() {
  const { session } = useSession();
  if (session === undefined) return <Loading />;
  // Someone who came from an invitation link goes back to answer it.
  // So does someone who came to connect an MCP client (the consent page).
  const next = sessionStorage.getItem('svc.invitation')
    ? '/invitations'
    : sessionStorage.getItem(CONSENT_KEPT)
      ? '/oauth/consent'
      : '/app';
  return session ? <Navigate to={next} replace /> : <Outlet />;
}

/** The app itself: signed in, in an organization (else the way to get one), not mid-recovery. */
function SignedIn() {
  const { session, claims, recovering } = useSession();
  if (session === undefined) return <Loading />;
  if (!session || !claims) return <Navigate to="/app/sign-in" replace />;
  if (recovering) return <Navigate to="/app/new-password" replace />;
  if (!claims.organizationId) return <NoOrganization />;
  return <AppShell />;
}

function NewPassword() {
  const { session } = useSession();
  if (session === undefined) return <Loading />;
  if (!session) return <Navigate to="/app/recover" replace />;
  return (
    <AuthLayout title="Choose a new password">
      <NewPasswordForm onDone={() => window.location.assign('/app')} />
    </AuthLayout>
  );
}

const routes: RouteObject[] = [
  { path: '/', element: <Navigate to="/app" replace /> },
  {
    element: <SignedOut />,
    children: [
      { path: '/app/sign-in', element: <SignIn /> },
      { path: '/app/sign-up', element: <SignUp /> },
      { path: '/app/recover', element: <Recover /> },
    ],
  },
  { path: '/app/new-password', element: <NewPassword /> },
  // Invitation mails link here (src/domain/invitations.ts invitationLink).
  { path: '/invitations', element: <InvitationAnswer /> },
  // MCP sign-in: src/oauth/routes.ts sends the person here with the client's request.
  { path: '/oauth/consent', element: <Consent /> },
  {
    path: '/app',
    element: <SignedIn />,
    children: [
      ...overviewRoutes,
      ...contactRoutes,
      ...orderRoutes,
      ...inventoryRoutes,
      ...inboxRoutes,
      ...socialRoutes,
      ...settingsRoutes,
      { path: '*', element: <p>There is no such page.</p> },
    ],
  },
];

export const router = createBrowserRouter(routes);
