import { z } from '@hono/zod-openapi';
import type { MetaOAuthConfig } from '../channels/meta-oauth.ts';
import type { InstagramLoginConfig } from '../channels/meta-oauth-instagram.ts';
import { invalidConnectState, takeConnect } from '../domain/connect-state.ts';
import type { ConnectedAccount } from '../domain/connected-accounts.ts';
import type { Principal } from '../platform/db/database.ts';
import { AppError } from '../platform/errors.ts';
import type { Services } from '../services.ts';

// What the Meta sign-in functions share (docs/connecting-accounts.md): which sign-ins are
// configured (and, when one is not, the sentence saying what the operator must set), the dashboard
// address Meta sends the browser back to, the body the dashboard posts from there, and the state
// taken once from it. A sign-in's state carries its step ('dialog' or 'pick') so a state from one
// step never serves another.

export type SignIn = 'facebook' | 'whatsapp' | 'instagram';
export const SIGN_INS: SignIn[] = ['facebook', 'whatsapp', 'instagram'];

/** The dashboard route the provider sends the browser back to (register it at Meta). */
export const redirectUriOf = (s: Services, provider: SignIn) =>
  `${s.config.siteUrl ?? s.publicUrl}/app/accounts/connect/${provider}`;

/** What is missing for a sign-in, as the operator names it in the environment; empty when none. */
export function missingFor(s: Services, provider: SignIn): string[] {
  const { metaLogin: m, instagramLogin: i } = s.config;
  if (provider === 'instagram')
    return [!i.appId && 'INSTAGRAM_APP_ID', !i.appSecret && 'INSTAGRAM_APP_SECRET'].filter(
      Boolean,
    ) as string[];
  return [
    !m.appId && 'META_APP_ID',
    !m.appSecret && 'META_APP_SECRET',
    provider === 'whatsapp' && !m.whatsappConfigId && 'META_WHATSAPP_CONFIG_ID',
  ].filter(Boolean) as string[];
}

const LABEL: Record<SignIn, string> = {
  facebook: 'Connecting with Facebook',
  whatsapp: 'Connecting WhatsApp',
  instagram: 'Connecting Instagram',
};

/** The sentence a shop owner reads when a sign-in is not configured. */
export const notConfiguredMessage = (provider: SignIn, missing: string[]) =>
  `${LABEL[provider]} is not set up on this service yet: the operator must set ${missing.join(' and ')} (see docs/connecting-accounts.md).`;

/** 409 connect_not_configured: the button cannot work until the operator configures it. */
export function requireConfigured(s: Services, provider: SignIn) {
  const missing = missingFor(s, provider);
  if (missing.length)
    throw new AppError(409, 'connect_not_configured', notConfiguredMessage(provider, missing), {
      provider,
      missing,
    });
}

export function metaConfig(s: Services): MetaOAuthConfig {
  const m = s.config.metaLogin;
  return {
    appId: m.appId ?? '',
    appSecret: m.appSecret ?? '',
    loginConfigId: m.loginConfigId,
    whatsappConfigId: m.whatsappConfigId,
    dialogUrl: m.dialogUrl,
    graphUrl: s.config.graph.url,
    version: s.config.graph.version,
    timeoutMs: s.config.graph.timeoutMs,
  };
}

export function instagramConfig(s: Services): InstagramLoginConfig {
  const i = s.config.instagramLogin;
  return {
    appId: i.appId ?? '',
    appSecret: i.appSecret ?? '',
    authorizeUrl: i.authorizeUrl,
    apiUrl: i.apiUrl,
    graphUrl: s.config.graph.instagramUrl,
    version: s.config.graph.version,
    timeoutMs: s.config.graph.timeoutMs,
  };
}

const State = z.string().min(1).max(200);

/** What the dashboard posts from the redirect: the code, or the error Meta sent instead. */
export const SignInBody = z
  .strictObject({
    state: State,
    code: z.string().min(1).max(2000).optional(),
    error: z.string().min(1).max(200).optional(),
    error_description: z.string().max(1000).optional(),
  })
  .refine((b) => (b.code === undefined) !== (b.error === undefined), {
    message: 'Send the code Meta gave, or the error it sent instead',
    path: ['code'],
  });

export type DialogState = { step: 'dialog'; redirect_uri: string };

/**
 * Takes the dialog's state (once, only by the person who started it, in the same organization)
 * and gives the code; a sign-in the person cancelled at Meta spends its state and says so.
 */
export async function takeSignIn(
  s: Services,
  principal: Principal,
  provider: SignIn,
  body: z.infer<typeof SignInBody>,
): Promise<{ code: string; redirect_uri: string }> {
  const data = await takeConnect<DialogState | null>(s, principal, provider, body.state);
  if (data?.step !== 'dialog') throw invalidConnectState();
  if (body.error !== undefined || body.code === undefined)
    throw new AppError(
      400,
      'sign_in_cancelled',
      `The sign-in was cancelled at ${provider === 'instagram' ? 'Instagram' : 'Meta'}, so nothing was connected. Connect again when you are ready.`,
      { provider, provider_error: body.error ?? null },
    );
  return { code: body.code, redirect_uri: data.redirect_uri };
}

export const ConnectedSchema = z
  .object({
    accounts: z.array(
      z.object({
        id: z.uuid(),
        provider: z.enum(['facebook', 'whatsapp', 'instagram']),
        external_id: z.string(),
        name: z.string().nullable(),
        token_expires_at: z.string().nullable(),
      }),
    ),
  })
  .openapi('SignInConnected');

/** What a sign-in connected: names and ids, never a token. */
export const connectedJson = (accounts: { account: ConnectedAccount; expires: Date | null }[]) => ({
  accounts: accounts.map(({ account, expires }) => ({
    id: account.id,
    provider: account.provider as SignIn,
    external_id: account.external_id,
    name: account.name,
    token_expires_at: expires ? expires.toISOString() : null,
  })),
});
