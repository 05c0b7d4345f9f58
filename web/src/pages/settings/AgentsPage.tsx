import './settings.css';
import { useState } from 'react';
import { Page } from '../../ui/Page';
import { AuthAttempts } from './AuthAttempts';
import { KeyCreateForm } from './KeyCreateForm';
import { KeyList } from './KeyList';
import type { CreatedKey } from './keys';
import { ManagersOnly } from './ManagersOnly';
import { NewKeyNotice } from './NewKeyNotice';

function AgentsAndKeys() {
  const [created, setCreated] = useState<CreatedKey | null>(null);
  return (
    <Page title="Agents and keys">
      <p className="hint">
        An agent exchanges its key at agent-auth for a token. An MCP client (Claude, ChatGPT, VS Code,
        Cursor…) can instead sign in at the MCP server’s address: once a person allows it, it is listed here
        as a connected app, takes an agent seat and is revoked like a key. Scopes are capped by the plan at
        every exchange.
      </p>
      {created && <NewKeyNotice created={created} onDismiss={() => setCreated(null)} />}
      <section className="panel" aria-labelledby="new-key-form">
        <h2 id="new-key-form">New key</h2>
        <KeyCreateForm onCreated={setCreated} />
      </section>
      <KeyList />
      <AuthAttempts />
    </Page>
  );
}

export function AgentsPage() {
  return (
    <ManagersOnly title="Agents and keys" refusal="Only owners and admins manage keys.">
      <AgentsAndKeys />
    </ManagersOnly>
  );
}
