import { useMutation, useQuery } from '@tanstack/react-query';
import { useForm } from 'react-hook-form';
import { invoke } from '../../lib/api';
import { ErrorNote } from '../../ui/ErrorNote';
import { Field } from '../../ui/Field';

type Settings = { configured: boolean; message: string | null; redirect_url: string; scopes: string[] };

/**
 * "Install on Shopify": the shop owner names their shop, the service starts a single-use state and
 * the browser goes to Shopify to approve the app; Shopify sends it back to ShopifyCallback. Without
 * the app configured on the service, says what its operator must set instead.
 */
export function ShopifyInstall() {
  const settings = useQuery({
    queryKey: ['connect-shopify'],
    queryFn: () => invoke<Settings>('connect-shopify'),
  });
  const { register, handleSubmit } = useForm<{ shop: string }>({ defaultValues: { shop: '' } });
  const start = useMutation({
    mutationFn: (f: { shop: string }) =>
      invoke<{ authorize_url: string }>('connect-shopify/start', { body: { shop: f.shop } }),
    onSuccess: ({ authorize_url }) => window.location.assign(authorize_url),
  });
  if (settings.isPending) return <p>Checking whether Shopify is set up…</p>;
  if (settings.error) return <ErrorNote error={settings.error} />;
  if (!settings.data.configured) return <p>{settings.data.message}</p>;
  return (
    <form className="grid-form" onSubmit={handleSubmit((f) => start.mutate(f))}>
      <Field
        label="Your Shopify shop"
        hint="e.g. my-shop.myshopify.com; Shopify asks you to approve reading your orders"
        required
        {...register('shop')}
      />
      <ErrorNote error={start.error} labels={{ shop: 'Your Shopify shop' }} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={start.isPending || start.isSuccess}>
          Install on Shopify
        </button>
      </div>
    </form>
  );
}
