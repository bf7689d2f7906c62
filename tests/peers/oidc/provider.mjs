// oidc-provider (npm; panva's OpenID Certified server) as the authorization server of
// mcp_nb's interop tests: a server no one here wrote, configured the way a deployment in
// front of an MCP server would be, and nothing more.
//
//   node provider.mjs SETTINGS.json
//
// SETTINGS.json (written by tests/oidc_support.py):
//   module          absolute path of the installed oidc-provider package's entry point
//   profile         "default": the package's own defaults (DPoP on, PKCE for public clients,
//                   its refresh-token rotation policy, one-hour access tokens);
//                   "strict": PKCE for every client, refresh tokens rotated on each use,
//                   access tokens that live `access_token_ttl` seconds
//   access_token_ttl  seconds (strict profile only)
//   resources_file  JSON list of the resource URLs tokens may be issued for; read on each
//                   request, because the resource servers get their ports after this one
//   clients         pre-registered clients (OAuth client metadata, as oidc-provider takes it)
//
// It listens on 127.0.0.1 on a port the OS picks, and its first line on stdout says where:
//   oidc-provider listening on http://127.0.0.1:PORT
// The issuer is that URL, so it is only known once the port is.
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const settings = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { default: Provider, errors } = await import(pathToFileURL(settings.module).href);
const strict = settings.profile === 'strict';

// The provider's signing keys, made fresh for each run (never a checked-in private key):
// RSA for ID tokens (RS256 is the OpenID default), EC for the JWT access tokens.
function privateJwk(type, options, kid) {
  const { privateKey } = generateKeyPairSync(type, options);
  return { ...privateKey.export({ format: 'jwk' }), kid, use: 'sig' };
}
const jwks = {
  keys: [
    privateJwk('ec', { namedCurve: 'P-256' }, 'access-tokens-es256'),
    privateJwk('rsa', { modulusLength: 2048 }, 'id-tokens-rs256'),
  ],
};

function knownResources() {
  return JSON.parse(readFileSync(settings.resources_file, 'utf8'));
}

const configuration = {
  jwks,
  clients: settings.clients,
  // The MCP server's scope is listed beside the OpenID ones so a client may register with
  // it (RFC 7591 "scope"; oidc-provider checks a registration's scopes against this list,
  // and the SDK's client registers with the scopes the resource metadata names).
  scopes: ['openid', 'offline_access', 'mcp'],
  // Any login the development login form accepts is an account whose only claim is sub.
  async findAccount(ctx, sub) {
    return { accountId: sub, async claims() { return { sub }; } };
  },
  features: {
    // oidc-provider's own login and consent pages (the tests drive these forms over HTTP,
    // as a person's browser would). On by default; named because the tests depend on it.
    devInteractions: { enabled: true },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // RFC 8707: a token is for one MCP server, in its audience; an unknown resource is
      // refused (invalid_target) rather than given a token some other server would take.
      async getResourceServerInfo(ctx, indicator) {
        if (!knownResources().includes(indicator)) {
          throw new errors.InvalidTarget(`${indicator} is not a resource of this server`);
        }
        return {
          scope: 'mcp',
          audience: indicator,
          // RFC 9068 JWT access tokens, which the resource server verifies against this
          // server's JWKS without asking it anything.
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256', kid: 'access-tokens-es256' } },
          ...(strict ? { accessTokenTTL: settings.access_token_ttl } : {}),
        };
      },
    },
    // CIMD (draft-ietf-oauth-client-id-metadata-document), experimental in oidc-provider 9:
    // the ack pins the draft this version implements (a newer draft fails loudly at start).
    clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
  },
  // oidc-provider fetches client metadata documents only from public addresses (its SSRF
  // guard is the dispatcher it hands to fetch). Every peer of these tests is on loopback,
  // so the guard is dropped here, and only here; https is still required.
  async fetch(url, { dispatcher, ...options }) {
    return globalThis.fetch(url, options);
  },
};

if (strict) {
  Object.assign(configuration, {
    // PKCE for every client, confidential ones too (the default asks it of public ones).
    pkce: { required: () => true },
    // Each refresh consumes the refresh token and issues a new one; presenting a consumed
    // one revokes the whole grant.
    rotateRefreshToken: true,
  });
}

const server = createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, configuration);
  server.on('request', provider.callback());
  process.stdout.write(`oidc-provider listening on ${issuer}\n`);
});

// A SIGTERM from the tests ends the process at once (no connections to drain).
process.on('SIGTERM', () => process.exit(0));
