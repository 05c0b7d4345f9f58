import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import type { Item } from './item';

type Status = Item['status'];

/**
 * Review, archive and restore are status changes (`status` ∈ active/draft/archived; members may
 * make them too: docs/data-model.md). An archived item stays linked to the order lines that name it.
 */
const ACTIONS: Record<Status, { to: Status; label: string; className?: string }[]> = {
  draft: [
    { to: 'active', label: 'Approve item', className: 'primary' },
    { to: 'archived', label: 'Archive item', className: 'danger' },
  ],
  active: [{ to: 'archived', label: 'Archive item', className: 'danger' }],
  archived: [{ to: 'active', label: 'Restore item', className: 'primary' }],
};

export function ItemStatus({ item }: { item: Item }) {
  const queries = useQueryClient();
  const change = useMutation({
    mutationFn: async (to: Status) => {
      const rows = must(
        await supabase.from('inventory_items').update({ status: to }).eq('id', item.id).select('id'),
      );
      if (rows.length === 0) throw new ApiError('This item is no longer in this organization');
      return to;
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ['inventory'] }),
  });
  return (
    <div>
      <div className="actions">
        {ACTIONS[item.status].map((a) => (
          <button
            key={a.to}
            type="button"
            className={a.className}
            disabled={change.isPending}
            onClick={() => change.mutate(a.to)}
          >
            {a.label}
          </button>
        ))}
      </div>
      <ErrorNote error={change.error} />
    </div>
  );
}
