// What bench/messages.ts, its service process and its bare baseline share: the connected number,
// its token at the fake Graph API, the recipient, and what the service tells the baseline.
export const PHONE_ID = '106540352242922';
export const GRAPH_TOKEN = 'EAAG-bench-token';
export const RECIPIENT = '+16505551234';

export type SendsInfo = {
  url: string;
  anonKey: string;
  accessToken: string;
  jwks: { keys: object[] };
  org: string;
  accountId: string;
  conversationId: string;
  /** pg-boss's insert of one send-message job: its text and the JSON of its one record. */
  jobInsert: { text: string; record: Record<string, unknown> };
};
