import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef } from 'react';
import { ApiError, invoke } from '../../lib/api';
import { type Conversation, type Message, newKey, SEND_FUNCTION } from './inbox';

export type SendContent =
  | { text: string }
  | { template: { name: string; language: string; components?: Record<string, unknown>[] } };

/**
 * One reply in a conversation through its channel's send function. Each distinct content gets an
 * idempotency key that survives errors: retrying after a lost answer cannot send twice. The key
 * changes once the service recorded a message for it (sent, queued or refused by Meta), since
 * that key now answers with that message.
 */
export function useSend(conversation: Pick<Conversation, 'id' | 'channel'>) {
  const queries = useQueryClient();
  const attempt = useRef<{ content: string; key: string } | null>(null);
  return useMutation({
    mutationFn: async (content: SendContent) => {
      const text = JSON.stringify(content);
      if (attempt.current?.content !== text) attempt.current = { content: text, key: newKey() };
      return invoke<{ message: Message }>(SEND_FUNCTION[conversation.channel], {
        body: { conversation_id: conversation.id, ...content, idempotency_key: attempt.current.key },
      });
    },
    onSuccess: () => {
      attempt.current = null;
    },
    onError: (err) => {
      // 502 provider_error: Meta refused it and the failed message is in the thread already.
      if (err instanceof ApiError && err.status === 502) attempt.current = null;
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ['inbox'] }),
  });
}
