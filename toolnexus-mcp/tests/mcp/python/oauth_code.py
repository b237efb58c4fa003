"""The official Python MCP SDK as an OAuth client acting for a person: the authorization
code flow with PKCE, a public client registered beforehand at the provider. From the
server's 401 it finds the resource metadata and the provider, sends the person to the
provider's authorization endpoint with the RFC 8707 `resource`, and exchanges the code
for a token. The person's part is played headlessly: the browser the SDK would open is an
HTTP client that follows the redirects and fills in the provider's login form.

Usage: oauth_code.py URL CLIENT_ID REDIRECT_URI LOGIN PASSWORD TOOL ARGS_JSON

Prints one JSON object: the tool's result (whether it is an error, its text, how many
elicitations were asked), the scope of the token the SDK ended with, and the
authorization request's `resource`, `scope` and `code_challenge_method`; or the error that
stopped the flow.
"""

import json
import sys
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from oauth_session import Memory, call


class Person:
    """The browser: follows the provider's redirects and signs in on its form, until the
    provider sends it to the redirect URI, whose query is the authorization response."""

    def __init__(self, redirect_uri, login, password):
        self.redirect_uri = redirect_uri
        self.login = login
        self.password = password
        self.asked = None
        self.response = None

    async def open(self, url):
        self.asked = parse_qs(urlparse(url).query)
        async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as browser:
            response = await browser.get(url)
            for _ in range(20):
                if response.status_code in (301, 302, 303, 307, 308):
                    target = urljoin(str(response.url), response.headers["location"])
                    if target.startswith(self.redirect_uri):
                        self.response = parse_qs(urlparse(target).query)
                        return
                    response = await browser.get(target)
                elif response.status_code == 200 and 'name="password"' in response.text:
                    form = {"login": self.login, "password": self.password}
                    response = await browser.post(str(response.url), data=form)
                else:
                    raise RuntimeError(f"the provider answered {response.status_code}: {response.text[:300]}")
        raise RuntimeError("the provider never sent the browser back")

    async def callback(self):
        one = lambda name: (self.response.get(name) or [None])[0]
        if one("error"):
            raise RuntimeError(f"the provider refused: {one('error')}: {one('error_description')}")
        return AuthorizationCodeResult(code=one("code"), state=one("state"), iss=one("iss"))


async def main(url, client_id, redirect_uri, login, password, tool, args):
    registered = OAuthClientInformationFull(
        client_id=client_id,
        redirect_uris=[redirect_uri],
        grant_types=["authorization_code"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    metadata = OAuthClientMetadata(
        redirect_uris=[redirect_uri],
        grant_types=["authorization_code"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    person = Person(redirect_uri, login, password)
    storage = Memory(client=registered)
    auth = OAuthClientProvider(url, metadata, storage, person.open, person.callback)
    outcome = await call(url, auth, storage, tool, args)
    if person.asked:
        outcome["authorization"] = {
            name: (person.asked.get(name) or [None])[0]
            for name in ("resource", "scope", "code_challenge_method")
        }
    print(json.dumps(outcome))


anyio.run(main, *sys.argv[1:8])
