import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { useSearchParams } from 'react-router';
import { invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field, Select } from '../../ui/Field';
import { connectError } from './connect-errors';

type Provider = 'whatsapp' | 'facebook' | 'instagram' | 'shopify';
type Form = {
  provider: Provider;
  external_id: string;
  name: string;
  access_token: string;
  webhook_secret: string;
};

/** What `external_id` is for each provider (the connected-accounts function's description). */
const EXTERNAL_ID: Record<Provider, { label: string; hint: string }> = {
  whatsapp: { label: 'Phone number id', hint: 'The WhatsApp Business phone number id from Meta' },
  facebook: { label: 'Page id', hint: 'The Facebook Page id' },
  instagram: { label: 'Instagram account id', hint: 'The Instagram professional account id' },
  shopify: { label: 'Shop domain', hint: 'e.g. my-shop.myshopify.com' },
};

const LABELS = {
  external_id: 'Account id',
  name: 'Display name',
  access_token: 'Access token',
  webhook_secret: 'Webhook secret',
};

const blankToUndefined = (s: string) => s.trim() || undefined;

/**
 * Connects an account. Secrets are write-only: the inputs are password fields, cleared after a
 * success and never filled from the service (which never returns them).
 */
export function ConnectAccountForm() {
  const queries = useQueryClient();
  // The reconnect banner links here with its account's provider chosen.
  const [search] = useSearchParams();
  const asked = search.get('provider');
  const preselected: Provider = asked && asked in EXTERNAL_ID ? (asked as Provider) : 'whatsapp';
  const { register, handleSubmit, reset, watch } = useForm<Form>({
    defaultValues: { provider: preselected, external_id: '', name: '', access_token: '', webhook_secret: '' },
  });
  const provider = watch('provider');
  const connect = useMutation({
    mutationFn: (f: Form) =>
      invoke<{ provider: string; external_id: string }>('connected-accounts', {
        body: {
          provider: f.provider,
          external_id: f.external_id.trim(),
          name: blankToUndefined(f.name),
          access_token: f.access_token,
          webhook_secret: blankToUndefined(f.webhook_secret),
        },
      }),
    onSuccess: async () => {
      reset();
      await queries.invalidateQueries({ queryKey: ['connected-accounts'] });
    },
  });
  return (
    <form className="grid-form" onSubmit={handleSubmit((f) => connect.mutate(f))}>
      <Select label="Provider" {...register('provider')}>
        <option value="whatsapp">WhatsApp</option>
        <option value="facebook">Facebook Page</option>
        <option value="instagram">Instagram</option>
        <option value="shopify">Shopify</option>
      </Select>
      <Field
        label={EXTERNAL_ID[provider].label}
        hint={EXTERNAL_ID[provider].hint}
        required
        {...register('external_id')}
      />
      <Field label="Display name" hint="Optional" {...register('name')} />
      <Field label="Access token" type="password" autoComplete="off" required {...register('access_token')} />
      <Field
        label="Webhook secret"
        type="password"
        autoComplete="off"
        hint={
          provider === 'shopify'
            ? 'Required: the Shopify app’s secret'
            : 'Optional: the app secret that signs webhooks'
        }
        {...register('webhook_secret')}
      />
      <ErrorNote error={connectError(connect.error)} labels={LABELS} />
      {connect.isSuccess && (
        <p role="status">
          Connected {connect.data.provider} {connect.data.external_id}.
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={connect.isPending}>
          Connect account
        </button>
      </div>
    </form>
  );
}
