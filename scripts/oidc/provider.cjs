// A real OpenID provider for the identity tests: panva's oidc-provider (OpenID certified)
// on a loopback port, issuing JWT access tokens (RFC 9068) for any resource indicator
// (RFC 8707) a client asks for.
//
//   NODE_PATH=target/oidc/node_modules node provider.cjs [PORT]
//                                (or PORT=… in the environment; 0 or none: a free port)
//
// CommonJS so that NODE_PATH finds the packages installed under target/ (ES modules
// resolve from the script's own folder); Node 22 requires the ES-only packages.
// The first line on stdout is the issuer URL; everything else goes to stderr. Clients, all
// with client credentials (secret `<id>-secret`, sent in the body or as HTTP Basic):
//
//   partner  an agent partner's service, in no group
//   alice    alice@shop.example, in finance
//   bob      bob@shop.example, in finance
//
// Their tokens carry `email` and `groups` beside `sub` (the client id), so a resource
// server can name the person from either.
//
// People sign in on the provider's own login form (/interaction/<uid>: fields `login` and
// `password`, button `Sign in`), which checks their password; consent is given at once:
//
//   alice    password `alice-password`, alice@shop.example, in finance
//   bob      password `bob-password`, bob@shop.example, in finance
//   mallory  password `mallory-password`, mallory@shop.example, in no group
//
// Their ID tokens carry `email`, `name` and `groups` (scopes `email`, `profile`, `groups`).
// The inbox page's web client takes the authorization code flow with PKCE (S256 required):
//
//   inbox    secret `inbox-secret` (HTTP Basic); redirect URIs /sign-in/callback and
//            /inbox/sign-in/callback on http://127.0.0.1, any port (a loopback client's
//            port is not compared, RFC 8252 §7.3)
//
// A tool client acting for the person signed in (an MCP client) takes the same flow as a
// public client, PKCE (S256) required; its access tokens carry the person's `email` and
// `groups`:
//
//   tools    no secret; redirect URI /callback on http://127.0.0.1, any port
//
// Beside the provider's own endpoints:
//
//   POST /test/rotate          a new signing key signs from now on; the old ones stay in
//                              the JWKS so tokens they signed still verify, unless
//                              `?retire=1` withdraws them. Answers {"kid": …} of the
//                              new key.
//   GET  /test/public-key.pem  the current signing key's public half (SPKI PEM): what an
//                              attacker would use as an HMAC secret in a key-confusion
//                              forgery.
//   GET  /test/jwks-reads      {"reads": n}: how many times the JWKS was read, so a test
//                              can hold a resource server to its refresh floor.
//   GET  /test/expired-token?client=ID&resource=URI[&scope=S]
//                              {"access_token": …}: the access token the client credentials
//                              of ID would get for URI, as issued two hours ago and expired
//                              an hour ago, signed with the current key: what a client
//                              still holding an old token sends.
//
// They answer loopback callers only.

"use strict";

// oidc-provider says its notices with console.info; stdout carries the issuer URL alone.
console.info = console.log = (...args) => console.error(...args);

const { createServer } = require("node:http");
const { randomBytes } = require("node:crypto");
const { SignJWT, exportJWK, exportSPKI, generateKeyPair, importJWK } = require("jose");
const Provider = require("oidc-provider").default;

const ALG = "RS256";
// What a resource server may ask a client to hold: calling an agent, reading and
// answering the inbox.
const SCOPES = "agent:call inbox:read inbox:answer";

const people = {
  partner: { email: "partner@agents.example", groups: [] },
  alice: { email: "alice@shop.example", groups: ["finance"] },
  bob: { email: "bob@shop.example", groups: ["finance"] },
};

// The people who sign in interactively, by login.
const accounts = {
  alice: { email: "alice@shop.example", name: "Alice", groups: ["finance"] },
  bob: { email: "bob@shop.example", name: "Bob", groups: ["finance"] },
  mallory: { email: "mallory@shop.example", name: "Mallory", groups: [] },
};

// The inbox page: a confidential client on loopback. `native` is what lets its redirect
// URIs match on any port; it still authenticates with its secret.
const INBOX_CLIENT = {
  client_id: "inbox",
  client_secret: "inbox-secret",
  application_type: "native",
  grant_types: ["authorization_code"],
  response_types: ["code"],
  redirect_uris: [
    "http://127.0.0.1/sign-in/callback",
    "http://127.0.0.1/inbox/sign-in/callback",
  ],
  token_endpoint_auth_method: "client_secret_basic",
  scope: "openid email profile groups",
};

// A tool client (an MCP client) acting for the person signed in: public, so PKCE is
// required; its redirect URI on loopback, any port.
const TOOLS_CLIENT = {
  client_id: "tools",
  application_type: "native",
  grant_types: ["authorization_code"],
  response_types: ["code"],
  redirect_uris: ["http://127.0.0.1/callback"],
  token_endpoint_auth_method: "none",
  scope: `openid ${SCOPES}`,
};

const port = Number(process.argv[2] ?? process.env.PORT ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`not a port: ${process.argv[2] ?? process.env.PORT}`);
  process.exit(2);
}

// Newest first: the provider signs with the first key of the algorithm it uses.
const keys = [];
let publicPem = "";

async function addKey(retire) {
  if (retire) keys.length = 0;
  const { privateKey, publicKey } = await generateKeyPair(ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  jwk.kid = `key-${keys.length + 1}-${randomBytes(4).toString("hex")}`;
  jwk.alg = ALG;
  jwk.use = "sig";
  keys.unshift(jwk);
  publicPem = await exportSPKI(publicKey);
  return jwk.kid;
}

function configuration() {
  return {
    clients: [
      ...Object.keys(people).map((id) => ({
        client_id: id,
        client_secret: `${id}-secret`,
        grant_types: ["client_credentials"],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: "client_secret_post",
        scope: SCOPES,
      })),
      INBOX_CLIENT,
      TOOLS_CLIENT,
    ],
    clientDefaults: { token_endpoint_auth_method: "client_secret_post" },
    scopes: ["openid", "offline_access", "email", "profile", "groups", ...SCOPES.split(" ")],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name"],
      groups: ["groups"],
    },
    // The ID token carries the claims its scopes grant, not only the userinfo endpoint.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({ sub: id, email_verified: true, ...account }),
      };
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: {
      required: (_ctx, client) =>
        client.clientId === INBOX_CLIENT.client_id || client.clientAuthMethod === "none",
    },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    jwks: { keys },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: SCOPES,
          audience: resource,
          accessTokenTTL: 300,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: ALG } },
        }),
      },
    },
    extraTokenClaims: (_ctx, token) => {
      // A person's token names them; a client's own (client credentials) names the client's.
      const person = token.accountId ? accounts[token.accountId] : people[token.clientId];
      return person ? { email: person.email, groups: person.groups } : undefined;
    },
  };
}

let provider;
let issuer;
let jwksReads = 0;

function rebuild() {
  provider = new Provider(issuer, configuration());
  provider.on("server_error", (_ctx, err) => console.error("server_error", err));
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function loginForm(res, uid, status, problem) {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
  res.end(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body><h1>Sign in to the test provider</h1>${problem ? `<p id="problem">${escapeHtml(problem)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}">
<label>Login <input id="login" name="login" autocomplete="off" required></label>
<label>Password <input id="password" type="password" name="password" required></label>
<button id="sign-in" type="submit">Sign in</button>
</form></body></html>`);
}

async function readForm(req) {
  let body = "";
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 8192) throw new Error("form too large");
  }
  return new URLSearchParams(body);
}

// The login form, and consent given at once to whatever a client asks.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { uid, prompt, params, session } = details;
  if (prompt.name === "consent") {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  if (req.method === "GET") {
    loginForm(res, uid, 200);
    return;
  }
  const form = await readForm(req);
  const login = form.get("login") ?? "";
  if (!Object.hasOwn(accounts, login) || form.get("password") !== `${login}-password`) {
    loginForm(res, uid, 401, "Wrong login or password.");
    return;
  }
  await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
}

function loopback(req) {
  const from = req.socket.remoteAddress ?? "";
  return from === "127.0.0.1" || from === "::1" || from === "::ffff:127.0.0.1";
}

// The claims the provider's own JWT access tokens carry (RFC 9068), with times two hours
// back, signed as it signs them.
async function expiredToken(asked) {
  const client = asked.get("client");
  const resource = asked.get("resource");
  const person = people[client];
  if (!person || !resource) return undefined;
  const now = Math.floor(Date.now() / 1000);
  const { kid } = keys[0];
  const key = await importJWK(keys[0], ALG);
  return new SignJWT({
    client_id: client,
    scope: asked.get("scope") ?? SCOPES,
    email: person.email,
    groups: person.groups,
    jti: randomBytes(16).toString("hex"),
  })
    .setProtectedHeader({ alg: ALG, typ: "at+jwt", kid })
    .setIssuer(issuer)
    .setSubject(client)
    .setAudience(resource)
    .setIssuedAt(now - 7200)
    .setExpirationTime(now - 3600)
    .sign(key);
}

const server = createServer((req, res) => {
  const path = new URL(req.url ?? "/", issuer).pathname;
  if (path.startsWith("/test/")) {
    if (!loopback(req)) {
      res.writeHead(403).end();
      return;
    }
    if (req.method === "POST" && path === "/test/rotate") {
      const retire = new URL(req.url ?? "/", issuer).searchParams.get("retire") === "1";
      addKey(retire).then(
        (kid) => {
          rebuild();
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ kid }));
        },
        (err) => {
          console.error("rotation failed", err);
          res.writeHead(500).end();
        },
      );
      return;
    }
    if (req.method === "GET" && path === "/test/jwks-reads") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ reads: jwksReads }));
      return;
    }
    if (req.method === "GET" && path === "/test/expired-token") {
      const asked = new URL(req.url ?? "/", issuer).searchParams;
      expiredToken(asked).then(
        (token) => {
          res.writeHead(token ? 200 : 400, { "content-type": "application/json" });
          res.end(JSON.stringify(token ? { access_token: token } : { error: "client and resource" }));
        },
        (err) => {
          console.error("the expired token was not made", err);
          res.writeHead(500).end();
        },
      );
      return;
    }
    if (req.method === "GET" && path === "/test/public-key.pem") {
      res.writeHead(200, { "content-type": "application/x-pem-file" });
      res.end(publicPem);
      return;
    }
    res.writeHead(404).end();
    return;
  }
  if (path === "/jwks") jwksReads += 1;
  if (path.startsWith("/interaction/") && (req.method === "GET" || req.method === "POST")) {
    interaction(req, res).catch((err) => {
      console.error("interaction failed", err);
      if (!res.headersSent) res.writeHead(400, { "content-type": "text/plain" });
      res.end("This sign-in cannot go on: start again from the application.");
    });
    return;
  }
  provider.callback()(req, res);
});

server.listen(port, "127.0.0.1", async () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  await addKey();
  rebuild();
  process.stdout.write(`${issuer}\n`);
});

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
