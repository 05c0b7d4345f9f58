// The fake Graph API for tests. It lives in src/dev/fake-graph/ because `svc dev fake-graph` serves
// it too, and the CLI ships with src/ (test/ is not part of what runs in production); tests import
// it from here so they read as using a fake. docs/graph-api.md describes it.
export {
  type FailKind,
  type FakeChannel,
  type FakeGraph,
  type FakeGraphAccount,
  type FakeGraphOptions,
  type FakeOAuthApps,
  type FakePerson,
  type Fault,
  type RecordedRequest,
  startFakeGraph,
} from '../../../src/dev/fake-graph/server.ts';
