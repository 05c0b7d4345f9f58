import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { must } from '../../lib/api';
import { supabase } from '../../lib/supabase';
import { ErrorNote } from '../../ui/ErrorNote';

const STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;

/**
 * A conversation's status, and its unread count reset while it is open on screen (new messages
 * that arrive while it is open are read too). Both are plain /rest/v1 updates: the database
 * allows callers only these two columns, and the count only back to 0 (migration 0026).
 */
export function Triage({ id, status, unread }: { id: string; status: string; unread: number }) {
  const queries = useQueryClient();
  const update = useMutation({
    mutationFn: async (patch: { status?: string; unread_count?: number }) =>
      must(await supabase.from('conversations').update(patch).eq('id', id).select('id').single()),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['inbox'] }),
  });
  const { mutate, isPending } = update;
  useEffect(() => {
    if (unread > 0 && !isPending) mutate({ unread_count: 0 });
  }, [unread, isPending, mutate]);
  return (
    <div className="triage">
      <label>
        Conversation status{' '}
        <select value={status} disabled={isPending} onChange={(e) => mutate({ status: e.target.value })}>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <ErrorNote error={update.error} />
    </div>
  );
}
