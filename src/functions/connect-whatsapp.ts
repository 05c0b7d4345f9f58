import { createRoute, z } from '@hono/zod-openapi';
import { exchangeCode, subscribeApp, wabaPhoneNumbers } from '../channels/meta-oauth.ts';
import { notConfirmed } from '../channels/meta-oauth-http.ts';
import { saveProof } from '../domain/connected-accounts.ts';
import { errorResponses, jsonBody, jsonResponse, newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import {
  ConnectedSchema,
  connectedJson,
  metaConfig,
  requireConfigured,
  SignInBody,
  takeSignIn,
} from './connect-sign-in.ts';

// "Connect WhatsApp" (Embedded Signup), after the popup: POST /functions/v1/connect-whatsapp with
// the code and state the popup's redirect brought and the ids Meta's session-info message gave
// (waba_id, phone_number_id). The code becomes the business token; the number must be one of the
// WhatsApp Business Account's numbers read with that token (else nothing is connected); the app is
// subscribed to the account's webhooks; then the number is connected.

const Id = z
  .string()
  .trim()
  .regex(/^\d{1,30}$/, 'must be the numeric id Meta sent');

const route = createRoute({
  method: 'post',
  path: '/connect-whatsapp',
  summary: 'Finish WhatsApp Embedded Signup: connect the number it set up (owners and admins)',
  description:
    '`waba_id` and `phone_number_id` come from Embedded Signup’s session-info message. 400 `invalid_state`, ' +
    '400 `sign_in_cancelled`, 403 `account_not_verified` (Meta refused the code, or the number is not the ' +
    'account’s), 502 `provider_error`.',
  request: jsonBody(
    z
      .object({ waba_id: Id.optional(), phone_number_id: Id.optional() })
      .and(SignInBody)
      .refine((b) => b.error !== undefined || (b.waba_id && b.phone_number_id), {
        message: 'Embedded Signup finished without a WhatsApp Business Account and phone number',
        path: ['phone_number_id'],
      }),
  ),
  responses: { 201: jsonResponse(ConnectedSchema, 'Connected'), ...errorResponses(400, 401, 403, 409, 502) },
});

export function connectWhatsApp(s: Services) {
  return newRouter().openapi(route, async (c) => {
    requireConfigured(s, 'whatsapp');
    const principal = c.get('principal');
    const body = c.req.valid('json');
    const { code, redirect_uri } = await takeSignIn(s, principal, 'whatsapp', body);
    const waba = body.waba_id as string;
    const phoneId = body.phone_number_id as string;
    // Outside calls, no transaction open.
    const config = metaConfig(s);
    const business = await exchangeCode(config, 'whatsapp', code, redirect_uri);
    const numbers = await wabaPhoneNumbers(config, waba, business.access_token);
    const number = numbers.find((n) => n.id === phoneId);
    if (!number)
      throw notConfirmed(
        'whatsapp',
        `GET /${waba}/phone_numbers with the business token`,
        null,
        `phone number ${phoneId}`,
      );
    await subscribeApp(config, 'whatsapp', waba, business.access_token);
    const expires = business.expires_in ? new Date(Date.now() + business.expires_in * 1000) : null;
    const account = await saveProof(s, principal, {
      provider: 'whatsapp',
      external_id: number.id,
      name: number.verified_name ?? number.display_phone_number,
      access_token: business.access_token,
      webhook_secret: null,
      token_expires_at: expires,
      verified_by: 'oauth',
    });
    return c.json(connectedJson([{ account, expires }]), 201);
  });
}
