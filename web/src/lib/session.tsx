import type { Session } from '@supabase/supabase-js';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useContext, useEffect, useState } from 'react';
import { invoke } from './api';
import { type Claims, readClaims } from './claims';
import { supabase } from './supabase';

type SessionState = {
  /** undefined while the stored session is read; null when signed out. */
  session: Session | null | undefined;
  claims: Claims | null;
  /** Set when the person arrived through a password-recovery link. */
  recovering: boolean;
  switchOrganization(organizationId: string): Promise<void>;
  signOut(): Promise<void>;
};

const SessionContext = createContext<SessionState | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queries = useQueryClient();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [recovering, setRecovering] = useState(false);
  useEffect(() => {
    const { data } = supabase.auth.onAuthStateChange((event, next) => {
      if (event === 'PASSWORD_RECOVERY') setRecovering(true);
      if (event === 'USER_UPDATED') setRecovering(false);
      setSession(next);
    });
    return () => data.subscription.unsubscribe();
  }, []);

  const value: SessionState = {
    session,
    claims: session ? readClaims(session.access_token) : null,
    recovering,
    async switchOrganization(organizationId) {
      // The new session's claims name the organization; nothing read in the old one may show.
      const next = await invoke<{ access_token: string; refresh_token: string }>('organization-switch', {
        body: { organization_id: organizationId },
      });
      await supabase.auth.setSession(next);
      queries.clear();
    },
    async signOut() {
      await supabase.auth.signOut();
      queries.clear();
    },
  };
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

/** For pages inside the signed-in shell, where claims always exist. */
export function useClaims(): Claims {
  const { claims } = useSession();
  if (!claims) throw new Error('useClaims outside the signed-in shell');
  return claims;
}
