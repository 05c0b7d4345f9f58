import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { must } from '../lib/api';
import { canManage } from '../lib/claims';
import { useClaims } from '../lib/session';
import { supabase } from '../lib/supabase';

// Above every page of the app (the inbox and social pages included, where sends and posts on such
// an account fail): each connected account whose token stopped working, the provider's reason in
// a sentence, and a way to connect it again. The connection check and failed sends set the state
// (docs/conversations.md "Connection health").

type Flagged = {
  id: string;
  provider: string;
  external_id: string;
  name: string | null;
  needs_reconnect_reason: string | null;
};

const PROVIDER_NAMES: Record<string, string> = {
  whatsapp: 'WhatsApp',
  facebook: 'Facebook',
  instagram: 'Instagram',
  shopify: 'Shopify',
};

const needingReconnect = async () =>
  must(
    await supabase
      .from('connected_accounts')
      .select('id, provider, external_id, name, needs_reconnect_reason')
      .eq('status', 'needs_reconnect')
      .order('created_at')
      .range(0, 19),
  ) as Flagged[];

export function ReconnectBanner() {
  const claims = useClaims();
  // Under the accounts page's key: a connect or disconnect there refreshes the banner too.
  const flagged = useQuery({
    queryKey: ['connected-accounts', 'needs-reconnect', claims.organizationId],
    queryFn: needingReconnect,
    refetchInterval: 5 * 60_000,
  });
  if (!flagged.data?.length) return null;
  const manager = canManage(claims);
  return (
    <section className="reconnect-banner" aria-label="Accounts to connect again">
      {flagged.data.map((a) => {
        const provider = PROVIDER_NAMES[a.provider] ?? a.provider;
        return (
          <div key={a.id} className="reconnect-item" role="alert">
            <p>
              <strong>
                The {provider} account {a.name ?? a.external_id} needs to be connected again.
              </strong>{' '}
              Nothing is sent or posted through it until then.{' '}
              {a.needs_reconnect_reason ?? 'Its token stopped working.'}
            </p>
            {manager ? (
              <Link
                className="button primary"
                to={`/app/accounts?provider=${encodeURIComponent(a.provider)}`}
                aria-label={`Reconnect ${provider} account ${a.name ?? a.external_id}`}
              >
                Reconnect
              </Link>
            ) : (
              <p>An owner or admin can connect it again.</p>
            )}
          </div>
        );
      })}
    </section>
  );
}
