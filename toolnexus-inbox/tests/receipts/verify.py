"""Checks toolnexus receipts without toolnexus: RFC 8785 and Ed25519, from their specs.

Usage: verify.py FILE, where FILE holds {"publicKey": PEM, "receipts": [receipt, ...]}
and, optionally, "answers": [{"data": value} or {}, ...], one per receipt: the data each
answer carried (or none), which the receipt's answer.data must be the digest of.
Prints one line per receipt ("ok N" or "FAIL N: why") and exits 1 when any fails.
"""

import base64
import json
import math
import os
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def number(value):
    """ECMAScript's Number.prototype.toString for a double (ECMA-262 7.1.12.1)."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("JSON has no NaN or Infinity")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that read back to the same double.
    mantissa, _, exponent = ("%r" % abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    if fraction == "0":
        fraction = ""
    digits = (whole + fraction).lstrip("0")
    point = len(whole) + (int(exponent) if exponent else 0)
    if whole == "0":
        # 0.000ddd: the leading zeros of the fraction move the point left.
        point -= len(fraction) - len(fraction.lstrip("0")) + 1
    digits = digits.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + text


SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def string(text):
    out = ['"']
    for ch in text:
        if ch in SHORT:
            out.append(SHORT[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jcs(value):
    """RFC 8785: the canonical text of a JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        # Every integer with all its digits: up to 2**53 that is what a double prints, and
        # beyond it rounding would give two integers one text.
        return str(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, str):
        return string(value)
    if isinstance(value, list):
        return "[" + ",".join(jcs(item) for item in value) + "]"
    if isinstance(value, dict):
        # Members sorted by their names' UTF-16 code units: big-endian UTF-16 bytes
        # compare in that order.
        names = sorted(value, key=lambda name: name.encode("utf-16-be"))
        return "{" + ",".join(string(name) + ":" + jcs(value[name]) for name in names) + "}"
    raise TypeError("not JSON: %r" % (value,))


def key_id(public_key):
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    digest = hashes.Hash(hashes.SHA256())
    digest.update(raw)
    return "ed25519:" + digest.finalize().hex()[:16]


def unbase64url(text):
    if not isinstance(text, str) or any(c in text for c in "+/="):
        raise ValueError("not base64url without padding")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def data_digest(data):
    digest = hashes.Hash(hashes.SHA256())
    digest.update(jcs(data).encode("utf-8"))
    return "sha256:" + digest.finalize().hex()


def check(receipt, public_key, answer):
    if receipt.get("v") not in (1, 2):
        raise ValueError("version %r" % (receipt.get("v"),))
    if receipt.get("key") != key_id(public_key):
        raise ValueError("signed by key %r, not %r" % (receipt.get("key"), key_id(public_key)))
    signed = {name: value for name, value in receipt.items() if name != "signature"}
    signature = unbase64url(receipt.get("signature"))
    try:
        public_key.verify(signature, jcs(signed).encode("utf-8"))
    except InvalidSignature:
        raise ValueError("the signature does not match")
    if answer is not None:
        stated = receipt["answer"].get("data")
        expected = data_digest(answer["data"]) if "data" in answer else None
        if stated != expected:
            raise ValueError("answer.data is %r, the data's digest is %r" % (stated, expected))


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        document = json.load(f)
    public_key = serialization.load_pem_public_key(document["publicKey"].encode("ascii"))
    if not isinstance(public_key, Ed25519PublicKey):
        print("FAIL: the public key is not Ed25519")
        return 2
    answers = document.get("answers") or [None] * len(document["receipts"])
    failed = 0
    for i, (receipt, answer) in enumerate(zip(document["receipts"], answers)):
        try:
            check(receipt, public_key, answer)
            print("ok %d" % i)
        except Exception as e:  # each receipt's failure is reported, whatever it is
            failed += 1
            print("FAIL %d: %s: %s" % (i, type(e).__name__, e))
    return 1 if failed else 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
