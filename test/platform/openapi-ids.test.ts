// The OpenAPI document builder (platform/http/openapi.ts) on its own: ids derived from routes,
// and a clash refused when the document is built rather than shipped.
import { createRoute, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { jsonResponse, newRouter, openApiDocument, operationIdOf } from '../../src/platform/http/openapi.ts';

describe('operationIdOf', () => {
  it.each([
    ['post', '/functions/v1/agent-auth', 'postFunctionsAgentAuth'],
    ['get', '/auth/v1/user', 'getAuthUser'],
    ['get', '/auth/v1/.well-known/jwks.json', 'getAuthWellKnownJwksJson'],
    ['delete', '/rest/v1/orders/{id}', 'deleteRestOrdersId'],
  ])('%s %s → %s', (method, path, id) => {
    expect(operationIdOf(method, path)).toBe(id);
  });
});

const route = (method: 'get' | 'post', path: string, operationId?: string) =>
  createRoute({ method, path, operationId, responses: { 200: jsonResponse(z.object({}), 'ok') } });
const config = { openapi: '3.1.0', info: { title: 't', version: '1' } };

describe('openApiDocument', () => {
  it('keeps an operationId a route declares and refuses two operations with one id', () => {
    const app = newRouter();
    app.openapi(route('get', '/a', 'custom'), (c) => c.json({}, 200));
    app.openapi(route('post', '/a'), (c) => c.json({}, 200));
    const doc = openApiDocument(app, config, () => [{ bearer: [] }]);
    expect(doc.paths?.['/a']?.get?.operationId).toBe('custom');
    expect(doc.paths?.['/a']?.post?.operationId).toBe('postA');
    expect(doc.paths?.['/a']?.post?.responses?.['401']).toBeDefined();
    expect(doc.components?.schemas).toHaveProperty('Error');

    app.openapi(route('get', '/b', 'postA'), (c) => c.json({}, 200));
    expect(() => openApiDocument(app, config, () => [])).toThrow(/operationId postA of get \/b is taken/);
  });
});
