import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { ApiError, must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';

/**
 * Owners and admins may delete orders (members may not: the delete policy of migrations/0004,
 * can_delete()). Asks once more before it goes; a confirmed or processing order gives its stock
 * reservation back (orders_release_on_delete).
 */
export function DeleteOrder({ id, number }: { id: string; number: string }) {
  const [asking, setAsking] = useState(false);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const remove = useMutation({
    mutationFn: async () => {
      const rows = must(await supabase.from('orders').delete().eq('id', id).select('id'));
      // Row-level security hides what a caller may not delete: nothing deleted, no error.
      if (rows.length === 0)
        throw new ApiError('This order was not deleted: only owners and admins may delete orders');
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['orders'] });
      navigate('/app/orders');
    },
  });
  if (!asking)
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        Delete order
      </button>
    );
  return (
    <div className="actions">
      <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
        Delete {number} for good
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
      <ErrorNote error={remove.error} />
    </div>
  );
}
