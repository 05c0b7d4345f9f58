import { createClient } from '@supabase/supabase-js';

/** The anon key the service embeds in its page as data (src/dashboard/routes.ts). */
export function anonKey(): string {
  const text = document.getElementById('svc-config')?.textContent;
  if (!text) throw new Error('The page carries no service configuration');
  return (JSON.parse(text) as { anonKey: string }).anonKey;
}

/**
 * The one API client: the service's public surfaces at this page's own origin (auth, /rest/v1,
 * functions, storage), as any supabase-js application would use them.
 */
export const supabase = createClient(window.location.origin, anonKey(), {
  auth: { persistSession: true, autoRefreshToken: true, detectSessionInUrl: true, flowType: 'implicit' },
});
