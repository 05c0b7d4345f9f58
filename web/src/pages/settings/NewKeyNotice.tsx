import { useState } from 'react';
import { date } from '../../lib/format';
import type { CreatedKey } from './keys';

/**
 * The raw key, shown once: it lives only in the page's memory (never in the query cache or
 * storage), so leaving the page forgets it, as the service does.
 */
export function NewKeyNotice({ created, onDismiss }: { created: CreatedKey; onDismiss(): void }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.api_key);
      setCopied('yes');
    } catch {
      // No clipboard (an insecure origin, or permission refused): the key is selectable text.
      setCopied('no');
    }
  };
  return (
    <section className="panel new-key" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Your new key “{created.name}”</h2>
      <p className="warning" role="alert">
        <strong>Copy this key now: it will not be shown again.</strong> An agent exchanges it at agent-auth
        for a token.
      </p>
      <div className="field">
        <label htmlFor="raw-key">New API key</label>
        <input
          id="raw-key"
          className="raw-key"
          readOnly
          value={created.api_key}
          onFocus={(e) => e.target.select()}
        />
      </div>
      <div className="actions">
        <button type="button" className="primary" onClick={copy}>
          Copy key
        </button>
        <button type="button" onClick={onDismiss}>
          I have stored it
        </button>
      </div>
      {copied === 'yes' && <p role="status">Copied to the clipboard.</p>}
      {copied === 'no' && (
        <p role="status">The browser did not allow copying: select the key above and copy it by hand.</p>
      )}
      <p>
        Scopes asked: {created.scopes.join(', ')} · granted under your plan today:{' '}
        {created.effective_scopes.join(', ') || 'none'} · expires {date(created.expires_at)}
      </p>
      {created.warning && <p className="warning">{created.warning}</p>}
    </section>
  );
}
