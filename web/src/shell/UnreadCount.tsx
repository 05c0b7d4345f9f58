import { useQuery } from '@tanstack/react-query';
import { useLive } from '../lib/live';
import { supabase } from '../lib/supabase';

/**
 * Beside the navigation's Inbox: how many conversations have unread messages, kept current by
 * /realtime/v1 (a new message moves its conversation's unread count). Nothing when none.
 */
export function UnreadCount() {
  useLive([{ table: 'conversations' }], ['inbox', 'unread']);
  const unread = useQuery({
    queryKey: ['inbox', 'unread'],
    queryFn: async () => {
      const { count, error } = await supabase
        .from('conversations')
        .select('id', { count: 'exact', head: true })
        .gt('unread_count', 0);
      if (error) throw error;
      return count ?? 0;
    },
  });
  if (!unread.data) return null;
  return (
    <span className="nav-count">
      {unread.data}
      <span className="visually-hidden">
        {unread.data === 1 ? ' conversation' : ' conversations'} with unread messages
      </span>
    </span>
  );
}
