"""The official Python MCP SDK as an OAuth client: told nothing but the server's URL and
its own client credentials at the provider, it follows the server's 401 to the protected
resource metadata (RFC 9728), from there to the provider's metadata, gets a token for this
resource (RFC 8707 `resource`) by client credentials, and calls one tool, accepting every
elicitation. A token held from before may be given: the SDK sends it first.

Usage: oauth.py URL ISSUER CLIENT TOOL ARGS_JSON [HELD_TOKEN HELD_SCOPE]

Prints one JSON object: the tool's result (whether it is an error, its text, how many
elicitations were asked), the scope of the token the SDK ended with, and every HTTP
exchange in order (method, URL, status, the challenge of a refusal, and for a token
request the `resource` and `scope` it asked for; never a secret). A flow the SDK gives up
on prints the error instead of the result.
"""

import json
import sys
from urllib.parse import parse_qs

import anyio

from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthToken

from oauth_session import Memory, call


async def main(url, issuer, client, tool, args, held_token=None, held_scope=None):
    held = None
    if held_token:
        held = OAuthToken(access_token=held_token, scope=held_scope or None)
    storage = Memory(held)
    auth = ClientCredentialsOAuthProvider(
        server_url=url,
        storage=storage,
        client_id=client,
        client_secret=f"{client}-secret",
        token_endpoint_auth_method="client_secret_post",
        issuer=issuer,
    )
    exchanges = []

    async def sent(response):
        request = response.request
        seen = {"method": request.method, "url": str(request.url), "status": response.status_code}
        challenge = response.headers.get("www-authenticate")
        if challenge and response.status_code in (401, 403):
            seen["challenge"] = challenge
        if request.url.path.endswith("/token"):
            form = parse_qs(request.content.decode())
            seen["resource"] = form.get("resource", [None])[0]
            seen["scope"] = form.get("scope", [None])[0]
        exchanges.append(seen)

    outcome = await call(url, auth, storage, tool, args, on_response=sent)
    outcome["exchanges"] = exchanges
    print(json.dumps(outcome))


anyio.run(main, *sys.argv[1:8])
