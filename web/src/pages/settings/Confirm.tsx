import { useState } from 'react';

/**
 * A destructive action asked twice: the first click shows what will happen and a confirming
 * button, inline (no browser dialog, which would block the page and cannot be styled).
 */
export function ConfirmButton({
  label,
  name,
  question,
  confirmLabel,
  pending,
  onConfirm,
}: {
  /** The visible word ("Remove"); `name` says what it acts on, for screen readers and tests. */
  label: string;
  name: string;
  question: string;
  confirmLabel: string;
  pending?: boolean;
  onConfirm(): void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" aria-label={name} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm">
      <span>{question}</span>{' '}
      <button type="button" className="danger" disabled={pending} onClick={onConfirm}>
        {confirmLabel}
      </button>{' '}
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
