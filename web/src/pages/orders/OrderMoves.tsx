import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';
import { MOVE_LABELS, NEXT_STATUSES, type OrderStatus, STOCK_NOTES } from './lifecycle';

/**
 * The buttons for exactly the moves the lifecycle allows from `status`. The move is a PATCH of
 * `status` on /rest/v1: the database checks it (409 invalid_transition in its own words), moves
 * the stock and writes the history row with the person as actor.
 */
export function OrderMoves({ orderId, status }: { orderId: string; status: OrderStatus }) {
  const queries = useQueryClient();
  const move = useMutation({
    mutationFn: async (to: OrderStatus) => {
      const rows = must(
        await supabase.from('orders').update({ status: to }).eq('id', orderId).select('id, status'),
      );
      if (rows.length === 0) throw new ApiError('This order is no longer in this organization');
      return rows;
    },
    // After a refusal too: the order may have moved elsewhere, and the buttons should say so.
    onSettled: () => queries.invalidateQueries({ queryKey: ['order', orderId] }),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['orders'] }),
  });
  const next = NEXT_STATUSES[status] ?? [];
  return (
    <section aria-labelledby="order-moves" className="panel">
      <h2 id="order-moves">Next steps</h2>
      {next.length === 0 ? (
        <p className="empty">This order is {status}: it moves no further.</p>
      ) : (
        <>
          <div className="moves">
            {next.map((to) => (
              <button
                key={to}
                type="button"
                className={to === 'cancelled' ? 'danger' : 'primary'}
                disabled={move.isPending}
                onClick={() => move.mutate(to)}
              >
                {MOVE_LABELS[to]}
              </button>
            ))}
          </div>
          <p className="hint">
            {next
              .map((to) => STOCK_NOTES[to])
              .filter(Boolean)
              .join(' ')}
          </p>
        </>
      )}
      <ErrorNote error={move.error} />
      {move.isSuccess && <p role="status">Moved to {move.variables}.</p>}
    </section>
  );
}
