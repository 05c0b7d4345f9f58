import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { must } from '../../lib/api';
import { date } from '../../lib/format';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import { Loading, Page } from '../../ui/Page';
import { ItemForm } from './ItemForm';
import { ItemStatus } from './ItemStatus';
import { ITEM_COLUMNS, type Item, type ItemInput, toForm, toRow } from './item';
import { ItemBadges, StockFigures } from './StockCells';
import '../orders/orders.css';

export function ItemPage() {
  const id = useParams().id ?? '';
  const queries = useQueryClient();
  const item = useQuery({
    queryKey: ['inventory', 'item', id],
    queryFn: async () =>
      must(
        await supabase.from('inventory_items').select(ITEM_COLUMNS).eq('id', id).maybeSingle(),
      ) as Item | null,
  });
  const save = useMutation({
    mutationFn: async (f: ItemInput) =>
      must(await supabase.from('inventory_items').update(toRow(f)).eq('id', id).select('id').single()),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['inventory'] }),
  });

  if (item.isPending) return <Loading />;
  const i = item.data;
  if (!i) return <ErrorNote error={item.error ?? new Error('There is no such item in this organization')} />;
  return (
    <Page title={i.name} actions={<ItemStatus item={i} />}>
      <p className="meta">
        <ItemBadges item={i} /> · added {date(i.created_at)}
        {i.auto_created && ' · created by an order for review: check its name, SKU and price'}
      </p>
      <div className="order-grid">
        <section className="panel" aria-labelledby="item-stock">
          <h2 id="item-stock">Stock</h2>
          <StockFigures item={i} />
        </section>
        <section className="panel" aria-labelledby="item-details">
          <h2 id="item-details">Details</h2>
          <ItemForm
            key={i.updated_at}
            initial={toForm(i)}
            submitLabel="Save changes"
            pending={save.isPending}
            error={save.error}
            onSubmit={(f) => save.mutate(f)}
          />
          {save.isSuccess && <p role="status">Saved.</p>}
        </section>
      </div>
    </Page>
  );
}
