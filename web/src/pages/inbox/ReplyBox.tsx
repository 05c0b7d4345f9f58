import { useEffect, useId, useState } from 'react';
import { useForm } from 'react-hook-form';
import { dateTime } from '../../lib/format';
import { ErrorNote } from '../../ui/ErrorNote';
import { type Conversation, replyWindow } from './inbox';
import { TemplateForm } from './TemplateForm';
import { useSend } from './useSend';

/** The clock, ticking each `ms`: a window closes while the page is open. */
function useNow(ms: number) {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/**
 * Free text inside the messaging window; outside it the text box is disabled with the reason
 * and, on WhatsApp, an approved template goes instead (also offered inside the window).
 */
export function ReplyBox({ conversation }: { conversation: Conversation }) {
  const now = useNow(30_000);
  const win = replyWindow(conversation.channel, conversation.last_inbound_at, now);
  return (
    <section className="panel reply" aria-labelledby="reply-heading">
      <h3 id="reply-heading">Reply</h3>
      {win.free ? (
        <p className="hint">
          {win.tagged
            ? `The 24-hour window has passed: your reply goes with Meta’s human-agent tag, possible until ${dateTime(win.closesAt.toISOString())}.`
            : `Free text is possible until ${dateTime(win.closesAt.toISOString())} (24 hours after the customer’s last message).`}
        </p>
      ) : null}
      <TextReply conversation={conversation} disabledReason={win.free ? null : win.reason} />
      {win.free
        ? conversation.channel === 'whatsapp' && (
            <details className="template-details">
              <summary>Send a template instead</summary>
              <TemplateForm conversation={conversation} />
            </details>
          )
        : win.templates && (
            <>
              <h4>Send an approved template</h4>
              <TemplateForm conversation={conversation} />
            </>
          )}
    </section>
  );
}

function TextReply({
  conversation,
  disabledReason,
}: {
  conversation: Conversation;
  disabledReason: string | null;
}) {
  const id = useId();
  const send = useSend(conversation);
  const { register, handleSubmit, reset } = useForm<{ text: string }>({ defaultValues: { text: '' } });
  const disabled = disabledReason !== null;
  // The typed text stays on any error; it is cleared only once the service took the message.
  const submit = handleSubmit(({ text }) => {
    if (!text.trim()) return;
    send.mutate({ text: text.trim() }, { onSuccess: () => reset({ text: '' }) });
  });
  return (
    <form className="reply-form" onSubmit={submit}>
      <div className="field">
        <label htmlFor={id}>Message</label>
        <textarea
          id={id}
          rows={3}
          disabled={disabled}
          aria-describedby={disabled ? `${id}-why` : undefined}
          {...register('text')}
          onKeyDown={(e) => {
            // Ctrl/⌘+Enter sends, as in most messaging apps; plain Enter makes a new line.
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit();
          }}
        />
        {disabled && (
          <small id={`${id}-why`} className="hint">
            {disabledReason}
          </small>
        )}
      </div>
      <ErrorNote error={send.error} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={disabled || send.isPending}>
          {send.isPending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </form>
  );
}
