import { authenticate } from '../platform/http/authenticate.ts';
import { newRouter } from '../platform/http/openapi.ts';
import type { Services } from '../services.ts';
import { organizationCreate } from './organization-create.ts';
import { organizationMembers } from './organization-members.ts';
import { organizationPlan } from './organization-plan.ts';
import { organizationSwitch } from './organization-switch.ts';

/** /functions/v1/<name>: one file per function. */
export function functionRoutes(s: Services) {
  const app = newRouter();
  const signedIn = authenticate(s.tokens, { required: true });
  for (const name of [
    'organization-create',
    'organization-members',
    'organization-switch',
    'organization-plan',
  ]) {
    app.use(`/${name}`, signedIn);
  }
  for (const r of [
    organizationCreate(s),
    organizationMembers(s),
    organizationSwitch(s),
    organizationPlan(s),
  ]) {
    app.route('/', r);
  }
  return app;
}
